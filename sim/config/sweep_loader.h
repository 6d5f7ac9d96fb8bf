// Loading a sweep YAML (SPEC.md "Sweeps") into a SweepSpec.
//
//   name: NAME
//   base: EXPERIMENT.yaml | {inline experiment mapping}   # a path relative to this file
//   axes:
//     plan.tp: [1, 2, 4, 8]     # dotted key -> list of values (YAML), or
//     plan.pp: auto             # auto (keys: see sweep/enumerate.h)
//
// Each combination of the explicit axes' values is applied to the base as --set
// overrides would be (so any key `meshsim run --set` accepts may be an axis) and decoded,
// without checking the plan: each configuration's plan is checked when it is evaluated.
// Bad input (syntax, unknown keys, a value of the wrong type, auto on a key that has no
// auto) comes back as an InputError naming the sweep file, line, column and dotted key.
#pragma once

#include <string>
#include <vector>

#include "sim/core/status.h"
#include "sim/sweep/sweep_spec.h"

namespace meshsim {

Result<SweepSpec> LoadSweepFile(const std::string& path,
                                const std::vector<std::string>& base_sets = {});
// The same for the YAML `text` of a sweep file at `path`: `path` names it in errors and
// a relative base path resolves against its folder; it is not read and need not exist.
Result<SweepSpec> LoadSweepText(const std::string& text, const std::string& path,
                                const std::vector<std::string>& base_sets = {});

}  // namespace meshsim

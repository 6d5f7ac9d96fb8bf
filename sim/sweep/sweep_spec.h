// A sweep: a base experiment and axes of values for its keys, as read from a sweep YAML
// (SPEC.md "Sweeps"). The config layer resolves every combination of the explicit axes'
// values into an Experiment (a group); Enumerate (enumerate.h) expands the `auto` axes
// of each group into configurations.
#pragma once

#include <string>
#include <vector>

#include "sim/plan/experiment.h"

namespace meshsim {

struct SweepAxis {
  std::string key;                  // dotted experiment key, e.g. "plan.tp"
  bool is_auto = false;             // `auto`: every valid value (enumerate.h)
  std::vector<std::string> values;  // explicit values as written (YAML text); empty if auto
};

// One combination of the explicit axes' values, applied to the base experiment.
struct SweepGroup {
  std::vector<int> choice;  // per axis: index into its values; -1 for auto axes
  Experiment experiment;    // not validated: each configuration is checked on its own
};

struct SweepSpec {
  std::string name;
  std::vector<SweepAxis> axes;
  // Every combination of the explicit axes, the last axis varying fastest.
  std::vector<SweepGroup> groups;
};

}  // namespace meshsim

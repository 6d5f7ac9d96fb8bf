// The operations the Python package calls (meshsim/__init__.py wraps them with the
// public signatures and docstrings). Each converts its arguments, releases the GIL while
// meshsim works, and raises meshsim's errors (errors.h). No simulator logic lives here:
// these are the CLI's compositions of the library, minus its printing.
#pragma once

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "sim/plan/experiment.h"
#include "sim/sweep/enumerate.h"
#include "sim/sweep/planner.h"

namespace meshsim::python {
namespace py = pybind11;

// An experiment from a file, or from YAML `text` standing for a file at `path` (relative
// model and cluster paths resolve against its folder), with --set strings `sets`.
Experiment LoadExperimentFromFile(const std::string& path, const std::vector<std::string>& sets);
Experiment LoadExperimentFromText(const std::string& text, const std::string& path,
                                  const std::vector<std::string>& sets);

// The plan columns of results.csv for `e`'s plan: {"plan.tp": 8, ...}.
py::dict PlanDict(const Experiment& e);

struct RunOptions {
  std::string trace;             // trace file; empty: none; ".gz": gzip
  bool all_ranks = false;        // trace every rank
  std::vector<int> trace_ranks;  // ranks to trace; empty: the CLI's default
  bool full_replay = false;      // SimulationOptions::full_replay
  bool reproducible = false;     // host timings written as 0
};

// Simulates `e` as `meshsim run` does: ([(scalar name, value)...] in summary.json's
// order, summary.json's text).
py::tuple RunExperiment(const Experiment& e, const RunOptions& options);

// A loaded sweep and its configurations.
struct Sweep {
  SweepSpec spec;
  std::vector<Configuration> configs;
};
Sweep LoadSweepFromFile(const std::string& path, const std::vector<std::string>& base_sets);
Sweep LoadSweepFromText(const std::string& text, const std::string& path,
                        const std::vector<std::string>& base_sets);

// Evaluates every configuration on `threads` threads (0: one per core), in order:
// (columns, rows) as rows.h.
py::tuple EvaluateSweep(const Sweep& sweep, int threads);

// The planner, as `meshsim plan`: the model (a file path, or a model mapping's YAML text
// when `model_is_yaml`) on `cluster_path` resized to options.gpus GPUs, with `sets`
// applied. (columns, rows): the valid plans ranked as the CLI's table (those that fit,
// fastest first; then the others, least memory first), then, with `include_invalid`,
// the invalid ones in configuration order.
py::tuple RunPlan(const std::string& model, bool model_is_yaml, const std::string& cluster_path,
                  const PlannerOptions& options, const std::vector<std::string>& sets, int threads,
                  bool include_invalid);

// Indices into `records` (rows under `columns`) of the Pareto front of step time and
// peak memory (`front`), or of the ok rows fastest first; see sweep/analysis.h.
std::vector<size_t> RankRows(const std::vector<std::string>& columns, const py::list& records,
                             bool front);

// `meshsim import hf` on a config.json text: a dict with the model mapping ("model"),
// the model YAML file's text ("yaml"), "warnings", "model_type", "architecture",
// "params_total" and "params_active".
py::dict ImportHf(const std::string& json_text, const std::string& source, const std::string& name,
                  int64_t seq_len);

// A YAML text as Python values (convert.h YamlToPython).
py::object ParseYaml(const std::string& text);

}  // namespace meshsim::python

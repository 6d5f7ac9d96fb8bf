#include "api.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <mutex>
#include <numeric>
#include <thread>

#include "convert.h"
#include "errors.h"
#include "rows.h"
#include "sim/config/import_hf.h"
#include "sim/config/loader.h"
#include "sim/config/sweep_loader.h"
#include "sim/report/chrome_trace.h"
#include "sim/report/summary.h"
#include "sim/sweep/analysis.h"
#include "sim/sweep/runner.h"
#include "sim/workload/param_count.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace meshsim::python {
namespace {

int ThreadCount(int threads) {
  if (threads < 0) Raise(ArgumentError("threads", "expected >= 1 (or None: one per core)"));
  return threads > 0 ? threads : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

// As `meshsim sweep` and `plan` do (cli/sweep_report.h RetainFreedMemory): keep freed
// memory in the heap, since a sweep runs many simulations of similar size in a row.
void RetainFreedMemory() {
#if defined(__GLIBC__)
  static std::once_flag once;
  std::call_once(once, [] {
    mallopt(M_MMAP_THRESHOLD, 1 << 30);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
  });
#endif
}

// The ranks to trace: every rank, the given ones (checked, first occurrence kept), or
// the CLI's default (chrome_trace.h DefaultTraceRanks).
std::vector<int> TraceRanks(const Experiment& e, const RunOptions& o) {
  if (o.trace.empty()) return {};
  const Mesh mesh(e.plan);
  std::vector<int> ranks;
  if (o.all_ranks) {
    ranks.resize(mesh.Size());
    std::iota(ranks.begin(), ranks.end(), 0);
    return ranks;
  }
  if (o.trace_ranks.empty()) return DefaultTraceRanks(mesh);
  std::vector<bool> seen(mesh.Size(), false);
  for (int r : o.trace_ranks) {
    if (r < 0 || r >= mesh.Size()) {
      Raise(ArgumentError("trace_ranks", "rank " + std::to_string(r) + " is outside 0.." +
                                             std::to_string(mesh.Size() - 1)));
    }
    if (!seen[r]) ranks.push_back(r);
    seen[r] = true;
  }
  return ranks;
}

py::list ScalarPairs(const StepSummary& s) {
  py::list out;
  auto add = [&out](std::string_view name, const auto& field, FieldKind) {
    out.append(py::make_tuple(py::str(name.data(), name.size()), ToPython(field)));
  };
  VisitScalarFields(s, add);
  VisitSimFields(s, add);
  return out;
}

// The planner's base experiment, as `meshsim plan` builds it (cli/plan_command.cc).
Experiment PlannerBase(const std::string& model, bool model_is_yaml,
                       const std::string& cluster_path, const PlannerOptions& options,
                       const std::vector<std::string>& sets) {
  if (const Status s = CheckPlannerSets(sets, "meshsim.run"); !s.ok()) Raise(s.error());
  const ClusterSpec cluster = Unwrap(LoadClusterFile(cluster_path));
  std::vector<KeyValue> keys = Unwrap(PlannerKeys(cluster, options));
  if (model_is_yaml) keys.insert(keys.begin(), {"model", model});
  return Unwrap(ComposeExperiment("plan", model_is_yaml ? std::string() : model, cluster_path, keys,
                                  "meshsim.plan", sets));
}

}  // namespace

Experiment LoadExperimentFromFile(const std::string& path, const std::vector<std::string>& sets) {
  py::gil_scoped_release release;
  return Unwrap(LoadExperimentFile(path, sets));
}

Experiment LoadExperimentFromText(const std::string& text, const std::string& path,
                                  const std::vector<std::string>& sets) {
  py::gil_scoped_release release;
  return Unwrap(LoadExperimentText(text, path, sets));
}

py::dict PlanDict(const Experiment& e) {
  py::dict d;
  VisitPlanFields(e.plan, [&d](std::string_view name, const auto& v) {
    d[py::str(name.data(), name.size())] = ToPython(v);
  });
  return d;
}

py::tuple RunExperiment(const Experiment& e, const RunOptions& o) {
  SimulationOptions so;
  so.memory_curve_ranks = TraceRanks(e, o);
  so.full_replay = o.full_replay;
  SummaryOptions summary_options;
  summary_options.reproducible = o.reproducible;
  StepSummary summary;
  std::string json, stall;
  Status written = Ok{};
  {
    py::gil_scoped_release release;
    const std::unique_ptr<Simulation> sim = Simulate(e, so);
    if (sim->replay.completed) {
      summary = SummarizeStep(*sim, summary_options);
      if (!o.trace.empty()) written = WriteChromeTraceFile(*sim, so.memory_curve_ranks, o.trace);
      json = SummaryText(summary);
    } else {
      stall = sim->replay.stall;
    }
  }
  if (json.empty()) {
    InputError err;
    err.kind = ErrorKind::kInternal;
    err.message = "the replay stalled: " + stall;
    Raise(err);
  }
  Check(written);
  return py::make_tuple(ScalarPairs(summary), json);
}

Sweep LoadSweepFromFile(const std::string& path, const std::vector<std::string>& base_sets) {
  py::gil_scoped_release release;
  Sweep s{Unwrap(LoadSweepFile(path, base_sets)), {}};
  s.configs = Enumerate(s.spec);
  return s;
}

Sweep LoadSweepFromText(const std::string& text, const std::string& path,
                        const std::vector<std::string>& base_sets) {
  py::gil_scoped_release release;
  Sweep s{Unwrap(LoadSweepText(text, path, base_sets)), {}};
  s.configs = Enumerate(s.spec);
  return s;
}

py::tuple EvaluateSweep(const Sweep& sweep, int threads) {
  const int workers = ThreadCount(threads);
  RetainFreedMemory();
  ResultTable table;
  table.axis_keys = NonPlanAxisKeys(sweep.spec);
  table.rows.resize(sweep.configs.size());
  std::vector<size_t> todo(sweep.configs.size());
  std::iota(todo.begin(), todo.end(), 0);
  {
    py::gil_scoped_release release;
    EvaluateInOrder(sweep.spec, sweep.configs, todo, workers,
                    [&table](size_t position, ResultRow row, const RowInfo&) {
                      table.rows[position] = std::move(row);
                    });
  }
  return RowsToPython(table, todo);
}

py::tuple RunPlan(const std::string& model, bool model_is_yaml, const std::string& cluster_path,
                  const PlannerOptions& options, const std::vector<std::string>& sets, int threads,
                  bool include_invalid) {
  const int workers = ThreadCount(threads);
  RetainFreedMemory();
  PlannerResult result;
  {
    py::gil_scoped_release release;
    const Experiment base = PlannerBase(model, model_is_yaml, cluster_path, options, sets);
    const PlannerSpace space = MakePlannerSpace(base, options.gpus);
    result = RunPlanner(space, workers);
  }
  std::vector<size_t> rows = result.ranked;
  for (size_t r = 0; include_invalid && r < result.table.rows.size(); ++r) {
    if (result.table.rows[r].status == ConfigStatus::kInvalid) rows.push_back(r);
  }
  return RowsToPython(result.table, rows);
}

std::vector<size_t> RankRows(const std::vector<std::string>& columns, const py::list& records,
                             bool front) {
  const ResultTable table = RowsFromPython(columns, records);
  return front ? ParetoFront(table) : RankByStepTime(table);
}

py::dict ImportHf(const std::string& json_text, const std::string& source, const std::string& name,
                  int64_t seq_len) {
  HfImportOptions options;
  options.source = source;
  options.name = name;
  options.seq_len = seq_len;
  options.command = "meshsim.import_hf(" + source + ")";
  const HfImport imported = Unwrap(ImportHfConfig(json_text, options));
  const ParamCount params = CountParams(imported.model);
  py::dict d;
  d["model"] = YamlToPython(YAML::Load(ModelYamlKeys(imported.model, "")));
  d["yaml"] = HfModelYaml(imported, options);
  d["warnings"] = imported.warnings;
  d["model_type"] = imported.model_type;
  d["architecture"] = imported.architecture;
  d["params_total"] = params.total;
  d["params_active"] = params.active;
  return d;
}

py::object ParseYaml(const std::string& text) { return YamlToPython(YAML::Load(text)); }

}  // namespace meshsim::python

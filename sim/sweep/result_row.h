// One configuration's result, typed, and its results.csv rendering.
//
// results.csv columns, in order: `config` (the configuration index), `status` (ok | oom |
// invalid | error), the sweep's axes that are not plan columns (their value as written;
// a JAX-style plan's mesh sizes plan.mesh.ici.NAME / plan.mesh.dcn.NAME: the size run,
// auto ones included),
// the plan columns (plan.tp ... plan.sequence_parallel, always present so that every row
// says what ran), the memory bound (est_*_gib, for every valid plan) and the budget, the
// step summary's scalars (summary.json's names, nested objects dotted; empty unless
// simulated; the host timings sim.wall_s, sim.events_per_s and sim.peak_rss_mib are left
// out so that the file is deterministic), and `message` (why invalid or oom).
//
// This file holds the one list of columns: ResultColumns names them, FormatRow writes a
// row and ParseRow reads one back (resume and merge), so that a row read back is written
// again byte for byte.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/report/step_summary.h"
#include "sim/sweep/csv.h"
#include "sim/sweep/enumerate.h"
#include "sim/sweep/evaluate.h"
#include "sim/sweep/sweep_spec.h"

namespace meshsim {

// The memory bound of a valid plan, GiB: its total and its split.
struct MemoryEstimateGib {
  double total = 0;
  MemoryGib by_category;
};

// Calls visit(column, field) for each plan column, in PlanColumns' order (results.csv's
// plan columns are these, written and read back by walking this list). P is PlanSpec
// or const PlanSpec.
template <typename P, typename Visit>
void VisitPlanFields(P& p, Visit&& visit) {
  visit("plan.tp", p.tp);
  visit("plan.pp", p.pp);
  visit("plan.dp", p.dp);
  visit("plan.cp", p.cp);
  visit("plan.zero", p.zero);
  visit("plan.micro_batch", p.micro_batch);
  visit("plan.global_batch", p.global_batch);
  visit("plan.schedule", p.schedule);
  visit("plan.virtual_stages", p.virtual_stages);
  visit("plan.recompute", p.recompute);
  visit("plan.sequence_parallel", p.sequence_parallel);
  visit("plan.stage_layers", p.stage_layers);  // "7/8/8/7"; empty: the default split
}

// The same for the memory bound's columns and the budget (all double). R is
// MemoryEstimateGib or const MemoryEstimateGib.
template <typename R, typename Visit>
void VisitEstimateFields(R& est, double& budget, Visit&& visit) {
  visit("est_memory_gib", est.total);
  visit("est_weights_gib", est.by_category.weights);
  visit("est_gradients_gib", est.by_category.gradients);
  visit("est_optimizer_gib", est.by_category.optimizer);
  visit("est_activations_gib", est.by_category.activations);
  visit("est_buffers_gib", est.by_category.buffers);
  visit("budget_gib", budget);
}

struct ResultRow {
  int64_t config = 0;
  ConfigStatus status = ConfigStatus::kInvalid;
  std::vector<std::string> axes;  // the non-plan axes' values as written ("" for auto; mesh
                                  // sizes: the size run)
  PlanSpec plan;                  // the fields of the plan columns (others at defaults)
  std::optional<MemoryEstimateGib> estimate;  // every valid plan
  double budget_gib = 0;
  std::optional<StepSummary> summary;  // simulated plans; scalars only
  std::string message;

  // The memory to show: the simulated peak, else the bound (0 for invalid plans).
  double MemoryGibShown() const;
  const MemoryGib& MemoryBreakdownShown() const;
};

// The rows of a sweep (or of the planner), with the keys of the non-plan axes.
struct ResultTable {
  std::vector<std::string> axis_keys;
  std::vector<ResultRow> rows;
};

// The plan fields every row carries, as column names.
const std::vector<std::string>& PlanColumns();
// The step summary's deterministic scalars, as column names.
std::vector<std::string> SummaryColumns();

// The sweep's non-plan axis keys, in the file's order.
std::vector<std::string> NonPlanAxisKeys(const SweepSpec& spec);
std::vector<std::string> ResultColumns(const std::vector<std::string>& axis_keys);

// The row of configuration `c` evaluated as `ev`.
ResultRow MakeResultRow(const SweepSpec& spec, const Configuration& c, Evaluation ev);

// The cells of `row` under ResultColumns(axis_keys) (row.axes has one per axis key).
CsvRecord FormatRow(const ResultRow& row);
// Reads a record written by FormatRow under `header` (which must be ResultColumns of
// some axis keys); `where` names the record in errors ("results.csv line 7").
Result<ResultRow> ParseRow(const CsvRecord& record, const CsvRecord& header,
                           const std::string& where);

// results.csv text: the header and one line per row.
std::string ResultsCsv(const ResultTable& table, const std::vector<size_t>& rows);
// Reads a results.csv into typed rows; fails on a header that is not a results.csv's or
// a cell that does not parse. `dropped_partial_line` / `complete_bytes` as in CsvText.
struct ParsedResults {
  ResultTable table;
  std::vector<int> lines;  // the line of each row
  uint64_t complete_bytes = 0;
  bool dropped_partial_line = false;
};
Result<ParsedResults> ReadResultsCsv(const std::string& path);

}  // namespace meshsim

#include "sim/sweep/analysis.h"

#include <algorithm>
#include <utility>

#include "sim/plan/plan_names.h"

namespace meshsim {
namespace {

// The simulated rows that fit, fastest first (then less memory, then lower index).
std::vector<size_t> OkRows(const ResultTable& t) {
  std::vector<size_t> rows;
  for (size_t r = 0; r < t.rows.size(); ++r) {
    if (t.rows[r].status == ConfigStatus::kOk && t.rows[r].summary) rows.push_back(r);
  }
  std::sort(rows.begin(), rows.end(), [&t](size_t a, size_t b) {
    const StepSummary& x = *t.rows[a].summary;
    const StepSummary& y = *t.rows[b].summary;
    if (x.step_time_s != y.step_time_s) return x.step_time_s < y.step_time_s;
    if (x.peak_memory_gib != y.peak_memory_gib) return x.peak_memory_gib < y.peak_memory_gib;
    return t.rows[a].config < t.rows[b].config;
  });
  return rows;
}

nlohmann::ordered_json ExplorerRow(const ResultRow& r) {
  nlohmann::ordered_json row;
  const PlanSpec& p = r.plan;
  row["config"] = r.config;
  row["tp"] = p.tp;
  row["pp"] = p.pp;
  row["dp"] = p.dp;
  row["cp"] = p.cp;
  row["ep"] = p.ep;
  row["zero"] = p.zero;
  row["mb"] = p.micro_batch;
  row["schedule"] = NameOf(ScheduleNames(), p.schedule);
  row["v"] = p.virtual_stages;
  row["recompute"] = NameOf(RecomputeNames(), p.recompute);
  row["sp"] = p.sequence_parallel;
  row["status"] = ConfigStatusName(r.status);
  row["simulated"] = r.summary.has_value();
  if (r.summary) {
    row["step"] = r.summary->step_time_s;
    row["mfu"] = r.summary->mfu;
    row["bubble"] = r.summary->bubble_fraction;
    row["tokens_per_s"] = r.summary->tokens_per_s;
  }
  row["memory"] = r.MemoryGibShown();
  const MemoryGib& m = r.MemoryBreakdownShown();
  row["breakdown"] = {m.weights, m.gradients, m.optimizer, m.activations, m.buffers};
  row["budget"] = r.budget_gib;
  row["message"] = r.message;
  return row;
}

}  // namespace

std::vector<size_t> RankByStepTime(const ResultTable& t) { return OkRows(t); }

std::vector<size_t> ParetoFront(const ResultTable& t) {
  // Sorted by step time (then memory): a row is on the front iff its memory is below
  // that of every faster row.
  std::vector<size_t> out;
  for (size_t r : OkRows(t)) {
    const double memory = t.rows[r].summary->peak_memory_gib;
    if (!out.empty() && memory >= t.rows[out.back()].summary->peak_memory_gib) continue;
    out.push_back(r);
  }
  return out;
}

namespace {

// The explorer's label of a JAX-style axis column ("ICI data", "rule embed", "XLA
// async_collectives"), or "" for other columns.
std::string JaxColumnLabel(const std::string& key) {
  for (const auto& [prefix, label] : {std::pair<std::string, std::string>{"plan.mesh.ici.", "ICI "},
                                      {"plan.mesh.dcn.", "DCN "},
                                      {"plan.rules.", "rule "},
                                      {"plan.xla.", "XLA "}}) {
    if (key.size() > prefix.size() && key.compare(0, prefix.size(), prefix) == 0) {
      return label + key.substr(prefix.size());
    }
  }
  return "";
}

}  // namespace

nlohmann::ordered_json ExplorerData(const ResultTable& t, const std::string& title,
                                    const std::string& subtitle) {
  using Json = nlohmann::ordered_json;
  Json mesh_dims = Json::array();
  std::vector<size_t> mesh_columns;
  for (size_t k = 0; k < t.axis_keys.size(); ++k) {
    const std::string label = JaxColumnLabel(t.axis_keys[k]);
    if (label.empty()) continue;
    mesh_dims.push_back({t.axis_keys[k], label});
    mesh_columns.push_back(k);
  }
  Json rows = Json::array();
  double budget = 0;
  for (const ResultRow& r : t.rows) {
    if (r.status == ConfigStatus::kInvalid) continue;
    Json row = ExplorerRow(r);
    for (const size_t k : mesh_columns) row[t.axis_keys[k]] = r.axes[k];
    rows.push_back(std::move(row));
    budget = std::max(budget, r.budget_gib);
  }
  Json data;
  data["title"] = title;
  data["subtitle"] = subtitle;
  data["budget_gib"] = budget;
  data["categories"] = {"weights", "gradients", "optimizer", "activations", "buffers"};
  if (!mesh_dims.empty()) data["mesh_dims"] = std::move(mesh_dims);
  data["rows"] = std::move(rows);
  return data;
}

}  // namespace meshsim

#include "sim/sweep/analysis.h"

#include <algorithm>

namespace meshsim {
namespace {

struct OkRow {
  size_t row;
  double step;
  double memory;
  long long index;
};

std::vector<OkRow> OkRows(const CsvTable& t) {
  const int status = t.Column("status");
  const int step = t.Column("step_time_s");
  const int memory = t.Column("peak_memory_gib");
  const int config = t.Column("config");
  std::vector<OkRow> rows;
  for (size_t r = 0; r < t.rows.size(); ++r) {
    if (t.Cell(r, status) != "ok") continue;
    const auto s = t.Number(r, step);
    const auto m = t.Number(r, memory);
    const auto c = t.Number(r, config);
    if (!s || !m) continue;
    rows.push_back({r, *s, *m, c ? static_cast<long long>(*c) : static_cast<long long>(r)});
  }
  std::sort(rows.begin(), rows.end(), [](const OkRow& a, const OkRow& b) {
    if (a.step != b.step) return a.step < b.step;
    if (a.memory != b.memory) return a.memory < b.memory;
    return a.index < b.index;
  });
  return rows;
}

}  // namespace

std::vector<size_t> RankByStepTime(const CsvTable& t) {
  std::vector<size_t> out;
  for (const OkRow& r : OkRows(t)) out.push_back(r.row);
  return out;
}

std::vector<size_t> ParetoFront(const CsvTable& t) {
  // Sorted by step time (then memory): a row is on the front iff its memory is below
  // that of every faster row.
  std::vector<size_t> out;
  double best_memory = 0;
  bool any = false;
  for (const OkRow& r : OkRows(t)) {
    if (any && r.memory >= best_memory) continue;
    out.push_back(r.row);
    best_memory = r.memory;
    any = true;
  }
  return out;
}

nlohmann::ordered_json ExplorerData(const CsvTable& t, const std::string& title,
                                    const std::string& subtitle) {
  using Json = nlohmann::ordered_json;
  auto col = [&t](const char* name) { return t.Column(name); };
  const int c_config = col("config"), c_status = col("status"), c_tp = col("plan.tp"),
            c_pp = col("plan.pp"), c_dp = col("plan.dp"), c_cp = col("plan.cp"),
            c_zero = col("plan.zero"), c_mb = col("plan.micro_batch"),
            c_sched = col("plan.schedule"), c_v = col("plan.virtual_stages"),
            c_rc = col("plan.recompute"), c_sp = col("plan.sequence_parallel"),
            c_step = col("step_time_s"), c_mfu = col("mfu"), c_bubble = col("bubble_fraction"),
            c_tps = col("tokens_per_s"), c_peak = col("peak_memory_gib"),
            c_budget = col("budget_gib"), c_msg = col("message"), c_est = col("est_memory_gib");
  const char* sim_mem[] = {"memory_breakdown_gib.weights", "memory_breakdown_gib.gradients",
                           "memory_breakdown_gib.optimizer", "memory_breakdown_gib.activations",
                           "memory_breakdown_gib.buffers"};
  const char* est_mem[] = {"est_weights_gib", "est_gradients_gib", "est_optimizer_gib",
                           "est_activations_gib", "est_buffers_gib"};
  Json rows = Json::array();
  double budget = 0;
  for (size_t r = 0; r < t.rows.size(); ++r) {
    const std::string& status = t.Cell(r, c_status);
    if (status == "invalid") continue;
    auto num = [&](int c) { return t.Number(r, c).value_or(0.0); };
    auto integer = [&](int c) { return static_cast<int>(t.Number(r, c).value_or(0.0)); };
    const bool simulated = t.Number(r, c_step).has_value();
    Json row;
    row["config"] = integer(c_config);
    row["tp"] = integer(c_tp);
    row["pp"] = integer(c_pp);
    row["dp"] = integer(c_dp);
    row["cp"] = integer(c_cp);
    row["zero"] = integer(c_zero);
    row["mb"] = integer(c_mb);
    row["schedule"] = t.Cell(r, c_sched);
    row["v"] = integer(c_v);
    row["recompute"] = t.Cell(r, c_rc);
    row["sp"] = t.Cell(r, c_sp) == "true";
    row["status"] = status;
    row["simulated"] = simulated;
    if (simulated) {
      row["step"] = num(c_step);
      row["mfu"] = num(c_mfu);
      row["bubble"] = num(c_bubble);
      row["tokens_per_s"] = num(c_tps);
    }
    row["memory"] = simulated ? num(c_peak) : num(c_est);
    Json mem = Json::array();
    for (int k = 0; k < 5; ++k) mem.push_back(num(t.Column(simulated ? sim_mem[k] : est_mem[k])));
    row["breakdown"] = std::move(mem);
    row["budget"] = num(c_budget);
    budget = std::max(budget, num(c_budget));
    row["message"] = t.Cell(r, c_msg);
    rows.push_back(std::move(row));
  }
  Json data;
  data["title"] = title;
  data["subtitle"] = subtitle;
  data["budget_gib"] = budget;
  data["categories"] = {"weights", "gradients", "optimizer", "activations", "buffers"};
  data["rows"] = std::move(rows);
  return data;
}

}  // namespace meshsim

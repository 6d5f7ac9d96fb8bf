#include "sim/sweep/results_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "sim/report/summary.h"

namespace meshsim {
namespace {

std::string ScheduleName(ScheduleKind s) {
  switch (s) {
    case ScheduleKind::kGpipe:
      return "gpipe";
    case ScheduleKind::kOneFOneB:
      return "1f1b";
    case ScheduleKind::kInterleaved:
      return "interleaved";
  }
  return "?";
}

std::string RecomputeName(Recompute r) {
  switch (r) {
    case Recompute::kNone:
      return "none";
    case Recompute::kSelective:
      return "selective";
    case Recompute::kFull:
      return "full";
  }
  return "?";
}

std::string Num(double v) { return fmt::format("{}", v); }

std::string PlanCell(const PlanSpec& p, const std::string& column) {
  if (column == "plan.tp") return std::to_string(p.tp);
  if (column == "plan.pp") return std::to_string(p.pp);
  if (column == "plan.dp") return std::to_string(p.dp);
  if (column == "plan.cp") return std::to_string(p.cp);
  if (column == "plan.zero") return std::to_string(p.zero);
  if (column == "plan.micro_batch") return std::to_string(p.micro_batch);
  if (column == "plan.global_batch") return std::to_string(p.global_batch);
  if (column == "plan.schedule") return ScheduleName(p.schedule);
  if (column == "plan.virtual_stages") return std::to_string(p.virtual_stages);
  if (column == "plan.recompute") return RecomputeName(p.recompute);
  if (column == "plan.sequence_parallel") return p.sequence_parallel ? "true" : "false";
  return "";
}

const std::vector<std::string>& EstimateColumns() {
  static const std::vector<std::string> c = {
      "est_memory_gib",      "est_weights_gib", "est_gradients_gib", "est_optimizer_gib",
      "est_activations_gib", "est_buffers_gib", "budget_gib"};
  return c;
}

}  // namespace

const std::vector<std::string>& SummaryColumns() {
  static const std::vector<std::string> c = {
      "name",
      "meshsim_version",
      "gpus",
      "params_total",
      "params_active",
      "step_time_s",
      "tokens_per_s",
      "model_flops_per_step",
      "tflops_per_gpu",
      "mfu",
      "hfu",
      "bubble_fraction",
      "peak_memory_gib",
      "memory_budget_gib",
      "fits",
      "worst_memory_rank",
      "memory_breakdown_gib.weights",
      "memory_breakdown_gib.gradients",
      "memory_breakdown_gib.optimizer",
      "memory_breakdown_gib.activations",
      "memory_breakdown_gib.buffers",
      "critical_rank",
      "busiest_rank",
      "time_breakdown_s.compute",
      "time_breakdown_s.exposed_tp_comm",
      "time_breakdown_s.exposed_dp_comm",
      "time_breakdown_s.exposed_pp_comm",
      "time_breakdown_s.exposed_cp_comm",
      "time_breakdown_s.exposed_ep_comm",
      "time_breakdown_s.bubble",
      "time_breakdown_s.optimizer",
      "sim.events",
      "sim.ops",
      "sim.replayed_ranks",
  };
  return c;
}

const std::vector<std::string>& PlanColumns() {
  static const std::vector<std::string> c = {"plan.tp",
                                             "plan.pp",
                                             "plan.dp",
                                             "plan.cp",
                                             "plan.zero",
                                             "plan.micro_batch",
                                             "plan.global_batch",
                                             "plan.schedule",
                                             "plan.virtual_stages",
                                             "plan.recompute",
                                             "plan.sequence_parallel"};
  return c;
}

std::vector<std::string> ResultColumns(const SweepSpec& spec) {
  std::vector<std::string> cols = {"config", "status"};
  const auto& plan = PlanColumns();
  for (const SweepAxis& a : spec.axes) {
    if (std::find(plan.begin(), plan.end(), a.key) == plan.end()) cols.push_back(a.key);
  }
  cols.insert(cols.end(), plan.begin(), plan.end());
  cols.insert(cols.end(), EstimateColumns().begin(), EstimateColumns().end());
  cols.insert(cols.end(), SummaryColumns().begin(), SummaryColumns().end());
  cols.push_back("message");
  return cols;
}

std::string SummaryCell(const nlohmann::ordered_json& summary, const std::string& key) {
  const nlohmann::ordered_json* node = &summary;
  size_t start = 0;
  while (true) {
    const size_t dot = key.find('.', start);
    const std::string part = key.substr(start, dot == std::string::npos ? dot : dot - start);
    if (!node->is_object()) return "";
    auto it = node->find(part);
    if (it == node->end()) return "";
    node = &*it;
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  if (node->is_boolean()) return node->get<bool>() ? "true" : "false";
  if (node->is_number_integer()) return std::to_string(node->get<int64_t>());
  if (node->is_number_unsigned()) return std::to_string(node->get<uint64_t>());
  if (node->is_number()) return Num(node->get<double>());
  if (node->is_string()) return node->get<std::string>();
  return "";
}

CsvRow ResultRow(const SweepSpec& spec, const std::vector<std::string>& columns,
                 const Configuration& c, const Evaluation& ev) {
  CsvRow row;
  row.reserve(columns.size());
  const SweepGroup& group = spec.groups[c.group];
  for (const std::string& col : columns) {
    if (col == "config") {
      row.push_back(std::to_string(c.index));
    } else if (col == "status") {
      row.push_back(ConfigStatusName(ev.status));
    } else if (col == "message") {
      row.push_back(ev.message);
    } else if (col.rfind("plan.", 0) == 0 &&
               std::find(PlanColumns().begin(), PlanColumns().end(), col) != PlanColumns().end()) {
      row.push_back(PlanCell(c.plan, col));
    } else if (col == "budget_gib") {
      row.push_back(Num(ev.budget_gib));
    } else if (col.rfind("est_", 0) == 0) {
      if (!ev.bound) {
        row.emplace_back();
        continue;
      }
      const MemoryBound& b = *ev.bound;
      const double v = col == "est_memory_gib"        ? b.Total()
                       : col == "est_weights_gib"     ? b.weights
                       : col == "est_gradients_gib"   ? b.gradients
                       : col == "est_optimizer_gib"   ? b.optimizer
                       : col == "est_activations_gib" ? b.activations
                                                      : b.buffers;
      row.push_back(Num(v / kGiB));
    } else {
      // An axis column, or a summary key.
      bool axis = false;
      for (size_t a = 0; a < spec.axes.size(); ++a) {
        if (spec.axes[a].key != col) continue;
        axis = true;
        const int choice = group.choice[a];
        row.push_back(choice >= 0 ? spec.axes[a].values[choice] : std::string());
        break;
      }
      if (axis) continue;
      row.push_back(ev.summary ? SummaryCell(*ev.summary, col) : std::string());
    }
  }
  return row;
}

std::string CsvLine(const CsvRow& cells) {
  std::string out;
  for (size_t i = 0; i < cells.size(); ++i) {
    if (i) out += ',';
    const std::string& c = cells[i];
    if (c.find_first_of(",\"\n\r") == std::string::npos) {
      out += c;
      continue;
    }
    out += '"';
    for (char ch : c) {
      if (ch == '"') out += '"';
      out += ch;
    }
    out += '"';
  }
  out += '\n';
  return out;
}

int CsvTable::Column(const std::string& name) const {
  for (size_t i = 0; i < header.size(); ++i) {
    if (header[i] == name) return static_cast<int>(i);
  }
  return -1;
}

const std::string& CsvTable::Cell(size_t row, int column) const {
  static const std::string empty;
  if (column < 0 || row >= rows.size() || static_cast<size_t>(column) >= rows[row].size()) {
    return empty;
  }
  return rows[row][column];
}

std::optional<double> CsvTable::Number(size_t row, int column) const {
  const std::string& s = Cell(row, column);
  if (s.empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (errno != 0 || *end != '\0') return std::nullopt;
  return v;
}

Result<CsvTable> ParseCsv(const std::string& text, const std::string& origin) {
  CsvTable t;
  std::vector<CsvRow> records;
  CsvRow record;
  std::string cell;
  bool quoted = false;
  bool cell_started = false;
  size_t line = 1;
  for (size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (quoted) {
      if (ch == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          cell += '"';
          ++i;
        } else {
          quoted = false;
        }
      } else {
        if (ch == '\n') ++line;
        cell += ch;
      }
      continue;
    }
    if (ch == '"' && !cell_started) {
      quoted = true;
      cell_started = true;
    } else if (ch == ',') {
      record.push_back(std::move(cell));
      cell.clear();
      cell_started = false;
    } else if (ch == '\n') {
      record.push_back(std::move(cell));
      cell.clear();
      cell_started = false;
      records.push_back(std::move(record));
      record.clear();
      t.complete_bytes = i + 1;
      ++line;
    } else if (ch != '\r') {
      cell += ch;
      cell_started = true;
    }
  }
  t.dropped_partial_line = t.complete_bytes < text.size();
  if (records.empty()) {
    InputError e;
    e.file = origin;
    e.message = "expected a CSV header line, found an empty file";
    return e;
  }
  t.header = std::move(records.front());
  for (size_t r = 1; r < records.size(); ++r) {
    if (records[r].size() != t.header.size()) {
      InputError e;
      e.file = origin;
      e.line = static_cast<int>(r + 1);
      e.message = "expected " + std::to_string(t.header.size()) +
                  " cells as in the header, found " + std::to_string(records[r].size());
      return e;
    }
    t.rows.push_back(std::move(records[r]));
  }
  return t;
}

Result<CsvTable> ReadCsvFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    InputError e;
    e.file = path;
    e.message = std::string("cannot open file: ") + std::strerror(errno);
    return e;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return ParseCsv(ss.str(), path);
}

}  // namespace meshsim

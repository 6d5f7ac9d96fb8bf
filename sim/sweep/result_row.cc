#include "sim/sweep/result_row.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <type_traits>

#include "sim/plan/plan_names.h"
#include "sim/plan/stages.h"
#include "sim/sweep/mesh_axes.h"

namespace meshsim {

// The expert-parallel degree's axis key: results.csv shows it only as an axis column (no
// plan column has it), its value the configuration's ep whether the axis gave it or chose
// it (auto).
constexpr const char* kEpAxis = "plan.ep";
namespace {

// Calls visit(column, field) for each summary column (the host timings left out).
template <typename S, typename Visit>
void VisitSummaryColumns(S& s, Visit&& visit) {
  auto step_only = [&visit](std::string_view name, auto& field, FieldKind kind) {
    if (kind == FieldKind::kStep) visit(name, field);
  };
  VisitScalarFields(s, step_only);
  VisitSimFields(s, step_only);
}

// A cell as results.csv writes it: shortest round-trip text for numbers, true/false,
// choice names, strings as they are.
template <typename T>
std::string Cell(const T& v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v ? "true" : "false";
  } else if constexpr (std::is_same_v<T, std::string>) {
    return v;
  } else if constexpr (std::is_same_v<T, ScheduleKind>) {
    return NameOf(ScheduleNames(), v);
  } else if constexpr (std::is_same_v<T, Recompute>) {
    return NameOf(RecomputeNames(), v);
  } else if constexpr (std::is_same_v<T, std::vector<int>>) {
    return StageLayersText(v);
  } else if constexpr (std::is_floating_point_v<T>) {
    return fmt::format("{}", v);
  } else {
    return std::to_string(v);
  }
}

// Parses a cell written by Cell into `out`; false if it does not parse.
template <typename T>
bool ParseCell(const std::string& text, T* out) {
  if constexpr (std::is_same_v<T, bool>) {
    if (text != "true" && text != "false") return false;
    *out = text == "true";
    return true;
  } else if constexpr (std::is_same_v<T, std::string>) {
    *out = text;
    return true;
  } else if constexpr (std::is_same_v<T, ScheduleKind>) {
    return ValueOf(ScheduleNames(), text, out);
  } else if constexpr (std::is_same_v<T, Recompute>) {
    return ValueOf(RecomputeNames(), text, out);
  } else if constexpr (std::is_same_v<T, std::vector<int>>) {
    return ParseStageLayersText(text, out);
  } else {
    if (text.empty()) return false;
    errno = 0;
    char* end = nullptr;
    if constexpr (std::is_floating_point_v<T>) {
      *out = std::strtod(text.c_str(), &end);
    } else if constexpr (std::is_unsigned_v<T>) {
      *out = static_cast<T>(std::strtoull(text.c_str(), &end, 10));
    } else {
      *out = static_cast<T>(std::strtoll(text.c_str(), &end, 10));
    }
    return errno == 0 && *end == '\0';
  }
}

const std::vector<std::string>& EstimateColumns() {
  static const std::vector<std::string> columns = [] {
    std::vector<std::string> c;
    MemoryEstimateGib est;
    double budget = 0;
    VisitEstimateFields(est, budget,
                        [&c](std::string_view name, double&) { c.emplace_back(name); });
    return c;
  }();
  return columns;
}

// Reads the cells of one row in column order, remembering the first that fails.
class CellReader {
 public:
  CellReader(const CsvRecord& record, const CsvRecord& header, size_t at)
      : record_(record), header_(header), at_(at) {}
  const std::string& Next() { return record_[at_++]; }
  template <typename T>
  void Read(std::string_view column, T* out) {
    const size_t at = at_;
    const std::string& text = Next();
    if (!error_.empty()) return;
    if (header_[at] != column) {
      error_ = fmt::format("column {}: expected '{}', found '{}'", at + 1, column, header_[at]);
    } else if (!ParseCell(text, out)) {
      error_ = fmt::format("{}: cannot read '{}'", column, text);
    }
  }
  const std::string& error() const { return error_; }
  size_t position() const { return at_; }

 private:
  const CsvRecord& record_;
  const CsvRecord& header_;
  size_t at_;
  std::string error_;
};

// True if every summary cell from `from` on (up to `message`) is empty.
bool SummaryCellsEmpty(const CsvRecord& record, size_t from) {
  return std::all_of(record.begin() + from, record.end() - 1,
                     [](const std::string& c) { return c.empty(); });
}

}  // namespace

double ResultRow::MemoryGibShown() const {
  if (summary) return summary->peak_memory_gib;
  return estimate ? estimate->total : 0.0;
}

const MemoryGib& ResultRow::MemoryBreakdownShown() const {
  static const MemoryGib none;
  if (summary) return summary->memory_breakdown_gib;
  return estimate ? estimate->by_category : none;
}

const std::vector<std::string>& PlanColumns() {
  static const std::vector<std::string> columns = [] {
    std::vector<std::string> c;
    PlanSpec p;
    VisitPlanFields(p, [&c](std::string_view name, auto&) { c.emplace_back(name); });
    return c;
  }();
  return columns;
}

std::vector<std::string> SummaryColumns() {
  std::vector<std::string> c;
  StepSummary s;
  VisitSummaryColumns(s, [&c](std::string_view name, auto&) { c.emplace_back(name); });
  return c;
}

std::vector<std::string> NonPlanAxisKeys(const SweepSpec& spec) {
  std::vector<std::string> keys;
  const auto& plan = PlanColumns();
  for (const SweepAxis& a : spec.axes) {
    if (std::find(plan.begin(), plan.end(), a.key) == plan.end()) keys.push_back(a.key);
  }
  return keys;
}

std::vector<std::string> ResultColumns(const std::vector<std::string>& axis_keys) {
  std::vector<std::string> cols = {"config", "status"};
  cols.insert(cols.end(), axis_keys.begin(), axis_keys.end());
  cols.insert(cols.end(), PlanColumns().begin(), PlanColumns().end());
  cols.insert(cols.end(), EstimateColumns().begin(), EstimateColumns().end());
  const std::vector<std::string> summary = SummaryColumns();
  cols.insert(cols.end(), summary.begin(), summary.end());
  cols.push_back("message");
  return cols;
}

ResultRow MakeResultRow(const SweepSpec& spec, const Configuration& c, Evaluation ev) {
  ResultRow row;
  row.config = c.index;
  row.status = ev.status;
  const SweepGroup& group = spec.groups[c.group];
  const std::vector<std::string> axis_keys = NonPlanAxisKeys(spec);
  for (const std::string& key : axis_keys) {
    for (size_t a = 0; a < spec.axes.size(); ++a) {
      if (spec.axes[a].key != key) continue;
      const int choice = group.choice[a];
      if (const std::optional<MeshSizeKey> size = ParseMeshSizeKey(key, c.plan.jax)) {
        row.axes.push_back(std::to_string(MeshSize(c.plan.jax, *size)));  // auto ones too
        continue;
      }
      if (key == kEpAxis) {  // expert parallelism is no plan column: its axis shows it
        row.axes.push_back(std::to_string(c.plan.ep));  // auto ones too
        continue;
      }
      row.axes.push_back(choice >= 0 ? spec.axes[a].values[choice] : std::string());
    }
  }
  row.plan = c.plan;
  if (ev.bound) {
    const MemoryBound& b = *ev.bound;
    row.estimate = MemoryEstimateGib{b.Total() / kGiB,
                                     {b.weights / kGiB, b.gradients / kGiB, b.optimizer / kGiB,
                                      b.activations / kGiB, b.buffers / kGiB}};
  }
  row.budget_gib = ev.budget_gib;
  row.summary = std::move(ev.summary);
  row.message = std::move(ev.message);
  return row;
}

CsvRecord FormatRow(const ResultRow& row) {
  CsvRecord cells = {std::to_string(row.config), ConfigStatusName(row.status)};
  cells.insert(cells.end(), row.axes.begin(), row.axes.end());
  VisitPlanFields(row.plan,
                  [&cells](std::string_view, const auto& v) { cells.push_back(Cell(v)); });
  const MemoryEstimateGib no_estimate;
  double budget = row.budget_gib;
  VisitEstimateFields(row.estimate ? *row.estimate : no_estimate, budget,
                      [&](std::string_view name, const double& v) {
                        const bool shown = row.estimate || name == "budget_gib";
                        cells.push_back(shown ? Cell(v) : std::string());
                      });
  if (row.summary) {
    VisitSummaryColumns(*row.summary,
                        [&cells](std::string_view, const auto& v) { cells.push_back(Cell(v)); });
  } else {
    cells.resize(cells.size() + SummaryColumns().size());
  }
  cells.push_back(row.message);
  return cells;
}

Result<ResultRow> ParseRow(const CsvRecord& record, const CsvRecord& header,
                           const std::string& where) {
  auto bad = [&where](const std::string& message) {
    InputError e;
    e.file = where;
    e.message = message;
    return e;
  };
  if (record.size() != header.size() || header.size() < 3 || header[0] != "config" ||
      header[1] != "status" || header.back() != "message") {
    return bad("not a row of a meshsim results.csv");
  }
  ResultRow row;
  CellReader in(record, header, 0);
  in.Read("config", &row.config);
  const std::string& status = in.Next();
  if (!ParseConfigStatus(status, &row.status)) {
    return bad("status: expected ok, oom, invalid or error, found '" + status + "'");
  }
  while (in.position() < header.size() && header[in.position()] != "plan.tp") {
    if (header[in.position()] == kEpAxis) {
      const std::string cell = in.Next();
      row.axes.push_back(cell);
      row.plan.ep = std::atoi(cell.c_str());  // written from an int (MakeResultRow)
      continue;
    }
    row.axes.push_back(in.Next());
  }
  VisitPlanFields(row.plan, [&in](std::string_view name, auto& v) { in.Read(name, &v); });
  MemoryEstimateGib est;
  const bool has_estimate = in.position() < record.size() && !record[in.position()].empty();
  VisitEstimateFields(est, row.budget_gib, [&](std::string_view name, double& v) {
    if (has_estimate || name == "budget_gib") {
      in.Read(name, &v);
    } else {
      in.Next();
    }
  });
  if (has_estimate) row.estimate = est;
  if (in.position() < record.size() && !SummaryCellsEmpty(record, in.position())) {
    StepSummary s;
    VisitSummaryColumns(s, [&in](std::string_view name, auto& v) { in.Read(name, &v); });
    row.summary = std::move(s);
  } else {
    for (size_t k = SummaryColumns().size(); k > 0 && in.position() < record.size(); --k) in.Next();
  }
  if (!in.error().empty()) return bad(in.error());
  if (in.position() + 1 != header.size()) return bad("the columns are not a results.csv's");
  row.message = in.Next();
  return row;
}

std::string ResultsCsv(const ResultTable& table, const std::vector<size_t>& rows) {
  std::string text = CsvLine(ResultColumns(table.axis_keys));
  for (size_t r : rows) text += CsvLine(FormatRow(table.rows[r]));
  return text;
}

Result<ParsedResults> ReadResultsCsv(const std::string& path) {
  Result<CsvText> csv = ReadCsvFile(path);
  if (!csv.ok()) return csv.error();
  const CsvText& t = csv.value();
  ParsedResults out;
  const auto first_plan = std::find(t.header.begin(), t.header.end(), "plan.tp");
  if (t.header.size() < 2 || first_plan == t.header.end()) {
    InputError e;
    e.file = path;
    e.line = 1;
    e.message = "not a meshsim results.csv (no plan.tp column)";
    return e;
  }
  out.table.axis_keys.assign(t.header.begin() + 2, first_plan);
  if (ResultColumns(out.table.axis_keys) != t.header) {
    InputError e;
    e.file = path;
    e.line = 1;
    e.message = "the header is not a results.csv's of this meshsim version";
    return e;
  }
  for (size_t r = 0; r < t.records.size(); ++r) {
    Result<ResultRow> row =
        ParseRow(t.records[r], t.header, path + " line " + std::to_string(t.lines[r]));
    if (!row.ok()) return row.error();
    out.table.rows.push_back(std::move(row).value());
    out.lines.push_back(t.lines[r]);
  }
  out.complete_bytes = t.complete_bytes;
  out.dropped_partial_line = t.dropped_partial_line;
  return out;
}

}  // namespace meshsim

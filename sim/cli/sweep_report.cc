#include "sim/cli/sweep_report.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <fmt/format.h>

#include <filesystem>
#include <iostream>

#include "sim/sweep/analysis.h"
#include "sim/sweep/outputs.h"

namespace meshsim::cli {
namespace {

namespace fs = std::filesystem;

std::string Fixed(const std::optional<StepSummary>& s, double StepSummary::*field, int digits,
                  double scale = 1.0) {
  return s ? fmt::format("{:.{}f}", (*s).*field * scale, digits) : std::string("-");
}

// Why no row made the ranking: all invalid, all out of memory, or a mix.
std::string NothingFitsMessage(const ResultTable& t) {
  int invalid = 0, oom = 0, other = 0;
  std::string example;
  for (const ResultRow& r : t.rows) {
    if (r.status == ConfigStatus::kInvalid) {
      ++invalid;
      if (example.empty()) example = r.message;
    } else if (r.status == ConfigStatus::kOom) {
      ++oom;
    } else {
      ++other;
    }
  }
  if (t.rows.empty()) return "No configuration was evaluated.";
  if (invalid == static_cast<int>(t.rows.size())) {
    return fmt::format("No configuration is valid: all {} are invalid (e.g. {}).", invalid,
                       example);
  }
  return fmt::format("No configuration fits in memory ({} out of memory, {} invalid{}).", oom,
                     invalid, other > 0 ? fmt::format(", {} failed", other) : "");
}

}  // namespace

void RetainFreedMemory() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 1 << 30);  // large arrays from the heap, not fresh mmaps
  mallopt(M_TRIM_THRESHOLD, 1 << 30);  // and kept there once freed
#endif
}

void PrintRows(const ResultTable& t, const std::vector<size_t>& rows, std::ostream& out) {
  // Columns: the configuration, extra axes, the plan columns that vary over these rows
  // (tp, pp, dp, zero and micro-batch always), then the results; cells as results.csv's.
  const std::vector<std::string> header = ResultColumns(t.axis_keys);
  std::vector<CsvRecord> records;
  for (size_t r : rows) records.push_back(FormatRow(t.rows[r]));
  std::vector<size_t> cols = {0};
  for (size_t c = 2; c < 2 + t.axis_keys.size(); ++c) cols.push_back(c);
  const size_t first_plan = 2 + t.axis_keys.size();
  for (size_t c = first_plan; c < first_plan + PlanColumns().size(); ++c) {
    bool varies = false;
    for (const CsvRecord& rec : records) varies |= rec[c] != records.front()[c];
    const std::string& name = header[c];
    const bool always = name == "plan.tp" || name == "plan.pp" || name == "plan.dp" ||
                        name == "plan.zero" || name == "plan.micro_batch";
    if (always || varies) cols.push_back(c);
  }
  std::vector<std::string> head;
  for (size_t c : cols) {
    std::string h = header[c];
    if (h.rfind("plan.", 0) == 0) h = h.substr(5);
    if (h == "micro_batch") h = "mb";
    if (h == "virtual_stages") h = "v";
    if (h == "sequence_parallel") h = "sp";
    head.push_back(h);
  }
  for (const char* h : {"step s", "MFU", "bubble", "peak GiB"}) head.push_back(h);
  std::vector<std::vector<std::string>> cells;
  for (size_t i = 0; i < rows.size(); ++i) {
    const std::optional<StepSummary>& s = t.rows[rows[i]].summary;
    std::vector<std::string> line;
    for (size_t c : cols) line.push_back(records[i][c]);
    line.push_back(Fixed(s, &StepSummary::step_time_s, 3));
    line.push_back(Fixed(s, &StepSummary::mfu, 1, 100) + "%");
    line.push_back(Fixed(s, &StepSummary::bubble_fraction, 1, 100) + "%");
    line.push_back(Fixed(s, &StepSummary::peak_memory_gib, 1));
    cells.push_back(std::move(line));
  }
  std::vector<size_t> width(head.size());
  for (size_t i = 0; i < head.size(); ++i) {
    width[i] = head[i].size();
    for (const auto& line : cells) width[i] = std::max(width[i], line[i].size());
  }
  auto print = [&](const std::vector<std::string>& line) {
    out << " ";
    for (size_t i = 0; i < line.size(); ++i) out << " " << fmt::format("{:>{}}", line[i], width[i]);
    out << "\n";
  };
  print(head);
  for (const auto& line : cells) print(line);
}

Status ReportSweep(const ResultTable& t, const std::string& name, const std::string& outdir,
                   const std::string& html, int top, std::ostream& out) {
  const std::vector<size_t> ranked = RankByStepTime(t);
  if (ranked.empty()) {
    out << "\n" << NothingFitsMessage(t) << "\n";
  } else {
    const std::vector<size_t> front = ParetoFront(t);
    std::vector<size_t> head(ranked.begin(),
                             ranked.begin() + std::min<size_t>(ranked.size(), std::max(top, 1)));
    out << "\nFastest configurations (" << head.size() << " of " << ranked.size()
        << " that fit):\n";
    PrintRows(t, head, out);
    out << "\nPareto front, step time vs peak memory (" << front.size() << " configurations):\n";
    PrintRows(t, front, out);
  }
  Result<SweepOutputs> written = WriteSweepOutputs(t, name, outdir, html);
  if (!written.ok()) return written.error();
  out << "\nwrote " << (fs::path(outdir) / "results.csv").string() << ", "
      << written.value().pareto_csv;
  if (!written.value().html.empty()) out << ", " << written.value().html;
  out << "\n";
  return Ok{};
}

}  // namespace meshsim::cli

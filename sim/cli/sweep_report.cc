#include "sim/cli/sweep_report.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <sstream>

#include "sim/core/atomic_file.h"
#include "sim/report/explorer_html.h"
#include "sim/sweep/analysis.h"

namespace meshsim::cli {
namespace {

namespace fs = std::filesystem;

std::string Fixed(const std::optional<double>& v, int digits, double scale = 1.0) {
  return v ? fmt::format("{:.{}f}", *v * scale, digits) : std::string("-");
}

// Why no row made the ranking: all invalid, all out of memory, or a mix.
std::string NothingFitsMessage(const CsvTable& t) {
  const int status = t.Column("status"), message = t.Column("message");
  int invalid = 0, oom = 0, other = 0;
  std::string example;
  for (size_t r = 0; r < t.rows.size(); ++r) {
    const std::string& s = t.Cell(r, status);
    if (s == "invalid") {
      ++invalid;
      if (example.empty()) example = t.Cell(r, message);
    } else if (s == "oom") {
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

void PrintRows(const CsvTable& t, const std::vector<size_t>& rows, std::ostream& out) {
  // Columns: the configuration, extra axes (between status and plan.tp), the plan
  // columns that vary over these rows, then the results.
  std::vector<int> cols = {t.Column("config")};
  const int first_plan = t.Column("plan.tp");
  for (int c = t.Column("status") + 1; c < first_plan; ++c) cols.push_back(c);
  for (const std::string& name : PlanColumns()) {
    const int c = t.Column(name);
    bool varies = false;
    for (size_t r : rows) varies |= t.Cell(r, c) != t.Cell(rows.front(), c);
    const bool always = name == "plan.tp" || name == "plan.pp" || name == "plan.dp" ||
                        name == "plan.zero" || name == "plan.micro_batch";
    if (always || varies) cols.push_back(c);
  }
  std::vector<std::string> head;
  for (int c : cols) {
    std::string h = t.header[c];
    if (h.rfind("plan.", 0) == 0) h = h.substr(5);
    if (h == "micro_batch") h = "mb";
    if (h == "virtual_stages") h = "v";
    if (h == "sequence_parallel") h = "sp";
    head.push_back(h);
  }
  for (const char* h : {"step s", "MFU", "bubble", "peak GiB"}) head.push_back(h);
  std::vector<std::vector<std::string>> cells;
  for (size_t r : rows) {
    std::vector<std::string> line;
    for (int c : cols) line.push_back(t.Cell(r, c));
    line.push_back(Fixed(t.Number(r, t.Column("step_time_s")), 3));
    line.push_back(Fixed(t.Number(r, t.Column("mfu")), 1, 100) + "%");
    line.push_back(Fixed(t.Number(r, t.Column("bubble_fraction")), 1, 100) + "%");
    line.push_back(Fixed(t.Number(r, t.Column("peak_memory_gib")), 1));
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

Status ReportSweep(const CsvTable& t, const std::string& name, const std::string& outdir,
                   const std::string& html, int top, std::ostream& out) {
  const std::vector<size_t> ranked = RankByStepTime(t);
  const std::vector<size_t> front = ParetoFront(t);
  if (ranked.empty()) {
    out << "\n" << NothingFitsMessage(t) << "\n";
  } else {
    std::vector<size_t> head(ranked.begin(),
                             ranked.begin() + std::min<size_t>(ranked.size(), std::max(top, 1)));
    out << "\nFastest configurations (" << head.size() << " of " << ranked.size()
        << " that fit):\n";
    PrintRows(t, head, out);
    out << "\nPareto front, step time vs peak memory (" << front.size() << " configurations):\n";
    PrintRows(t, front, out);
  }
  std::string pareto = CsvLine(t.header);
  for (size_t r : front) pareto += CsvLine(t.rows[r]);
  const std::string pareto_path = (fs::path(outdir) / "pareto.csv").string();
  if (Status s = WriteFileAtomically(pareto_path, pareto); !s.ok()) return s;
  out << "\nwrote " << (fs::path(outdir) / "results.csv").string() << ", " << pareto_path;
  if (!html.empty()) {
    std::ostringstream page;
    const int gpus_col = t.Column("gpus");
    std::string subtitle = fmt::format("{} configurations, {} fit", t.rows.size(), ranked.size());
    for (size_t r = 0; r < t.rows.size(); ++r) {
      if (!t.Cell(r, gpus_col).empty()) {
        subtitle =
            t.Cell(r, t.Column("name")) + " · " + t.Cell(r, gpus_col) + " GPUs · " + subtitle;
        break;
      }
    }
    WriteExplorerHtml(ExplorerData(t, "sweep " + name, subtitle), page);
    if (Status s = WriteFileAtomically(html, page.str()); !s.ok()) return s;
    out << ", " << html;
  }
  out << "\n";
  return Ok{};
}

}  // namespace meshsim::cli

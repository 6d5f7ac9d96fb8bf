#include "sim/sweep/outputs.h"

#include <fmt/format.h>

#include <filesystem>
#include <sstream>

#include "sim/core/atomic_file.h"
#include "sim/report/explorer_html.h"
#include "sim/sweep/analysis.h"
#include "sim/sweep/runner.h"

namespace meshsim {

Status WriteExplorer(const ResultTable& t, const std::string& path, const std::string& title,
                     const std::string& subtitle) {
  std::ostringstream page;
  WriteExplorerHtml(ExplorerData(t, title, subtitle), page);
  return WriteFileAtomically(path, page.str());
}

Result<SweepOutputs> WriteSweepOutputs(const ResultTable& t, const std::string& name,
                                       const std::string& outdir, const std::string& html) {
  SweepOutputs out;
  out.pareto_csv = (std::filesystem::path(outdir) / "pareto.csv").string();
  if (Status s = WriteResultsCsv(out.pareto_csv, t, ParetoFront(t)); !s.ok()) return s.error();
  if (html.empty()) return out;
  std::string subtitle =
      fmt::format("{} configurations, {} fit", t.rows.size(), RankByStepTime(t).size());
  for (const ResultRow& r : t.rows) {
    if (!r.summary) continue;
    subtitle = r.summary->name + " · " + std::to_string(r.summary->gpus) + " GPUs · " + subtitle;
    break;
  }
  if (Status s = WriteExplorer(t, html, "sweep " + name, subtitle); !s.ok()) return s.error();
  out.html = html;
  return out;
}

}  // namespace meshsim

// The files a finished sweep (or merge) writes beside results.csv: pareto.csv and, when
// asked, the HTML explorer.
#pragma once

#include <string>

#include "sim/core/status.h"
#include "sim/sweep/result_row.h"

namespace meshsim {

struct SweepOutputs {
  std::string pareto_csv;  // path written
  std::string html;        // path written; empty when none was asked for
};

// Writes OUTDIR/pareto.csv (the Pareto front's rows, fastest first, with results.csv's
// columns) and, if `html` is not empty, the explorer page titled "sweep NAME". I/O errors
// name the file.
Result<SweepOutputs> WriteSweepOutputs(const ResultTable& t, const std::string& name,
                                       const std::string& outdir, const std::string& html);

// Writes the explorer page for `t` to `path`.
Status WriteExplorer(const ResultTable& t, const std::string& path, const std::string& title,
                     const std::string& subtitle);

}  // namespace meshsim

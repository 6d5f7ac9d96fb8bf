// meshsim merge OUTDIR... -o OUTDIR: joins the results of a sweep's shards.
#include <fmt/format.h>

#include <iostream>

#include "sim/cli/commands.h"
#include "sim/cli/sweep_commands.h"
#include "sim/cli/sweep_report.h"
#include "sim/sweep/merge.h"

namespace meshsim::cli {

int Merge(const MergeArgs& args) {
  Result<MergedSweep> merged = MergeShards(args.inputs);
  if (!merged.ok()) return ReportError(merged.error());
  const MergedSweep& m = merged.value();
  if (Status s = WriteMergedSweep(args.outdir, m); !s.ok()) return ReportError(s.error());
  std::cout << fmt::format("merged {} folders: {} configurations of sweep {}\n", args.inputs.size(),
                           m.manifest.configurations, m.manifest.name);
  const Status reported =
      ReportSweep(m.table, m.manifest.name, args.outdir, args.html, args.top, std::cout);
  if (!reported.ok()) return ReportError(reported.error());
  return kOk;
}

}  // namespace meshsim::cli

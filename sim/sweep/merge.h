// Joining the results of a sweep's shards (meshsim merge).
#pragma once

#include <string>
#include <vector>

#include "sim/core/status.h"
#include "sim/sweep/manifest.h"
#include "sim/sweep/result_row.h"

namespace meshsim {

struct MergedSweep {
  SweepManifest manifest;  // the sweep's, as one shard of one
  ResultTable table;       // every configuration once, in configuration order
};

// Reads each folder's sweep.json and results.csv and checks that they hold the same sweep
// and that every configuration appears exactly once. Bad input names the folder, line and
// configuration (and for a missing one the shard it belongs to).
Result<MergedSweep> MergeShards(const std::vector<std::string>& dirs);

// Writes OUTDIR/results.csv and OUTDIR/sweep.json of a merged sweep.
Status WriteMergedSweep(const std::string& outdir, const MergedSweep& merged);

}  // namespace meshsim

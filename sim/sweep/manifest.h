// OUTDIR/sweep.json: what the rows of a results.csv belong to, so that --resume and
// merge can refuse rows of another sweep or shard.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/status.h"

namespace meshsim {

struct SweepManifest {
  std::string name;         // the sweep's name
  std::string fingerprint;  // of its configuration space (enumerate.h Fingerprint)
  int64_t configurations = 0;
  int shard_index = 0;
  int shard_count = 1;
  std::vector<std::string> columns;  // results.csv's header
};

// Reads OUTDIR/sweep.json. A missing or malformed file is bad input naming it.
Result<SweepManifest> ReadManifest(const std::string& outdir);
// Writes OUTDIR/sweep.json atomically; a failed write is an I/O error.
Status WriteManifest(const std::string& outdir, const SweepManifest& m);

}  // namespace meshsim

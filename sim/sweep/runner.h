// Running a sweep: configurations evaluated on a pool of threads, rows written to
// OUTDIR/results.csv in configuration order as each contiguous prefix completes.
//
// Each configuration is independent (Evaluate touches no global state), so the rows do
// not depend on the number of threads: -j1 and -jN write identical files. Rows that finish
// out of order wait in memory until the rows before them are written; each write is
// flushed, so a sweep killed at any moment leaves a prefix of its rows (and at most one
// partial line, which --resume drops).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sim/core/status.h"
#include "sim/sweep/enumerate.h"
#include "sim/sweep/manifest.h"
#include "sim/sweep/result_row.h"

namespace meshsim {

// How one configuration's evaluation went.
struct RowInfo {
  ConfigStatus status = ConfigStatus::kInvalid;
  bool simulated = false;  // replayed (not invalid, not pruned by the memory bound)
  double seconds = 0;      // host time the evaluation took on its worker thread
};

// Evaluates configs[todo[0]], configs[todo[1]], ... on `threads` threads (>= 1) and calls
// `sink(position in todo, row, info)` once per configuration, in the order of `todo`,
// never concurrently.
using RowSink = std::function<void(size_t position, ResultRow row, const RowInfo& info)>;
void EvaluateInOrder(const SweepSpec& spec, const std::vector<Configuration>& configs,
                     const std::vector<size_t>& todo, int threads, const RowSink& sink);

struct SweepProgress {
  int64_t done = 0;   // rows of this shard written, including resumed ones
  int64_t total = 0;  // configurations of this shard
  int64_t resumed = 0;
  std::array<int64_t, 4> by_status{};  // indexed by ConfigStatus, this run's rows
  int64_t simulated = 0;               // this run's rows that were replayed
  double simulated_s = 0;              // worker time spent on them
  double other_s = 0;                  // worker time spent on the others
};

struct SweepRunOptions {
  std::string outdir;
  int threads = 1;
  int shard_index = 0;  // this process runs the configurations with index % count == index
  int shard_count = 1;
  bool resume = false;  // keep the rows of an earlier run of the same sweep and shard
  // Called after each written row (from a worker thread, never concurrently).
  std::function<void(const SweepProgress&)> progress;
};

struct SweepRunResult {
  SweepProgress progress;
  std::string results_csv;  // path
  ResultTable table;        // every row of results.csv, in the file's order
  double wall_s = 0;
};

// Writes OUTDIR/sweep.json (what the rows belong to: sweep name, fingerprint, number of
// configurations, shard, columns) and OUTDIR/results.csv. A --resume over another sweep's
// or shard's rows is bad input; an OUTDIR that cannot be written, an I/O error.
Result<SweepRunResult> RunSweep(const SweepSpec& spec, const std::vector<Configuration>& configs,
                                const SweepRunOptions& options);

// `table`'s rows `rows` as a results.csv at `path`, written atomically.
Status WriteResultsCsv(const std::string& path, const ResultTable& table,
                       const std::vector<size_t>& rows);

}  // namespace meshsim

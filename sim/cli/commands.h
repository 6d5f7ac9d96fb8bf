// The meshsim subcommands. Each returns the process exit code (SPEC.md): 0 success,
// 1 internal error, 2 bad input, 3 the plan does not fit in device memory.
#pragma once

#include <string>
#include <vector>

namespace meshsim::cli {

enum ExitCode { kOk = 0, kInternal = 1, kBadInput = 2, kDoesNotFit = 3 };

struct RunArgs {
  std::string experiment;
  std::vector<std::string> sets;
  std::string outdir;        // empty: results/runs/<name>
  std::string trace;         // empty: OUTDIR/trace.json
  std::string trace_ranks;   // empty: default selection; "all"; or "0,3,8-15"
  std::string summary;       // empty: OUTDIR/summary.json; "-": JSON to stdout
  bool no_trace = false;
  bool reproducible = false;
  bool full_replay = false;  // replay every rank, not one per symmetry class
};

struct BenchCollectiveArgs {
  std::string cluster;
  std::string op = "all_reduce";
  int gpus = 8;
  double min_bytes = 8;
  double max_bytes = 1 << 30;
  std::string algorithm = "auto";
  bool csv = false;
};

int Run(const RunArgs& args);
int BenchCollectiveCommand(const BenchCollectiveArgs& args);
int Validate(const std::string& experiment, const std::vector<std::string>& sets);

}  // namespace meshsim::cli

// The meshsim subcommands. Each returns the process exit code (exit_codes.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/cli/exit_codes.h"

namespace meshsim::cli {

struct RunArgs {
  std::string experiment;
  std::vector<std::string> sets;
  std::string outdir;       // empty: results/runs/<name>
  std::string trace;        // empty: OUTDIR/trace.json
  std::string trace_ranks;  // empty: default selection; "all"; or "0,3,8-15"
  std::string summary;      // empty: OUTDIR/summary.json; "-": JSON to stdout
  bool no_trace = false;
  bool reproducible = false;
  bool full_replay = false;   // replay every rank, not one per symmetry class
  double max_memory_gib = 0;  // 0: the host's available memory is the limit
};

struct BenchCollectiveArgs {
  std::string cluster;
  std::string op = "all_reduce";
  int gpus = 8;
  double min_bytes = 8;
  double max_bytes = 1 << 30;
  std::string algorithm = "auto";
  std::string protocol = "auto";
  int channels = 0;           // 0: as NCCL sets them
  std::string nvls = "auto";  // NVLink SHARP: auto (the cluster's), on, off (NCCL_NVLS_ENABLE)
  bool csv = false;
};

struct BenchGemmArgs {
  std::string cluster;
  std::string dtype = "bf16";       // bf16 | fp16 | fp8
  std::vector<std::string> shapes;  // "MxNxK" or "MxNxKxBATCH"; empty: m = n = k 256..16384
  bool csv = false;
};

struct ExplainArgs {
  std::string experiment;
  std::vector<std::string> sets;
  bool kernels = false;  // the kernel table of one layer instead (sim/report/kernel_table.h)
  int layer = 0;         // --kernels: the layer (-1: the ops tied to no layer)
  int micro_batch = 0;   // --kernels: the micro-batch
};

struct ImportHfArgs {
  std::string config;   // config.json; "-" reads stdin
  std::string output;   // empty: stdout
  std::string name;     // empty: from the config or the file name
  int64_t seq_len = 0;  // 0: max_position_embeddings
};

struct ImportMegatronArgs {
  std::vector<std::string> args;  // one string of Megatron arguments, its words, or @FILE
  std::string output;             // empty: stdout
  std::string cluster;            // empty: topologies/selene-a100.yaml
  std::string name;               // empty: the output file's stem, or "megatron"
  int nodes = 0;                  // 0: from --world-size
};

struct ImportMaxTextArgs {
  std::string base;                    // MaxText's base.yml (or a copy); "-" reads stdin
  std::vector<std::string> overrides;  // KEY=VALUE, later winning
  std::string model;                   // empty: models/<model_name>.yml next to base when
                                       // model_name is set
  std::string topology;                // a bundled topology's name, or a cluster file
  int slices = 0;                      // 0: the product of the dcn_* values other than -1
  int chips_per_slice = 0;             // 0: the slice shape's chips, else the cluster's
                                       // gpus_per_node
  std::string slice_shape;             // "4x4x8": a TPU slice's torus; empty: the cluster's
  std::string name;                    // empty: the output file's stem, or "maxtext"
  std::string output;                  // empty: stdout
};

int Run(const RunArgs& args);
int BenchCollectiveCommand(const BenchCollectiveArgs& args);
int BenchGemmCommand(const BenchGemmArgs& args);
int Validate(const std::string& experiment, const std::vector<std::string>& sets);
// Prints per-device shapes and the collectives of one step (sim/report/explain.h), or with
// --kernels one layer's kernels and their times (sim/report/kernel_table.h).
int Explain(const ExplainArgs& args);
int ImportHf(const ImportHfArgs& args);
int ImportMegatron(const ImportMegatronArgs& args);
int ImportMaxText(const ImportMaxTextArgs& args);

}  // namespace meshsim::cli

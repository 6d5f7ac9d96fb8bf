// meshsim: command-line entry point. Parses arguments with CLI11 and dispatches.
#include <iostream>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>
#include <spdlog/sinks/stdout_color_sinks.h>

#include "sim/cli/commands.h"
#include "sim/report/summary.h"

int main(int argc, char** argv) {
  using namespace meshsim;
  CLI::App app{"meshsim: a discrete-event simulator of distributed deep-learning training"};
  app.set_version_flag("--version", std::string("meshsim ") + kMeshsimVersion);
  app.require_subcommand(1);
  app.fallthrough();
  int verbose = 0;
  bool quiet = false;
  app.add_flag("-v,--verbose", verbose, "more log output on stderr (repeat for debug)");
  app.add_flag("-q,--quiet", quiet, "only errors on stderr");

  cli::RunArgs run;
  CLI::App* run_cmd = app.add_subcommand("run", "simulate one training step of an experiment");
  run_cmd->add_option("experiment", run.experiment, "experiment YAML")->required();
  run_cmd->add_option("--set", run.sets, "override a key: --set plan.tp=4 (repeatable)");
  run_cmd->add_option("-o,--outdir", run.outdir, "output folder (default results/runs/<name>)");
  run_cmd->add_option("--trace", run.trace, "trace file (default OUTDIR/trace.json)");
  run_cmd->add_option("--trace-ranks", run.trace_ranks,
                      "ranks to trace: all | 0,3,8-15 (default: all up to 64 GPUs, else one "
                      "rank per pipeline stage)");
  run_cmd->add_flag("--no-trace", run.no_trace, "write no trace");
  run_cmd->add_option("--summary", run.summary,
                      "summary file (default OUTDIR/summary.json); '-' prints the JSON to stdout");
  run_cmd->add_flag("--reproducible", run.reproducible,
                    "write host timings (sim.wall_s, events_per_s, peak_rss_mib) as 0 so that "
                    "outputs are byte-identical across runs");

  run_cmd->add_flag("--full-replay", run.full_replay,
                    "replay every rank instead of one pipeline per symmetry class (slower; "
                    "gives the same results on homogeneous clusters)");

  std::string validate_path;
  std::vector<std::string> validate_sets;
  CLI::App* validate_cmd =
      app.add_subcommand("validate", "check an experiment (parse, resolve, plan); no simulation");
  validate_cmd->add_option("experiment", validate_path, "experiment YAML")->required();
  validate_cmd->add_option("--set", validate_sets, "override a key (repeatable)");

  cli::BenchCollectiveArgs bench;
  CLI::App* bench_cmd = app.add_subcommand(
      "bench-collective", "nccl-tests for the simulated cluster: time, algbw, busbw per size");
  bench_cmd->add_option("--cluster", bench.cluster, "cluster YAML")->required();
  bench_cmd->add_option("--op", bench.op,
                        "all_reduce | all_gather | reduce_scatter | all_to_all | sendrecv");
  bench_cmd->add_option("--gpus", bench.gpus, "number of GPUs (GPUs 0..N-1)");
  bench_cmd->add_option("--min-bytes", bench.min_bytes, "smallest size (default 8)");
  bench_cmd->add_option("--max-bytes", bench.max_bytes, "largest size (default 1 GiB)");
  bench_cmd->add_option("--algorithm", bench.algorithm, "all-reduce: auto | ring | hierarchical | tree");
  bench_cmd->add_flag("--csv", bench.csv, "print bytes,time_us,algbw_gbps,busbw_gbps");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : cli::kBadInput;
  }

  auto logger = spdlog::stderr_color_st("meshsim");
  spdlog::set_default_logger(logger);
  spdlog::set_pattern("[%l] %v");
  spdlog::set_level(quiet ? spdlog::level::err
                          : verbose >= 2 ? spdlog::level::debug
                          : verbose == 1 ? spdlog::level::info
                                         : spdlog::level::warn);
  try {
    if (*run_cmd) return cli::Run(run);
    if (*validate_cmd) return cli::Validate(validate_path, validate_sets);
    if (*bench_cmd) return cli::BenchCollectiveCommand(bench);
  } catch (const std::exception& e) {
    std::cerr << "meshsim: internal error: " << e.what() << "\n";
    return cli::kInternal;
  }
  return cli::kInternal;
}

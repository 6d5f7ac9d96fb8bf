// meshsim: command-line entry point. Parses arguments with CLI11 and dispatches.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <functional>
#include <iostream>
#include <memory>

#include "sim/cli/commands.h"
#include "sim/cli/sweep_commands.h"
#include "sim/report/step_summary.h"

namespace {

using namespace meshsim;

// A subcommand: its node in the parser and what runs it once the arguments are in.
struct Subcommand {
  CLI::App* cmd;
  std::function<int()> run;
};

Subcommand AddRun(CLI::App& app) {
  auto run = std::make_shared<cli::RunArgs>();
  CLI::App* run_cmd = app.add_subcommand("run", "simulate one training step of an experiment");
  run_cmd->add_option("experiment", run->experiment, "experiment YAML")->required();
  run_cmd->add_option("--set", run->sets, "override a key: --set plan.tp=4 (repeatable)");
  run_cmd->add_option("-o,--outdir", run->outdir, "output folder (default results/runs/<name>)");
  run_cmd->add_option("--trace", run->trace,
                      "trace file (default OUTDIR/trace.json); a name ending in .gz "
                      "(trace.json.gz) is written gzip-compressed");
  run_cmd->add_option("--trace-ranks", run->trace_ranks,
                      "ranks to trace: all | 0,3,8-15 (default: all up to 8 GPUs, else one "
                      "rank per pipeline stage, tp = dp = cp = 0)");
  run_cmd->add_flag("--no-trace", run->no_trace, "write no trace");
  run_cmd->add_option("--summary", run->summary,
                      "summary file (default OUTDIR/summary.json); '-' prints the JSON to stdout "
                      "(and the 'trace:' line to stderr)");
  run_cmd->add_flag("--reproducible", run->reproducible,
                    "write host timings (sim.wall_s, events_per_s, peak_rss_mib) as 0 so that "
                    "outputs are byte-identical across runs");

  run_cmd->add_flag("--full-replay", run->full_replay,
                    "replay every rank instead of one pipeline per symmetry class (slower; "
                    "gives the same results on homogeneous clusters)");
  run_cmd
      ->add_option("--max-memory", run->max_memory_gib,
                   "refuse (exit 2, with the estimate and what would fit) a run whose estimated "
                   "memory exceeds GIB (default: the host's available memory)")
      ->check(CLI::PositiveNumber);

  return {run_cmd, [run] { return cli::Run(*run); }};
}

Subcommand AddValidate(CLI::App& app) {
  auto path = std::make_shared<std::string>();
  auto sets = std::make_shared<std::vector<std::string>>();
  CLI::App* validate_cmd =
      app.add_subcommand("validate", "check an experiment (parse, resolve, plan); no simulation");
  validate_cmd->add_option("experiment", *path, "experiment YAML")->required();
  validate_cmd->add_option("--set", *sets, "override a key (repeatable)");

  return {validate_cmd, [path, sets] { return cli::Validate(*path, *sets); }};
}

Subcommand AddExplain(CLI::App& app) {
  auto args = std::make_shared<cli::ExplainArgs>();
  CLI::App* explain_cmd = app.add_subcommand(
      "explain",
      "per layer: per-device shapes and the collectives of one step (either plan style)");
  explain_cmd->add_option("experiment", args->experiment, "experiment YAML")->required();
  explain_cmd->add_option("--set", args->sets, "override a key (repeatable)");
  explain_cmd->add_flag("--kernels", args->kernels,
                        "instead: one layer's kernels on its rank, each timed by the kernel "
                        "model alone on the GPU");
  explain_cmd->add_option("--layer", args->layer,
                          "--kernels: the layer (default 0; -1: embedding, output layer, loss)");
  explain_cmd->add_option("--micro-batch", args->micro_batch,
                          "--kernels: the micro-batch (default 0)");
  return {explain_cmd, [args] { return cli::Explain(*args); }};
}

Subcommand AddBenchGemm(CLI::App& app) {
  auto bench = std::make_shared<cli::BenchGemmArgs>();
  CLI::App* cmd = app.add_subcommand(
      "bench-gemm", "a GEMM microbenchmark for the simulated GPU: time, TFLOP/s per shape");
  cmd->add_option("--cluster", bench->cluster, "cluster YAML")->required();
  cmd->add_option("--dtype", bench->dtype, "bf16 | fp16 | fp8 (default bf16)");
  cmd->add_option("--shape", bench->shapes,
                  "MxNxK or MxNxKxBATCH (repeatable; default m = n = k from 256 to 16384)");
  cmd->add_flag("--csv", bench->csv, "print m,n,k,batch,time_us,tflops,peak_fraction");
  return {cmd, [bench] { return cli::BenchGemmCommand(*bench); }};
}

Subcommand AddBenchCollective(CLI::App& app) {
  auto bench = std::make_shared<cli::BenchCollectiveArgs>();
  CLI::App* bench_cmd = app.add_subcommand(
      "bench-collective", "nccl-tests for the simulated cluster: time, algbw, busbw per size");
  bench_cmd->add_option("--cluster", bench->cluster, "cluster YAML")->required();
  bench_cmd->add_option("--op", bench->op,
                        "all_reduce | all_gather | reduce_scatter | all_to_all | sendrecv");
  bench_cmd->add_option("--gpus", bench->gpus, "number of GPUs (GPUs 0..N-1)");
  bench_cmd->add_option("--min-bytes", bench->min_bytes, "smallest size (default 8)");
  bench_cmd->add_option("--max-bytes", bench->max_bytes, "largest size (default 1 GiB)");
  bench_cmd->add_option("--algorithm", bench->algorithm,
                        "all-reduce: auto | ring | hierarchical | tree | nvls");
  bench_cmd->add_option("--protocol", bench->protocol,
                        "all-reduce, all-gather, reduce-scatter: auto | LL | LL128 | Simple");
  bench_cmd->add_option("--channels", bench->channels,
                        "NCCL channels of the communicator (default 0: as NCCL sets them)");
  bench_cmd->add_option("--nvls", bench->nvls,
                        "NVLink SHARP: auto (the cluster's intra_node.nvls) | on | off, as "
                        "NCCL_NVLS_ENABLE");
  bench_cmd->add_flag("--csv", bench->csv, "print bytes,time_us,algbw_gbps,busbw_gbps");

  return {bench_cmd, [bench] { return cli::BenchCollectiveCommand(*bench); }};
}

Subcommand AddImportMaxText(CLI::App& import_cmd) {
  auto maxtext = std::make_shared<cli::ImportMaxTextArgs>();
  CLI::App* cmd = import_cmd.add_subcommand(
      "maxtext",
      "MaxText config -> experiment YAML with a JAX-style plan: meshsim import maxtext "
      "BASE.yml [KEY=VALUE ...] --topology NAME");
  cmd->add_option("base", maxtext->base, "MaxText base config (base.yml; '-' reads stdin)")
      ->required();
  cmd->add_option("overrides", maxtext->overrides,
                  "KEY=VALUE overrides, as MaxText's command line takes them (later win)");
  cmd->add_option("--model", maxtext->model,
                  "MaxText model config (default: models/<model_name>.yml next to BASE when "
                  "model_name is set)");
  cmd->add_option("--topology", maxtext->topology,
                  "bundled topology name (tpu-v5p, dgx-h100, ...) or a cluster YAML")
      ->required();
  cmd->add_option("--slices", maxtext->slices,
                  "DCN slices, written as cluster_overrides nodes (default: the product of "
                  "the dcn_*_parallelism values other than -1)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--chips-per-slice", maxtext->chips_per_slice,
                  "chips of one slice (default: the slice shape's, else the topology's "
                  "gpus_per_node)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--slice-shape", maxtext->slice_shape,
                  "a TPU slice's torus, e.g. 4x4x8 (v5p-256), written as cluster_overrides "
                  "intra_node.torus (default: the topology's)");
  cmd->add_option("--name", maxtext->name, "experiment name (default: the output file's stem)");
  cmd->add_option("-o,--output", maxtext->output, "experiment YAML to write (default: stdout)");
  cmd->footer(
      "Keys no layer sets take base.yml @76bd53b0's values; unknown keys are listed in the "
      "header. See README, 'Importing a MaxText config'.");
  return {cmd, [maxtext] { return cli::ImportMaxText(*maxtext); }};
}

// `import hf`, `import megatron` and `import maxtext`, under `import`.
std::vector<Subcommand> AddImport(CLI::App& app) {
  CLI::App* import_cmd = app.add_subcommand("import", "write meshsim YAML from other tools' files");
  import_cmd->require_subcommand(1);
  auto hf = std::make_shared<cli::ImportHfArgs>();
  CLI::App* hf_cmd = import_cmd->add_subcommand(
      "hf",
      "Hugging Face config.json -> model YAML (Llama, Mistral, Mixtral, Qwen2, Qwen2-MoE, "
      "DeepSeek-V2/V3, GPT-NeoX)");
  hf_cmd->add_option("config", hf->config, "config.json ('-' reads stdin)")->required();
  hf_cmd->add_option("-o,--output", hf->output, "model YAML to write (default: stdout)");
  hf_cmd->add_option("--name", hf->name,
                     "model name (default: _name_or_path, the file name, model_type)");
  hf_cmd
      ->add_option("--seq-len", hf->seq_len,
                   "training sequence length (default: max_position_embeddings)")
      ->check(CLI::PositiveNumber);
  auto megatron = std::make_shared<cli::ImportMegatronArgs>();
  CLI::App* megatron_cmd = import_cmd->add_subcommand(
      "megatron",
      "Megatron-LM arguments -> experiment YAML: meshsim import megatron \"ARGS\" "
      "(one quoted string, or @FILE)");
  megatron_cmd->add_option("-o,--output", megatron->output,
                           "experiment YAML to write (default: stdout)");
  megatron_cmd->add_option("--cluster", megatron->cluster,
                           "cluster YAML (default topologies/selene-a100.yaml)");
  megatron_cmd
      ->add_option("--nodes", megatron->nodes, "nodes (default: --world-size / GPUs per node)")
      ->check(CLI::PositiveNumber);
  megatron_cmd->add_option("--name", megatron->name,
                           "experiment name (default: the output file's stem)");
  megatron_cmd->footer(
      "ARGS are Megatron-LM flags (--num-layers, --hidden-size, --tensor-model-parallel-size, "
      "...), plus --world-size N (the number of GPUs) unless --nodes is given; unknown flags "
      "are listed in a warning. See README, 'Importing models and Megatron-LM runs'.");
  // The Megatron arguments are not ours: collect every word CLI11 does not match.
  megatron_cmd->fallthrough(false);
  megatron_cmd->allow_extras();

  auto run_megatron = [megatron, megatron_cmd] {
    megatron->args = megatron_cmd->remaining();
    if (megatron->args.empty()) {
      std::cerr << "meshsim: error: import megatron: expected the Megatron-LM arguments, e.g. "
                   "meshsim import megatron \"--num-layers 32 ...\"\n";
      return static_cast<int>(cli::kBadInput);
    }
    return cli::ImportMegatron(*megatron);
  };
  return {{hf_cmd, [hf] { return cli::ImportHf(*hf); }},
          {megatron_cmd, run_megatron},
          AddImportMaxText(*import_cmd)};
}

Subcommand AddSweep(CLI::App& app, const bool& quiet) {
  auto sweep = std::make_shared<cli::SweepArgs>();
  CLI::App* sweep_cmd = app.add_subcommand(
      "sweep", "simulate every configuration of a sweep (a base experiment and axes)");
  sweep_cmd->add_option("sweep", sweep->sweep, "sweep YAML")->required();
  sweep_cmd->add_option("-o,--outdir", sweep->outdir,
                        "output folder (default results/sweeps/<name>)");
  sweep_cmd->add_option("-j,--threads", sweep->threads, "worker threads (default: one per CPU)");
  sweep_cmd->add_flag("--resume", sweep->resume, "keep the rows of an interrupted run in OUTDIR");
  sweep_cmd->add_option("--shard", sweep->shard,
                        "run shard I of N: configurations with index % N == I");
  sweep_cmd->add_option("--html", sweep->html, "write the HTML explorer to FILE");
  sweep_cmd->add_option("--top", sweep->top,
                        "rows of the fastest-configurations table (default 10)");

  return {sweep_cmd, [sweep, &quiet] {
            sweep->quiet = quiet;
            return cli::Sweep(*sweep);
          }};
}

Subcommand AddMerge(CLI::App& app) {
  auto merge = std::make_shared<cli::MergeArgs>();
  CLI::App* merge_cmd = app.add_subcommand(
      "merge", "join the results of a sweep's shards; fails on a missing or repeated row");
  merge_cmd->add_option("inputs", merge->inputs, "shard output folders")->required();
  merge_cmd->add_option("-o,--outdir", merge->outdir, "output folder")->required();
  merge_cmd->add_option("--html", merge->html, "write the HTML explorer to FILE");
  merge_cmd->add_option("--top", merge->top,
                        "rows of the fastest-configurations table (default 10)");

  return {merge_cmd, [merge] { return cli::Merge(*merge); }};
}

Subcommand AddPlan(CLI::App& app, const bool& quiet) {
  auto plan = std::make_shared<cli::PlanArgs>();
  CLI::App* plan_cmd = app.add_subcommand(
      "plan",
      "every TP x PP x DP (x ZeRO) split of N GPUs: memory per GPU against the budget, "
      "step time and MFU of those that fit");
  plan_cmd->add_option("--model", plan->model, "model YAML")->required();
  plan_cmd
      ->add_option("--cluster", plan->cluster, "cluster YAML (its nodes are set to cover N GPUs)")
      ->required();
  plan_cmd->add_option("--gpus", plan->gpus, "number of GPUs")->required();
  plan_cmd->add_option("--budget-gib", plan->budget_gib,
                       "memory budget per GPU (default: the GPU's memory)");
  plan_cmd->add_option("--headroom", plan->headroom_gib,
                       "GiB per GPU to keep free: a plan fits in budget - headroom (default 0)");
  plan_cmd->add_option("--set", plan->sets,
                       "override a key of the base experiment: --set training.flash_attention=true "
                       "(repeatable; not plan.tp/pp/dp/zero, nor plan.mesh/rules with --jax, which "
                       "the planner varies)");
  plan_cmd->add_option("--top", plan->top, "rows shown (default 20; 0: all)");
  plan_cmd->add_option("--global-batch", plan->global_batch,
                       "sequences per step (default: the smallest multiple of N that is >= 64)");
  plan_cmd->add_option("-j,--threads", plan->threads, "worker threads (default: one per CPU)");
  plan_cmd->add_option("--html", plan->html, "write the HTML explorer to FILE");
  plan_cmd->add_option("--csv", plan->csv, "write every plan's row (results.csv columns) to FILE");
  plan_cmd->add_flag("--jax", plan->jax,
                     "search JAX-style plans: every ICI x DCN size of the mesh axes stage, data "
                     "and tensor, weights replicated or FSDP on data; rows in mesh terms");

  return {plan_cmd, [plan, &quiet] {
            plan->quiet = quiet;
            return cli::Plan(*plan);
          }};
}

// Thread-safe sink: sweep and plan evaluate configurations on worker threads.
void SetUpLogging(int verbose, bool quiet) {
  auto logger = spdlog::stderr_color_mt("meshsim");
  spdlog::set_default_logger(logger);
  spdlog::set_pattern("[%l] %v");
  spdlog::set_level(quiet          ? spdlog::level::err
                    : verbose >= 2 ? spdlog::level::debug
                    : verbose == 1 ? spdlog::level::info
                                   : spdlog::level::warn);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"meshsim: a discrete-event simulator of distributed deep-learning training"};
  app.set_version_flag("--version", std::string("meshsim ") + kMeshsimVersion);
  app.require_subcommand(1);
  app.fallthrough();
  int verbose = 0;
  bool quiet = false;
  app.add_flag("-v,--verbose", verbose, "more log output on stderr (repeat for debug)");
  app.add_flag("-q,--quiet", quiet, "only errors on stderr");
  std::vector<Subcommand> subcommands = {AddRun(app), AddValidate(app), AddExplain(app),
                                         AddBenchCollective(app), AddBenchGemm(app)};
  for (Subcommand& s : AddImport(app)) subcommands.push_back(std::move(s));
  subcommands.push_back(AddSweep(app, quiet));
  subcommands.push_back(AddMerge(app));
  subcommands.push_back(AddPlan(app, quiet));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : cli::kBadInput;
  }
  SetUpLogging(verbose, quiet);
  try {
    for (const Subcommand& s : subcommands) {
      if (*s.cmd) return s.run();
    }
  } catch (const std::exception& e) {
    std::cerr << "meshsim: internal error: " << e.what() << "\n";
    return cli::kInternal;
  }
  return cli::kInternal;
}

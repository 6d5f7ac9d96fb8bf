#include "sim/config/import_megatron.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>

#include "sim/config/import_hf.h"
#include "sim/config/megatron_args.h"
#include "sim/config/megatron_decoders.h"
#include "sim/hw/cluster_spec.h"
#include "sim/plan/plan_names.h"
#include "sim/plan/stages.h"
#include "sim/schedule/model_states.h"
#include "sim/workload/param_count.h"

namespace meshsim {
namespace {

using megatron_internal::Args;
using megatron_internal::Classify;
using megatron_internal::DecodeModel;
using megatron_internal::DecodeStageSplit;
using megatron_internal::Fail;
using megatron_internal::ImportFailure;
using megatron_internal::kAccountEmbedding;
using megatron_internal::kAccountLoss;
using megatron_internal::ListText;
using megatron_internal::N;

// Activation offloading: --cpu-offloading with --cpu-offloading-num-layers N offloads
// the activations of the first N layers (Megatron-Core's default, cpu_offloading_activations).
void DecodeOffload(const Args& a, MegatronImport* out) {
  if (!a.Flag("--cpu-offloading")) return;
  out->plan.cpu_offload_layers = a.Int32("--cpu-offloading-num-layers", 0, 0);
  out->notes.push_back("cpu_offload_layers " + std::to_string(out->plan.cpu_offload_layers) +
                       ": --cpu-offloading --cpu-offloading-num-layers");
}

void DecodeRecompute(const Args& a, MegatronImport* out) {
  PlanSpec& p = out->plan;
  std::string granularity;
  if (a.Has("--recompute-granularity")) {
    granularity = a.Choice("--recompute-granularity", {"full", "selective"}, "");
  } else if (a.Flag("--recompute-activations")) {
    granularity = "selective";
  } else if (a.Flag("--checkpoint-activations")) {
    granularity = "full";
    out->notes.push_back(
        "recompute full: --checkpoint-activations, Megatron-LM's flag for full recomputation "
        "before --recompute-granularity");
  }
  p.recompute = granularity == "full"        ? Recompute::kFull
                : granularity == "selective" ? Recompute::kSelective
                                             : Recompute::kNone;
  const std::vector<std::string> modules = a.List("--recompute-modules");
  if (p.recompute == Recompute::kSelective && !modules.empty() &&
      modules != std::vector<std::string>{"core_attn"}) {
    out->not_modelled.push_back("--recompute-modules " + a.String("--recompute-modules", "") +
                                " is not modelled: meshsim's selective recomputation re-runs "
                                "the attention core only (core_attn, Megatron's default)");
  }
  const std::string method =
      a.Has("--recompute-method") ? a.Choice("--recompute-method", {"uniform", "block"}, "") : "";
  const int layers = a.Int32("--recompute-num-layers", 1, 1);
  if (p.recompute != Recompute::kFull) return;
  const int64_t per_chunk =
      out->model.layers / std::max<int64_t>(1, int64_t{p.pp} * p.virtual_stages);
  const bool exact = method.empty() || (method == "uniform" && layers == 1) ||
                     (method == "block" && layers >= per_chunk);
  if (!exact) {
    out->warnings.push_back("--recompute-method " + method + " --recompute-num-layers " +
                            N(layers) + " is modelled as full recomputation of every layer");
  }
}

// ZeRO stage from the distributed optimizer or an FSDP flavour.
void DecodeSharding(const Args& a, MegatronImport* out) {
  PlanSpec& p = out->plan;
  p.zero = a.Flag("--use-distributed-optimizer") ? 1 : 0;
  if (a.Flag("--use-megatron-fsdp") || a.Flag("--use-custom-fsdp")) {
    const std::vector<std::string> strategies = {"no_shard", "optim", "optim_grads",
                                                 "optim_grads_params"};
    const std::string s =
        a.Choice("--data-parallel-sharding-strategy", strategies, "optim_grads_params");
    p.zero =
        static_cast<int>(std::find(strategies.begin(), strategies.end(), s) - strategies.begin());
    out->notes.push_back("zero " + N(p.zero) + ": Megatron FSDP with sharding strategy " + s);
  } else if (a.Flag("--use-torch-fsdp2")) {
    const bool reshard = !a.Flag("--torch-fsdp2-no-reshard-after-forward");
    p.zero = reshard ? 3 : 2;
    out->notes.push_back(std::string("zero ") + (reshard ? "3" : "2") + ": PyTorch FSDP2" +
                         (reshard ? "" : " without resharding after forward"));
  }
  const int instances = a.Int32("--num-distributed-optimizer-instances", 1, 1);
  if (instances > 1) {
    out->not_modelled.push_back("--num-distributed-optimizer-instances " + N(instances) +
                                " is not modelled: meshsim shards the optimizer over all "
                                "dp*cp ranks (one instance)");
  }
}

// --overlap-param-gather: the distributed optimizer's parameter all-gather bucket by bucket
// under the next forward (plan.framework_options.overlap_param_gather). Megatron-LM accepts
// it only with --use-distributed-optimizer (zero 1 here); otherwise it is not modelled.
void DecodeParamGather(const Args& a, MegatronImport* out) {
  if (!a.Flag("--overlap-param-gather")) return;
  PlanSpec& p = out->plan;
  if (p.zero == 1) {
    p.framework = Framework::kMegatron;
    p.framework_options.overlap_param_gather = true;
    return;
  }
  out->not_modelled.push_back(
      "--overlap-param-gather without --use-distributed-optimizer is not modelled: the "
      "parameters are " +
      std::string(p.zero == 0 ? "not sharded (no parameter all-gather)"
                              : "gathered as the FSDP flavour gathers them"));
}

// --overlap-p2p-communication (older Megatron-LM: off by default) and
// --no-overlap-p2p-communication (newer: on by default); interleaved schedule only.
void DecodeOverlapP2p(const Args& a, MegatronImport* out) {
  PlanSpec& p = out->plan;
  const bool on = a.Flag("--overlap-p2p-communication");
  const bool off = a.Flag("--no-overlap-p2p-communication");
  if (on && off) {
    Fail("--overlap-p2p-communication",
         "given together with --no-overlap-p2p-communication; expected one of them");
  }
  p.overlap_p2p = on && p.schedule == ScheduleKind::kInterleaved;
  if (on && !p.overlap_p2p) {
    out->notes.push_back(
        "overlap_p2p off: --overlap-p2p-communication needs the interleaved schedule "
        "(Megatron turns it off too)");
  } else if (!on && !off && p.schedule == ScheduleKind::kInterleaved) {
    out->notes.push_back(
        "overlap_p2p off: no --overlap-p2p-communication (newer Megatron-LM overlaps by "
        "default and has --no-overlap-p2p-communication instead; add the flag to model that)");
  }
}

// --tp-comm-overlap: Transformer Engine's userbuffers overlap, which Megatron allows only
// with sequence parallelism (and tp > 1).
void DecodeTpCommOverlap(const Args& a, MegatronImport* out) {
  PlanSpec& p = out->plan;
  const bool on = a.Flag("--tp-comm-overlap");
  p.tp_comm_overlap = on && p.sequence_parallel;
  if (on && !p.tp_comm_overlap) {
    out->notes.push_back(
        "tp_comm_overlap off: --tp-comm-overlap needs --sequence-parallel and tp > 1 "
        "(Megatron requires both)");
  }
}

// MoE flags that meshsim checks against what it models (experts not split by TP,
// all-to-all dispatch, grouped expert GEMMs) and the capacity factor.
void DecodeMoePlan(const Args& a, MegatronImport* out) {
  const ModelSpec& m = out->model;
  PlanSpec& p = out->plan;
  const int etp = a.Int32("--expert-tensor-parallel-size", p.tp, 1);
  if (a.Has("--moe-token-dispatcher-type")) {
    a.Choice("--moe-token-dispatcher-type", {"allgather", "alltoall", "flex"}, "");
  }
  if (m.experts == 0) return;
  if (etp != 1) {
    out->not_modelled.push_back(
        (a.Has("--expert-tensor-parallel-size")
             ? "--expert-tensor-parallel-size " + N(etp)
             : "expert tensor parallelism " + N(etp) +
                   " (Megatron's default without --expert-tensor-parallel-size: tp)") +
        " is not modelled: meshsim does not split experts by TP (expert tensor parallelism 1)");
  }
  const std::string dispatcher = a.String("--moe-token-dispatcher-type", "allgather");
  if (p.ep > 1 && dispatcher == "allgather") {
    out->not_modelled.push_back(
        std::string(a.Has("--moe-token-dispatcher-type")
                        ? "--moe-token-dispatcher-type allgather"
                        : "the allgather token dispatcher (Megatron's default without "
                          "--moe-token-dispatcher-type)") +
        " is not modelled: meshsim dispatches tokens with all-to-all over the ep ranks "
        "(--moe-token-dispatcher-type alltoall)");
  }
  if (dispatcher == "flex") p.moe_dispatcher = MoeDispatcher::kFlex;
  const int local = std::max(1, m.experts / p.ep);
  if (local > 1 && !a.Flag("--moe-grouped-gemm")) {
    out->not_modelled.push_back(
        "expert GEMMs one expert at a time (no --moe-grouped-gemm) are not modelled: meshsim "
        "times the " +
        N(local) + " local experts as one grouped GEMM per weight matrix");
  }
  p.moe_capacity_factor = a.Positive("--moe-expert-capacity-factor", 0.0);
}

void DecodePlan(const Args& a, MegatronImport* out) {
  PlanSpec& p = out->plan;
  p.tp = a.Int32("--tensor-model-parallel-size", 1, 1);
  p.pp = a.Int32("--pipeline-model-parallel-size", 1, 1);
  p.cp = a.Int32("--context-parallel-size", 1, 1);
  p.ep = a.Int32("--expert-model-parallel-size", 1, 1);
  p.micro_batch = a.Int32("--micro-batch-size", 1, 1);
  out->global_batch_given = a.Has("--global-batch-size");
  p.global_batch = a.Int32("--global-batch-size", 0, 1);
  out->world_size = a.Int32("--world-size", 0, 1);
  p.sequence_parallel = a.Flag("--sequence-parallel");
  if (p.sequence_parallel && p.tp == 1) {
    p.sequence_parallel = false;
    out->notes.push_back("sequence_parallel off: tp is 1 (Megatron disables it too)");
  }
  const std::vector<std::string> cp_comm = a.List("--cp-comm-type");
  if (p.cp > 1 && std::any_of(cp_comm.begin(), cp_comm.end(),
                              [](const std::string& t) { return t != "p2p"; })) {
    out->not_modelled.push_back("--cp-comm-type " + a.String("--cp-comm-type", "") +
                                " is not modelled: meshsim runs context parallelism as ring "
                                "attention passing K/V chunks point to point (p2p)");
  }
  p.schedule = ScheduleKind::kOneFOneB;
  p.virtual_stages = 1;
  // Megatron counts the embedding and the loss as layers here when told to account for them.
  const int layers = out->model.layers;
  const int accounted = (a.Flag(kAccountEmbedding) ? 1 : 0) + (a.Flag(kAccountLoss) ? 1 : 0);
  const int units = layers + accounted;
  // "--num-layers 126" or "--num-layers 126 + 2 (embedding and loss accounted) = 128".
  const std::string units_text = "--num-layers " + N(layers) +
                                 (accounted == 0 ? ""
                                                 : " + " + N(accounted) + " (" +
                                                       (accounted == 2 ? "embedding and loss"
                                                        : a.Flag(kAccountEmbedding) ? "embedding"
                                                                                    : "loss") +
                                                       " accounted) = " + N(units));
  if (a.Has("--num-layers-per-virtual-pipeline-stage")) {
    const int per = a.Int32("--num-layers-per-virtual-pipeline-stage", 1, 1);
    const int64_t chunk_layers = int64_t{p.pp} * per;  // at most 2^60
    if (units % chunk_layers != 0) {
      Fail("--num-layers-per-virtual-pipeline-stage",
           units_text + " is not divisible by pp * " + N(per) + " = " + N(chunk_layers));
    }
    p.virtual_stages = static_cast<int>(units / chunk_layers);
    out->notes.push_back(
        "schedule interleaved, virtual_stages = " +
        (accounted == 0 ? std::string("layers") : "(layers + " + N(accounted) + " accounted)") +
        " / (pp * num-layers-per-virtual-pipeline-stage) = " + N(units) + " / (" + N(p.pp) + " * " +
        N(per) + ") = " + N(p.virtual_stages));
  } else if (a.Has("--num-virtual-stages-per-pipeline-rank")) {
    p.virtual_stages = a.Int32("--num-virtual-stages-per-pipeline-rank", 1, 1);
  }
  if (p.virtual_stages > 1) p.schedule = ScheduleKind::kInterleaved;
  DecodeStageSplit(a, out);
  DecodeOverlapP2p(a, out);
  DecodeTpCommOverlap(a, out);
  DecodeSharding(a, out);
  DecodeParamGather(a, out);
  out->overlap_grad_reduce = a.Flag("--overlap-grad-reduce");
  out->ddp_bucket_params = a.Int("--ddp-bucket-size", 0, 1);
  DecodeRecompute(a, out);
  DecodeOffload(a, out);
  DecodeMoePlan(a, out);
}

// Flash attention: --use-flash-attn, or an --attention-backend that runs a fused kernel
// (auto picks Transformer Engine's fused or flash attention unless --transformer-impl local).
void DecodeAttention(const Args& a, MegatronImport* out) {
  TrainingSpec& t = out->training;
  const std::string impl =
      a.Choice("--transformer-impl", {"transformer_engine", "local", "inference_optimized"},
               "transformer_engine");
  t.flash_attention = a.Flag("--use-flash-attn");
  if (a.Has("--attention-backend")) {
    const std::string backend =
        a.Choice("--attention-backend", {"flash", "fused", "unfused", "local", "auto"}, "");
    const bool fused =
        backend == "flash" || backend == "fused" || (backend == "auto" && impl != "local");
    t.flash_attention = t.flash_attention || fused;
    if (backend == "auto") {
      out->notes.push_back(std::string("flash_attention ") + (fused ? "true" : "false") +
                           ": --attention-backend auto " +
                           (fused ? "picks Transformer Engine's fused or flash attention"
                                  : "with --transformer-impl local is unfused"));
    }
  } else if (!t.flash_attention) {
    out->notes.push_back(
        "flash_attention false: no --use-flash-attn or --attention-backend (newer Megatron-LM "
        "defaults to --attention-backend auto, a fused kernel with Transformer Engine; add it "
        "if the run used one)");
  }
}

// Gradient buffers: Megatron keeps fp32 main_grad with --bf16 (unless --grad-reduce-in-bf16)
// or --accumulate-allreduce-grads-in-fp32; with --fp16 alone they are fp16.
void DecodeGradients(const Args& a, MegatronImport* out) {
  TrainingSpec& t = out->training;
  const bool fp32 = a.Flag("--accumulate-allreduce-grads-in-fp32");
  if (a.Flag("--grad-reduce-in-bf16") && !fp32) {
    t.grad_accum_dtype = GradAccumDtype::kSame;
    out->notes.push_back("grad_accum_dtype same: --grad-reduce-in-bf16");
    return;
  }
  t.grad_accum_dtype = GradAccumDtype::kFp32;
  if (t.dtype == Dtype::kFp16 && !fp32) {
    out->warnings.push_back(
        "--fp16 without --accumulate-allreduce-grads-in-fp32: Megatron keeps fp16 gradient "
        "buffers (reduced in fp16) and fp32 copies for the optimizer step (20 bytes per "
        "parameter with Adam); meshsim models fp32 gradient buffers (grad_accum_dtype fp32: 18 "
        "bytes per parameter, reduced in fp32)");
  }
}

// FP8 primary weights (--fp8-param-gather) and the precision-aware optimizer's moments
// (--use-precision-aware-optimizer with --exp-avg-dtype and --exp-avg-sq-dtype both bf16).
void DecodeOptimizerPrecision(const Args& a, MegatronImport* out) {
  TrainingSpec& t = out->training;
  t.fp8_param_gather = a.Flag("--fp8-param-gather");
  if (!a.Flag("--use-precision-aware-optimizer")) return;
  const std::vector<std::string> kDtypes = {"fp32", "fp16", "bf16", "fp8"};
  const std::string avg = a.Choice("--exp-avg-dtype", kDtypes, "fp32");
  const std::string avg_sq = a.Choice("--exp-avg-sq-dtype", kDtypes, "fp32");
  if (avg == "bf16" && avg_sq == "bf16") {
    t.moments_dtype = MomentsDtype::kBf16;
    out->notes.push_back("moments_dtype bf16: --exp-avg-dtype bf16 --exp-avg-sq-dtype bf16");
  } else if (avg != "fp32" || avg_sq != "fp32") {
    out->not_modelled.push_back("--exp-avg-dtype " + avg + " --exp-avg-sq-dtype " + avg_sq +
                                " is not modelled: meshsim keeps both moments in fp32 or both "
                                "in bf16; using fp32");
  }
}

void DecodeTraining(const Args& a, MegatronImport* out) {
  TrainingSpec& t = out->training;
  if (a.Has("--fp8-format")) {
    a.Choice("--fp8-format", {"e4m3", "hybrid"}, "");
    t.dtype = Dtype::kFp8;
  } else if (a.Flag("--bf16")) {
    t.dtype = Dtype::kBf16;
  } else if (a.Flag("--fp16")) {
    t.dtype = Dtype::kFp16;
  } else {
    t.dtype = Dtype::kBf16;
    out->warnings.push_back(
        "no --bf16, --fp16 or --fp8-format: Megatron would train in fp32, "
        "which meshsim does not model; using bf16");
  }
  const std::string recipe = a.Choice(
      "--fp8-recipe", {"delayed", "tensorwise", "mxfp8", "blockwise", "custom"}, "delayed");
  // tensorwise: Megatron's name for TE's current scaling (Float8CurrentScaling).
  if (recipe == "tensorwise") t.fp8_recipe = Fp8Recipe::kCurrent;
  if (recipe == "blockwise") t.fp8_recipe = Fp8Recipe::kBlockwise;
  if (recipe == "mxfp8") t.fp8_recipe = Fp8Recipe::kMxfp8;
  if (t.dtype == Dtype::kFp8 && recipe == "custom") {
    out->not_modelled.push_back("--fp8-recipe " + recipe +
                                " is not modelled: meshsim models TE's delayed, tensorwise "
                                "(current), blockwise and mxfp8 recipes; using delayed");
  }
  const std::string optimizer = a.String("--optimizer", "adam");
  t.optimizer = optimizer == "sgd" ? Optimizer::kSgd : Optimizer::kAdam;
  if (optimizer != "adam" && optimizer != "sgd") {
    out->not_modelled.push_back("--optimizer " + optimizer +
                                " is not modelled: meshsim models Adam (12 bytes of optimizer "
                                "state per parameter and its update kernels)");
  }
  if (a.String("--cuda-graph-impl", "none") != "none") {
    out->not_modelled.push_back("--cuda-graph-impl " + a.String("--cuda-graph-impl", "") +
                                " is not modelled: meshsim charges the cluster's "
                                "kernel_overhead_us to every kernel, as launches without CUDA "
                                "graphs cost");
  }
  DecodeGradients(a, out);
  DecodeOptimizerPrecision(a, out);
  DecodeAttention(a, out);
}

MegatronImport Parse(const std::string& text) {
  Result<std::vector<std::string>> tokens = SplitShellWords(text);
  if (!tokens.ok()) throw ImportFailure{tokens.error()};
  MegatronImport out;
  out.args = tokens.value();
  const Args a(Classify(out.args, &out));
  out.model.name = "megatron";
  DecodeModel(a, &out);
  DecodePlan(a, &out);
  DecodeTraining(a, &out);
  return out;
}

// "160", "0.4", "701243": megabytes as the YAML writes them.
std::string Megabytes(int64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.15g", static_cast<double>(bytes) / 1e6);
  return buf;
}

// The DP gradient bucket as Megatron-Core forms it: with --overlap-grad-reduce,
// --ddp-bucket-size parameters or max(40M, 1M * dp*cp); without it one bucket per model
// chunk, reduced once the backward pass is over.
void ResolveBucket(MegatronImport* run) {
  PlanSpec& p = run->plan;
  const double grad_bytes = GradientBytesPerParam(run->training);
  const int64_t replicas = static_cast<int64_t>(p.dp) * p.cp;
  // Bytes as a plan may hold them: at most the schema's bound on plan.dp_bucket_mb.
  const auto bucket_bytes = [](double bytes) {
    return static_cast<int64_t>(std::min(bytes, PlanSpec::kMaxDpBucketBytes));
  };
  if (run->overlap_grad_reduce) {
    const bool given = run->ddp_bucket_params > 0;
    const double params = given ? static_cast<double>(run->ddp_bucket_params)
                                : std::max(40e6, 1e6 * static_cast<double>(replicas));
    p.dp_bucket_bytes = bucket_bytes(params * grad_bytes);
    run->notes.push_back(
        "dp_bucket_mb " + Megabytes(p.dp_bucket_bytes) + ": " +
        N(static_cast<long long>(std::min(params, 9e18))) + " parameters (" +
        (given ? std::string("--ddp-bucket-size")
               : "Megatron's default max(40M, 1M * dp*cp) with --overlap-grad-reduce") +
        ") of " + N(static_cast<long long>(grad_bytes)) + "-byte gradients");
    return;
  }
  const double all = CountParams(run->model).total * grad_bytes;
  p.dp_bucket_bytes = bucket_bytes(std::ceil(all / 1e6) * 1e6);
  run->notes.push_back(
      "dp_bucket_mb " + Megabytes(p.dp_bucket_bytes) +
      ", all of the model's gradients: without --overlap-grad-reduce Megatron "
      "reduces them in one bucket after the backward pass" +
      (run->ddp_bucket_params > 0 ? " (--ddp-bucket-size applies only with it)" : ""));
  if (replicas > 1 && p.schedule == ScheduleKind::kInterleaved) {
    run->warnings.push_back(
        "without --overlap-grad-reduce Megatron reduces the gradients after the whole backward "
        "pass; meshsim reduces each model chunk's gradients when that chunk's last backward "
        "ends, overlapped with the other chunks' backward");
  }
}

}  // namespace

Result<MegatronImport> ParseMegatronArgs(const std::string& args) {
  try {
    return Parse(args);
  } catch (const ImportFailure& f) {
    return f.error;
  }
}

Result<int> ResolveMegatronWorld(MegatronImport* run, int gpus_per_node, int nodes,
                                 int* gpus_per_node_override) {
  *gpus_per_node_override = 0;
  PlanSpec& p = run->plan;
  InputError e;
  e.file = kMegatronSource;
  e.key = "--world-size";
  int64_t world = run->world_size;
  if (nodes > 0) {
    const int64_t node_gpus = int64_t{nodes} * gpus_per_node;
    if (world > 0 && world != node_gpus) {
      e.message = "--world-size " + N(world) + " disagrees with --nodes " + N(nodes) + " x " +
                  N(gpus_per_node) + " GPUs per node = " + N(node_gpus);
      return e;
    }
    world = node_gpus;
  } else if (world == 0) {
    e.message =
        "required flag is missing (the number of GPUs, which Megatron gets from its "
        "launcher; or give meshsim import's --nodes)";
    return e;
  } else if (world % gpus_per_node == 0) {
    nodes = static_cast<int>(world / gpus_per_node);
  } else if (world < gpus_per_node && gpus_per_node % world == 0) {
    nodes = 1;
    *gpus_per_node_override = static_cast<int>(world);
  } else {
    e.message = "--world-size " + N(world) + " is not a whole number of nodes of " +
                N(gpus_per_node) + " GPUs";
    return e;
  }
  if (world > kMaxClusterGpus) {
    e.message = "expected at most " + N(kMaxClusterGpus) + " GPUs, found a world of " + N(world);
    return e;
  }
  // tp, pp and cp are at most 2^30: the product, capped above the world, fits an int64.
  int64_t model_parallel = 1;
  for (const int d : {p.tp, p.pp, p.cp}) model_parallel = std::min(model_parallel * d, world + 1);
  if (world % model_parallel != 0) {
    e.message = "world size " + N(world) + " is not divisible by tp*pp*cp = " + N(p.tp) + "*" +
                N(p.pp) + "*" + N(p.cp) + " = " +
                (model_parallel > world ? "more than " + N(world) : N(model_parallel));
    return e;
  }
  p.dp = static_cast<int>(world / model_parallel);
  run->notes.push_back("dp = world / (tp*pp*cp) = " + N(world) + " / " + N(model_parallel) + " = " +
                       N(p.dp) + "; nodes " + N(nodes));
  if (!run->global_batch_given) {
    const int64_t global_batch = int64_t{p.micro_batch} * p.dp;
    if (global_batch > (1 << 30)) {
      e.key = "--micro-batch-size";
      e.message = "global_batch = micro_batch * dp = " + N(p.micro_batch) + " * " + N(p.dp) +
                  " = " + N(global_batch) + " is not a plausible count";
      return e;
    }
    p.global_batch = static_cast<int>(global_batch);
    run->notes.push_back("global_batch = micro_batch * dp = " + N(p.global_batch) +
                         " (Megatron's default without --global-batch-size)");
  }
  ResolveBucket(run);
  return nodes;
}

std::string MegatronExperimentYaml(const MegatronImport& run, const std::string& name,
                                   const std::string& cluster_path, int nodes,
                                   int gpus_per_node_override) {
  const PlanSpec& p = run.plan;
  std::ostringstream o;
  std::string args;
  for (const std::string& t : run.args) {
    const bool plain = !t.empty() && t.find_first_of(" \t\n'\"\\$") == std::string::npos;
    args += (args.empty() ? "" : " ") + (plain ? t : "'" + t + "'");
  }
  o << YamlComment("Generated by `meshsim import megatron` from these Megatron-LM arguments: " +
                   args);
  o << ImportNotesYaml(run.notes, run.warnings, run.not_modelled, run.unknown,
                       "Unknown flags, ignored");
  ModelSpec model = run.model;
  model.name = name;
  o << "name: " << YamlScalar(name) << "\n";
  o << "model:\n" << ModelYamlKeys(model, "  ");
  o << "cluster: " << YamlScalar(cluster_path) << "\n";
  o << "cluster_overrides: {nodes: " << nodes;
  if (gpus_per_node_override > 0) o << ", gpus_per_node: " << gpus_per_node_override;
  o << "}\n";
  const std::string& schedule = NameOf(ScheduleNames(), p.schedule);
  const std::string& recompute = NameOf(RecomputeNames(), p.recompute);
  o << "plan:\n"
    << "  tp: " << p.tp << "\n"
    << "  pp: " << p.pp << "\n"
    << "  dp: " << p.dp << "\n"
    << "  cp: " << p.cp << "\n"
    << "  ep: " << p.ep << "\n"
    << "  zero: " << p.zero << "\n"
    << "  sequence_parallel: " << (p.sequence_parallel ? "true" : "false") << "\n"
    << "  recompute: " << recompute << "\n"
    << "  schedule: " << schedule << "\n"
    << "  virtual_stages: " << p.virtual_stages << "\n";
  if (!p.stage_layers.empty()) o << "  stage_layers: " << ListText(p.stage_layers) << "\n";
  o << "  micro_batch: " << p.micro_batch << "\n"
    << "  global_batch: " << p.global_batch << "\n"
    << "  mesh_order: [tp, cp, ep, dp, pp]\n";
  o << "  dp_bucket_mb: " << Megabytes(p.dp_bucket_bytes) << "\n";
  if (p.overlap_p2p) o << "  overlap_p2p: true\n";
  if (p.tp_comm_overlap) o << "  tp_comm_overlap: true\n";
  if (p.framework_options.overlap_param_gather) {
    o << "  framework: megatron\n"
      << "  framework_options: {overlap_param_gather: true}\n";
  }
  if (p.cpu_offload_layers > 0) o << "  cpu_offload_layers: " << p.cpu_offload_layers << "\n";
  if (p.moe_dispatcher == MoeDispatcher::kFlex) o << "  moe_dispatcher: flex\n";
  if (p.moe_capacity_factor > 0) {
    char factor[32];
    std::snprintf(factor, sizeof factor, "%.15g", p.moe_capacity_factor);
    o << "  moe_capacity_factor: " << factor << "\n";
  }
  const TrainingSpec& t = run.training;
  o << "training:\n"
    << "  dtype: " << DtypeName(t.dtype) << "\n";
  if (t.dtype == Dtype::kFp8) o << "  fp8_recipe: " << Fp8RecipeName(t.fp8_recipe) << "\n";
  o << "  optimizer: " << (t.optimizer == Optimizer::kSgd ? "sgd" : "adam") << "\n"
    << "  grad_accum_dtype: " << (t.grad_accum_dtype == GradAccumDtype::kFp32 ? "fp32" : "same")
    << "\n";
  if (t.flash_attention) o << "  flash_attention: true\n";
  if (t.fp8_param_gather && t.dtype == Dtype::kFp8) o << "  fp8_param_gather: true\n";
  if (t.moments_dtype == MomentsDtype::kBf16) o << "  moments_dtype: bf16\n";
  return o.str();
}

std::string MegatronFlagOf(const std::string& key) {
  static const std::map<std::string, std::string> kFlags = {
      {"plan", "--world-size"},
      {"plan.tp", "--tensor-model-parallel-size"},
      {"plan.pp", "--pipeline-model-parallel-size"},
      {"plan.dp", "--world-size"},
      {"plan.cp", "--context-parallel-size"},
      {"plan.ep", "--expert-model-parallel-size"},
      {"plan.schedule", "--num-layers-per-virtual-pipeline-stage"},
      {"plan.virtual_stages", "--num-layers-per-virtual-pipeline-stage"},
      {"plan.stage_layers", "--decoder-first-pipeline-num-layers"},
      {"plan.micro_batch", "--micro-batch-size"},
      {"plan.global_batch", "--global-batch-size"},
      {"plan.zero", "--use-distributed-optimizer"},
      {"plan.dp_bucket_mb", "--ddp-bucket-size"},
      {"plan.moe_capacity_factor", "--moe-expert-capacity-factor"},
      {"plan.moe_dispatcher", "--moe-token-dispatcher-type"},
      {"model.layers", "--num-layers"},
      {"model.hidden", "--hidden-size"},
      {"model.heads", "--num-attention-heads"},
      {"model.kv_heads", "--num-query-groups"},
      {"model.ffn_hidden", "--ffn-hidden-size"},
      {"model.vocab", "--vocab-size"},
      {"model.seq_len", "--seq-length"},
      {"model.experts", "--num-experts"},
      {"model.top_k", "--moe-router-topk"},
      {"model.moe_router_num_groups", "--moe-router-num-groups"},
      {"model.moe_router_group_topk", "--moe-router-group-topk"},
      {"model.moe_ffn_hidden", "--moe-ffn-hidden-size"},
      {"training.dtype", "--bf16/--fp16/--fp8-format"},
      {"training.fp8_recipe", "--fp8-recipe"},
      {"plan.cpu_offload_layers", "--cpu-offloading-num-layers"},
  };
  // plan.stage_layers[3] -> plan.stage_layers
  auto it = kFlags.find(key.substr(0, key.find('[')));
  return it == kFlags.end() ? std::string() : it->second;
}

}  // namespace meshsim

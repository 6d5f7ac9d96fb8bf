// Megatron-LM arguments -> the experiment's plan keys: parallel sizes, schedule, sharding,
// overlaps, recomputation, offloading and the MoE dispatcher (megatron_decoders.h).
#include <algorithm>
#include <string>
#include <vector>

#include "sim/config/megatron_decoders.h"
#include "sim/config/recompute_modules.h"
#include "sim/plan/plan_names.h"

namespace meshsim::megatron_internal {
namespace {

// Activation offloading: --cpu-offloading with --cpu-offloading-num-layers N offloads
// the activations of the first N layers (Megatron-Core's default, cpu_offloading_activations).
void DecodeOffload(const Args& a, MegatronImport* out) {
  if (!a.Flag("--cpu-offloading")) return;
  out->plan.cpu_offload_layers = a.Int32("--cpu-offloading-num-layers", 0, 0);
  out->notes.push_back("cpu_offload_layers " + std::to_string(out->plan.cpu_offload_layers) +
                       ": --cpu-offloading --cpu-offloading-num-layers");
}

// --recompute-modules (with selective granularity; Megatron's default core_attn): the
// modules meshsim models map to plan.recompute_modules, the others are reported.
void DecodeRecomputeModules(const Args& a, MegatronImport* out) {
  if (!a.Has("--recompute-modules")) return;
  PlanSpec& p = out->plan;
  p.recompute_modules = NoRecomputeModules();
  std::vector<std::string> skipped;
  for (const std::string& m : a.List("--recompute-modules")) {
    if (!SetRecomputeModule(m, &p.recompute_modules)) skipped.push_back(m);
  }
  out->notes.push_back("recompute_modules " + RecomputeModulesText(p.recompute_modules) +
                       ": --recompute-modules");
  for (const std::string& m : skipped) {
    out->not_modelled.push_back("--recompute-modules " + m +
                                " is not modelled: meshsim recomputes core_attn, layernorm, "
                                "moe_act and mlp; its activations are kept");
  }
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
  if (p.recompute == Recompute::kSelective) DecodeRecomputeModules(a, out);
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
  // Megatron-Core's moe_flex_dispatcher_backend (default deepep).
  if (a.Choice("--moe-flex-dispatcher-backend", {"deepep", "hybridep"}, "deepep") == "hybridep") {
    p.moe_flex_backend = MoeFlexBackend::kHybridEp;
  }
  const int local = std::max(1, m.experts / p.ep);
  if (local > 1 && !a.Flag("--moe-grouped-gemm")) {
    out->not_modelled.push_back(
        "expert GEMMs one expert at a time (no --moe-grouped-gemm) are not modelled: meshsim "
        "times the " +
        N(local) + " local experts as one grouped GEMM per weight matrix");
  }
  p.moe_capacity_factor = a.Positive("--moe-expert-capacity-factor", 0.0);
}

}  // namespace

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

// Megatron-Core's MoE options that meshsim models (megatron/core/transformer/
// transformer_config.py and moe/experts.py @ NVIDIA/Megatron-LM core_v0.19.0).
void DecodeMoeOptions(const Args& a, MegatronImport* out) {
  const ModelSpec& m = out->model;
  const TrainingSpec& t = out->training;
  PlanSpec& p = out->plan;
  FrameworkOptions& f = p.framework_options;
  if (m.experts == 0) return;
  const bool hybridep =
      p.moe_dispatcher == MoeDispatcher::kFlex && p.moe_flex_backend == MoeFlexBackend::kHybridEp;
  // The flex dispatcher's SMs: --moe-flex-dispatcher-num-sms, or the deprecated
  // --moe-hybridep-num-sms / --moe-deepep-num-sms, which __post_init__ routes to it (an
  // error where they differ).
  int sms = a.Int32("--moe-flex-dispatcher-num-sms", 0, 1);
  if (sms == 0) {
    const int deepep = a.Int32("--moe-deepep-num-sms", 0, 1);
    const int hybrid = a.Int32("--moe-hybridep-num-sms", 0, 1);
    if (deepep > 0 && hybrid > 0 && deepep != hybrid) {
      Fail("--moe-hybridep-num-sms", "conflicts with --moe-deepep-num-sms " + N(deepep) +
                                         " (Megatron-Core: set --moe-flex-dispatcher-num-sms)");
    }
    sms = hybrid > 0 ? hybrid : deepep;
  }
  if (sms > 0 && p.moe_dispatcher == MoeDispatcher::kFlex && p.ep > 1) {
    f.moe_flex_dispatcher_num_sms = sms;
  }
  // --use-transformer-engine-op-fuser: TEGroupedMLP asserts _is_fused_impl_supported, which
  // for a gated MLP needs NVTE_CUTEDSL_FUSED_GROUPED_MLP=1, TE's CuTe-DSL fused grouped MLP.
  if (a.Flag("--use-transformer-engine-op-fuser")) {
    if (m.FfnMatrices() == 3 && t.dtype == Dtype::kFp8 && t.fp8_recipe == Fp8Recipe::kMxfp8) {
      f.fused_grouped_mlp = true;
      out->notes.push_back(
          "fused_grouped_mlp: --use-transformer-engine-op-fuser with a gated MLP runs Transformer "
          "Engine's CuTe-DSL fused grouped MLP (Megatron-Core asserts it: "
          "NVTE_CUTEDSL_FUSED_GROUPED_MLP=1)");
    } else {
      out->not_modelled.push_back(
          "--use-transformer-engine-op-fuser is not modelled outside MXFP8 with a gated MLP: "
          "meshsim times the experts as GroupedLinear's per-expert GEMMs");
    }
  }
  // --moe-paged-stash acts in the fused grouped MLP's forward only (TEGroupedMLP.
  // _fused_forward), which HybridEP feeds (docs/user-guide/features/paged_stash.md).
  if (a.Flag("--moe-paged-stash")) {
    if (f.fused_grouped_mlp && hybridep && p.recompute != Recompute::kFull) {
      f.moe_paged_stash = true;
    } else {
      out->not_modelled.push_back(
          "--moe-paged-stash is not modelled here: meshsim models the paged stash with the "
          "fused grouped MLP (--use-transformer-engine-op-fuser, MXFP8), HybridEP and no full "
          "recomputation");
    }
  }
  // The EP all-to-all overlap, where meshsim models it (plan/validate.cc CheckEpOverlap,
  // as Megatron-Core's checks); otherwise one of the two overlaps of the experts' backward.
  if (a.Flag("--overlap-moe-expert-parallel-comm")) {
    const bool schedule = p.pp == 1 || (p.schedule == ScheduleKind::kInterleaved && p.overlap_p2p);
    if (p.ep > 1 && p.recompute != Recompute::kFull && schedule) {
      f.overlap_moe_expert_parallel_comm = true;
    } else {
      out->not_modelled.push_back(
          "--overlap-moe-expert-parallel-comm is not modelled here: meshsim overlaps the EP "
          "all-to-alls with ep > 1, no full recomputation and, with pipelining, the "
          "interleaved schedule with overlapped sends and receives");
    }
  }
  if (a.Flag("--overlap-dispatch-backward-with-experts-wgrad") && p.ep > 1 &&
      !f.overlap_moe_expert_parallel_comm) {
    f.overlap_dispatch_backward_with_experts_wgrad = true;
  }
}

}  // namespace meshsim::megatron_internal

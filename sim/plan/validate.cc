#include "sim/plan/validate.h"

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <string>

#include "sim/plan/plan_names.h"
#include "sim/plan/stages.h"

namespace meshsim {
namespace {

std::string N(long long v) { return std::to_string(v); }

// Products of plan degrees (each in [1, 2^31)) are taken in int64 and capped at kOverInt:
// a product that large equals no GPU count and divides no batch or layer count.
constexpr int64_t kOverInt = int64_t{1} << 31;
int64_t Product(std::initializer_list<int> factors) {
  int64_t p = 1;
  for (const int f : factors) p = std::min(p * f, kOverInt);
  return p;
}
std::string ProductText(int64_t p) { return p < kOverInt ? N(p) : "more than 2^31"; }

// Every degree and size >= 1, ZeRO 0-3, and tp*pp*dp*cp = the cluster's GPUs.
Status CheckDegrees(const PlanSpec& p, const ClusterSpec& cluster) {
  struct Positive {
    const char* key;
    int value;
  };
  for (const Positive& f :
       {Positive{"plan.tp", p.tp}, Positive{"plan.pp", p.pp}, Positive{"plan.dp", p.dp},
        Positive{"plan.cp", p.cp}, Positive{"plan.ep", p.ep},
        Positive{"plan.virtual_stages", p.virtual_stages},
        Positive{"plan.micro_batch", p.micro_batch},
        Positive{"plan.global_batch", p.global_batch}}) {
    if (f.value < 1) return BadKey(f.key, "expected an integer >= 1, found " + N(f.value));
  }
  if (p.zero < 0 || p.zero > 3)
    return BadKey("plan.zero", "expected 0, 1, 2 or 3, found " + N(p.zero));
  // FSDP's sharding strategies are NO_SHARD, SHARD_GRAD_OP and FULL_SHARD: no ZeRO-1.
  if (p.zero == 1 && (p.framework == Framework::kFsdp || p.framework == Framework::kFsdp2)) {
    return BadKey("plan.zero",
                  "expected 0, 2 or 3 with framework fsdp or fsdp2 (NO_SHARD, SHARD_GRAD_OP, "
                  "FULL_SHARD), found 1");
  }
  // Kept to the last backward, parameters must not be freed after each forward (FSDP2
  // would regather them there; not modelled).
  if (!p.framework_options.reshard_after_backward && p.framework_options.reshard_after_forward) {
    return BadKey("plan.framework_options.reshard_after_backward",
                  "false needs plan.framework_options.reshard_after_forward false");
  }
  const int gpus = cluster.TotalGpus();
  const int64_t ranks = Product({p.tp, p.pp, p.dp, p.cp});
  if (ranks != gpus) {
    return BadKey("plan", "tp*pp*dp*cp = " + N(p.tp) + "*" + N(p.pp) + "*" + N(p.dp) + "*" +
                              N(p.cp) + " = " + ProductText(ranks) + " but the cluster has " +
                              N(gpus) + " GPUs (nodes " + N(cluster.nodes) + " x gpus_per_node " +
                              N(cluster.gpus_per_node) + ")");
  }
  return Ok{};
}

// Heads over tp, layers over the pipeline's virtual stages (plan.stage_layers, or a
// default split that exists; chunks only with the interleaved schedule), the batch over
// micro-batches and dp.
Status CheckTensorAndPipelineSplits(const PlanSpec& p, const ModelSpec& m) {
  if (m.heads % p.tp != 0) {
    return BadKey("plan.tp",
                  "tp = " + N(p.tp) + " does not divide the model's heads = " + N(m.heads));
  }
  if (m.kv_heads % p.tp != 0) {
    return BadKey("plan.tp",
                  "tp = " + N(p.tp) + " does not divide the model's kv_heads = " + N(m.kv_heads));
  }
  // Megatron-LM's MambaMixer splits heads and groups over tp.
  const bool mamba = m.layer_pattern.find('M') != std::string::npos;
  if (mamba && (m.mamba_heads % p.tp != 0 || m.mamba_groups % p.tp != 0)) {
    return BadKey("plan.tp", "tp = " + N(p.tp) + " does not divide the model's mamba_heads = " +
                                 N(m.mamba_heads) + " and mamba_groups = " + N(m.mamba_groups));
  }
  if (p.schedule != ScheduleKind::kInterleaved && p.virtual_stages != 1) {
    return BadKey("plan.virtual_stages",
                  "virtual_stages = " + N(p.virtual_stages) + " needs schedule: interleaved");
  }
  if (Status s = CheckStageLayers(p, m); !s.ok()) return s;
  const int64_t sequences = Product({p.micro_batch, p.dp});
  if (p.global_batch % sequences != 0) {
    return BadKey("plan.global_batch",
                  "global_batch = " + N(p.global_batch) + " is not divisible by micro_batch*dp = " +
                      N(p.micro_batch) + "*" + N(p.dp) + " = " + ProductText(sequences));
  }
  return Ok{};
}

// Interleaving needs pp >= 2, v >= 2 and micro-batches a multiple of pp.
Status CheckInterleaved(const PlanSpec& p) {
  if (p.schedule != ScheduleKind::kInterleaved) return Ok{};
  if (p.pp < 2) return BadKey("plan.schedule", "interleaved needs pp >= 2, found pp = " + N(p.pp));
  if (p.virtual_stages < 2) {
    return BadKey("plan.virtual_stages",
                  "the interleaved schedule needs virtual_stages >= 2 (model chunks per stage), "
                  "found " +
                      N(p.virtual_stages) + "; with one chunk per stage it is schedule: 1f1b");
  }
  if (p.MicroBatches() % p.pp != 0) {
    return BadKey("plan.global_batch", "the interleaved schedule needs micro-batches (" +
                                           N(p.MicroBatches()) +
                                           ") to be a multiple of pp = " + N(p.pp));
  }
  return Ok{};
}

// The sequence over cp, experts over ep (which divides tp*dp*cp: Megatron-Core's expert
// parallelism folded over the TP, CP and DP ranks of a stage with expert TP 1).
Status CheckContextAndExperts(const PlanSpec& p, const ModelSpec& m) {
  if (m.seq_len % p.cp != 0) {
    return BadKey("plan.cp",
                  "cp = " + N(p.cp) + " does not divide the model's seq_len = " + N(m.seq_len));
  }
  if (p.cp > 1 && m.layer_pattern.find('M') != std::string::npos) {
    return BadKey("plan.cp",
                  "expected cp = 1 with Mamba-2 layers (meshsim models context "
                  "parallelism as ring attention only), found " +
                      N(p.cp));
  }
  if ((p.tp * p.dp * p.cp) % p.ep != 0) {
    return BadKey("plan.ep",
                  "ep = " + N(p.ep) + " does not divide tp*dp*cp = " + N(p.tp * p.dp * p.cp));
  }
  if (p.ep > 1 && (m.experts == 0 || m.experts % p.ep != 0)) {
    return BadKey("plan.ep", "ep = " + N(p.ep) + " needs a MoE model whose experts (" +
                                 N(m.experts) + ") it divides");
  }
  return Ok{};
}

// Activation offloading as Megatron-Core allows it (transformer_config.py @ d98e8a6,
// NVIDIA/Megatron-LM: fewer layers than the model's, no pipeline parallelism, no
// recomputation).
Status CheckOffload(const PlanSpec& p, const ModelSpec& m) {
  const int n = p.cpu_offload_layers;
  if (n == 0) return Ok{};
  if (n < 0 || n >= m.layers) {
    return BadKey("plan.cpu_offload_layers",
                  "expected 0 <= cpu_offload_layers < the model's layers = " + N(m.layers) +
                      ", found " + N(n));
  }
  if (p.pp != 1) {
    return BadKey(
        "plan.cpu_offload_layers",
        "activation offloading needs pp = 1 (as in Megatron-Core), found pp = " + N(p.pp));
  }
  if (p.recompute != Recompute::kNone) {
    return BadKey("plan.cpu_offload_layers",
                  "activation offloading needs recompute: none (as in Megatron-Core)");
  }
  return Ok{};
}

// Megatron-Core rejects mla_up_proj on a model without Multi-head Latent Attention
// (transformer_config.py @ NVIDIA/Megatron-LM d98e8a6, "mla_up_proj in recompute_modules is
// only supported with multi_latent_attention"). Checked under any plan.recompute, as the
// module names are (docs/yaml.md).
Status CheckRecomputeModules(const PlanSpec& p, const ModelSpec& m) {
  if (p.recompute_modules.mla_up_proj && !m.IsMla()) {
    return BadKey("plan.recompute_modules",
                  "mla_up_proj recomputes Multi-head Latent Attention's up-projections: the "
                  "model has none (model.kv_lora_rank is 0)");
  }
  return Ok{};
}

// Megatron-Core's checks of overlap_moe_expert_parallel_comm (transformer_config.py @
// NVIDIA/Megatron-LM d98e8a6): expert parallelism, no full recomputation, and with
// pipelining the interleaved schedule (with overlapped sends and receives).
Status CheckEpOverlap(const PlanSpec& p) {
  const std::string key = "plan.framework_options.overlap_moe_expert_parallel_comm";
  if (p.ep == 1) return BadKey(key, "the EP all-to-all overlap needs plan.ep > 1");
  if (p.recompute == Recompute::kFull) {
    return BadKey(key, "the EP all-to-all overlap needs plan.recompute none or selective");
  }
  if (p.pp > 1 && p.schedule != ScheduleKind::kInterleaved) {
    return BadKey(key, "the EP all-to-all overlap with pipelining needs plan.schedule interleaved");
  }
  // Megatron-LM overlaps the interleaved schedule's sends and receives by default
  // (--overlap-p2p-communication); meshsim's merged steps assume it.
  if (p.pp > 1 && !p.overlap_p2p) {
    return BadKey(key, "the EP all-to-all overlap with pipelining needs plan.overlap_p2p true");
  }
  return Ok{};
}

// Megatron's non-interleaved schedules block on their pipeline sends: Megatron-LM turns
// --overlap-p2p-communication off without a virtual pipeline (arguments.py @ NVIDIA/
// Megatron-LM d98e8a6) and Megatron-Bridge sets overlap_p2p_comm False, batch_p2p_comm True
// there (CommOverlapConfig, training/comm_overlap.py @ NVIDIA-NeMo/Megatron-Bridge v0.2.0
// to 067f987d).
Status CheckPipelineSends(const PlanSpec& p) {
  if (p.framework != Framework::kMegatron || p.pp < 2 || !p.overlap_p2p ||
      p.schedule == ScheduleKind::kInterleaved)
    return Ok{};
  return BadKey("plan.overlap_p2p",
                "Megatron overlaps pipeline sends only under the interleaved schedule: expected "
                "false with plan.schedule " +
                    NameOf(ScheduleNames(), p.schedule) + ", found true");
}

// Megatron-Core's paged stash stashes what the fused grouped MLP saves and needs HybridEP
// (docs/user-guide/features/paged_stash.md @ NVIDIA/Megatron-LM core_v0.19.0); under full
// recomputation the saved tensors are the recomputed forward's (not modelled).
Status CheckPagedStash(const PlanSpec& p) {
  const std::string key = "plan.framework_options.moe_paged_stash";
  if (!p.framework_options.fused_grouped_mlp) {
    return BadKey(key,
                  "the paged stash holds the fused grouped MLP's saved tensors: expected "
                  "plan.framework_options.fused_grouped_mlp true");
  }
  if (p.moe_dispatcher != MoeDispatcher::kFlex || p.moe_flex_backend != MoeFlexBackend::kHybridEp) {
    return BadKey(key,
                  "the paged stash needs HybridEP: expected plan.moe_dispatcher flex with "
                  "plan.moe_flex_backend hybridep");
  }
  if (p.recompute == Recompute::kFull) {
    return BadKey(key,
                  "not modelled under full recomputation: expected plan.recompute none or "
                  "selective");
  }
  return Ok{};
}

// The experts' GEMM library and routing as NeMo-Automodel runs them: the grouped_gemm
// library and torch._grouped_mm take BF16 operands only (nv-grouped-gemm csrc/
// grouped_gemm.cu TORCH_CHECK(... kBFloat16); torch._grouped_mm's BF16 kernel), TE's fused
// grouped MLP is GroupedLinear's; the FakeBalancedGate's blocks of top_k experts tile the
// experts.
Status CheckExpertPath(const PlanSpec& p, const TrainingSpec& training, const ModelSpec& m) {
  const std::string key = "plan.moe_grouped_gemm";
  if (p.moe_grouped_gemm != MoeGroupedGemm::kTe && training.dtype != Dtype::kBf16) {
    return BadKey(key, "gmm and torch_mm run BF16 GEMMs only: expected te under training.dtype " +
                           std::string(DtypeName(training.dtype)));
  }
  if (p.moe_grouped_gemm != MoeGroupedGemm::kTe && p.framework_options.fused_grouped_mlp) {
    return BadKey(key,
                  "the fused grouped MLP is Transformer Engine's: expected te with "
                  "plan.framework_options.fused_grouped_mlp");
  }
  if (p.moe_routing == MoeRouting::kContiguous && (m.top_k <= 0 || m.experts % m.top_k != 0)) {
    return BadKey("plan.moe_routing", "contiguous routing needs a MoE model whose top_k (" +
                                          N(m.top_k) + ") divides its experts (" + N(m.experts) +
                                          ")");
  }
  return Ok{};
}

// The dtype runs on the GPU; the what-if and tuning knobs are in range.
Status CheckSettings(const PlanSpec& p, const TrainingSpec& training, const ClusterSpec& cluster) {
  if (cluster.gpu.PeakTflops(training.dtype) <= 0) {
    return BadKey("training.dtype", "the GPU " + cluster.gpu.kind + " has no " +
                                        std::string(DtypeName(training.dtype)) +
                                        " peak throughput");
  }
  if (training.dtype == Dtype::kFp8 && training.fp8_recipe == Fp8Recipe::kMxfp8 &&
      cluster.gpu.architecture != GpuArch::kBlackwell) {
    return BadKey("training.fp8_recipe",
                  "expected delayed | current | blockwise on the GPU " + cluster.gpu.kind +
                      " (mxfp8 needs a Blackwell GPU: gpu.architecture blackwell), found mxfp8");
  }
  if (!training.master_weights && training.dtype == Dtype::kFp8 && training.fp8_param_gather) {
    return BadKey("training.master_weights",
                  "FP8 primary weights (training.fp8_param_gather) are cast from the fp32 master "
                  "weights: expected true with fp8_param_gather, found false");
  }
  if (training.fp8_attention && training.dtype != Dtype::kFp8) {
    return BadKey("training.fp8_attention",
                  "FP8 attention runs under FP8 training: expected training.dtype fp8, found " +
                      std::string(DtypeName(training.dtype)));
  }
  if (training.cross_entropy_impl == CrossEntropyImpl::kTe && !training.cross_entropy_fusion) {
    return BadKey("training.cross_entropy_fusion_impl",
                  "te is a fused cross entropy: it needs training.cross_entropy_fusion true");
  }
  if ((training.cross_entropy_impl == CrossEntropyImpl::kTorch ||
       training.cross_entropy_impl == CrossEntropyImpl::kTorchFp32) &&
      !training.cross_entropy_fusion) {
    return BadKey("training.cross_entropy_fusion_impl",
                  "torch and torch_fp32 are PyTorch's cross entropy, not Megatron-Core's unfused "
                  "one: they need training.cross_entropy_fusion true (its default)");
  }
  if (p.framework_options.fused_grouped_mlp &&
      !(training.dtype == Dtype::kFp8 && training.fp8_recipe == Fp8Recipe::kMxfp8)) {
    return BadKey("plan.framework_options.fused_grouped_mlp",
                  "Transformer Engine's fused grouped MLP needs training.dtype fp8 with "
                  "fp8_recipe mxfp8 (a Blackwell GPU)");
  }
  if (p.framework_options.overlap_moe_expert_parallel_comm) {
    if (Status s = CheckEpOverlap(p); !s.ok()) return s;
  }
  if (Status s = CheckPipelineSends(p); !s.ok()) return s;
  if (p.framework_options.moe_paged_stash) {
    if (Status s = CheckPagedStash(p); !s.ok()) return s;
  }
  // Megatron-Core: the two overlaps exclude each other (transformer_config.py @ d98e8a6).
  if (p.framework_options.overlap_dispatch_backward_with_experts_wgrad &&
      p.framework_options.overlap_moe_expert_parallel_comm) {
    return BadKey("plan.framework_options.overlap_dispatch_backward_with_experts_wgrad",
                  "expected false with plan.framework_options.overlap_moe_expert_parallel_comm "
                  "(Megatron-Core allows one of the two), found true");
  }
  if (p.moe_skew < 1) {
    return BadKey("plan.moe_skew", "expected a factor >= 1, found " + std::to_string(p.moe_skew));
  }
  if (p.moe_capacity_factor < 0) {
    return BadKey("plan.moe_capacity_factor",
                  "expected 0 (no capacity limit) or a positive factor, found " +
                      std::to_string(p.moe_capacity_factor));
  }
  if (p.dp_bucket_bytes < 1) {
    return BadKey("plan.dp_bucket_mb", "expected a positive bucket size");
  }
  return Ok{};
}

// The flex dispatcher's SMs leave the compute kernels at least one; the fused grouped
// MLP's cluster margin leaves its kernels at least one cluster.
Status CheckDispatcherSms(const PlanSpec& p, const ClusterSpec& cluster) {
  const int sms = p.framework_options.moe_flex_dispatcher_num_sms;
  if (sms < 0 || sms >= cluster.gpu.sms) {
    return BadKey("plan.framework_options.moe_flex_dispatcher_num_sms",
                  "expected 0 (not stated) or fewer SMs than the GPU's " +
                      std::to_string(cluster.gpu.sms) + ", found " + std::to_string(sms));
  }
  const int margin = p.framework_options.fused_grouped_mlp_cluster_margin;
  const std::string key = "plan.framework_options.fused_grouped_mlp_cluster_margin";
  const int clusters = cluster.gpu.sms / kFusedMlpClusterSms;
  if (margin < 0 || margin >= clusters) {
    return BadKey(key, "expected 0 or fewer clusters than the GPU's " + std::to_string(clusters) +
                           " (" + std::to_string(kFusedMlpClusterSms) + " SMs each), found " +
                           std::to_string(margin));
  }
  if (margin > 0 && !p.framework_options.fused_grouped_mlp) {
    return BadKey(key,
                  "the margin is the fused grouped MLP's kernels': expected 0 without "
                  "plan.framework_options.fused_grouped_mlp, found " +
                      std::to_string(margin));
  }
  return Ok{};
}

}  // namespace

Status ValidatePlan(const PlanSpec& p, const TrainingSpec& training, const ModelSpec& m,
                    const ClusterSpec& cluster) {
  // In this order: the first problem found is the one reported (sweeps record it).
  if (Status s = CheckDegrees(p, cluster); !s.ok()) return s;
  if (Status s = CheckTensorAndPipelineSplits(p, m); !s.ok()) return s;
  if (Status s = CheckInterleaved(p); !s.ok()) return s;
  if (Status s = CheckContextAndExperts(p, m); !s.ok()) return s;
  if (Status s = CheckOffload(p, m); !s.ok()) return s;
  if (Status s = CheckRecomputeModules(p, m); !s.ok()) return s;
  if (Status s = CheckDispatcherSms(p, cluster); !s.ok()) return s;
  if (Status s = CheckExpertPath(p, training, m); !s.ok()) return s;
  return CheckSettings(p, training, cluster);
}

}  // namespace meshsim

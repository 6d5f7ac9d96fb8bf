// Which training framework issues the data-parallel (DP/ZeRO) traffic, and its knobs.
//
// The same plan (dp, zero) is cut into collectives differently by each framework:
// Megatron-Core's distributed optimizer reduces gradients in buckets and all-gathers
// parameters after the optimizer; DeepSpeed ZeRO fetches ZeRO-3 parameters per
// submodule with a prefetch window and reduces in element-counted buckets; PyTorch FSDP
// all-gathers one flat parameter per wrapped unit (a transformer layer) with a rate
// limiter; FSDP2 shards each parameter on its own and copies into and out of the
// all-gather buffer. sim/schedule/framework_*.cc turn these knobs into a DpPolicy.
//
// The option names are the frameworks' own; sizes counted in elements (parameters) are
// numbers of parameters, as the frameworks count them. Every default cites its source
// (README, "Frameworks").
#pragma once

#include <cstdint>

namespace meshsim {

enum class Framework : uint8_t { kMegatron, kDeepSpeed, kFsdp, kFsdp2 };

// The SMs of one cluster of the fused grouped MLP's cuDNN kernels: their default 256-wide
// MMA tile uses 2-CTA instructions, so a cluster is (2, 1) CTAs on 2 SMs (python/cudnn/
// grouped_gemm/grouped_gemm_glu/api.py @ NVIDIA/cudnn-frontend 3929da2: `use_2cta_instrs =
// mma_tiler_mn[0] == 256`, `cluster_shape_mn = (2, 1)`; Transformer Engine passes no tile,
// transformer_engine/pytorch/ops/fused/grouped_mlp.py @ release_v2.18_nemo_26.08).
inline constexpr int kFusedMlpClusterSms = 2;

// torch.distributed.fsdp.BackwardPrefetch.
enum class BackwardPrefetch : uint8_t { kBackwardPre, kBackwardPost, kNone };

struct FrameworkOptions {
  // --- megatron (Megatron-Core DistributedDataParallelConfig) ---
  // Parameters per gradient bucket; 0: plan.dp_bucket_mb's bytes decide (today's default).
  double bucket_size = 0;
  // Megatron-Core overlap_param_gather (default False): the distributed optimizer's
  // parameter all-gather is cut into the gradient buckets and overlaps the next step's
  // forward (each bucket's first forward waits for its bucket) instead of ending the step.
  bool overlap_param_gather = false;
  // Megatron-LM --check-for-nan-in-loss-and-grad (on unless --no-check-for-nan-in-loss-and-grad,
  // arguments.py @ core_r0.8.0), passed to DistributedDataParallelConfig.check_for_nan_in_grad
  // (Megatron-Core's default False): before each gradient bucket's reduction its L2 norm is
  // computed and tested on the host (param_and_grad_buffer.py start_grad_sync, `assert not
  // norm.isnan()`: a host-device synchronisation), and pretrain_gpt.py's loss_func tests each
  // micro-batch's loss the same way. Default false (Megatron-Core's default).
  bool check_for_nan_in_loss_and_grad = false;
  // Megatron-Core average_in_collective (default False): false scales each bucket's
  // gradients by 1/dp in place before its reduction (start_grad_sync: `grad_data *=
  // gradient_scaling_factor`, param_and_grad_buffer.py @ core_r0.8.0 and d98e8a64), true
  // averages inside the collective (no kernel).
  bool average_in_collective = false;
  // Transformer Engine's fused grouped MLP of the routed experts (Megatron-Core
  // use_transformer_engine_op_fuser with NVTE_CUTEDSL_FUSED_GROUPED_MLP=1; Blackwell,
  // MXFP8): FC1 with the SwiGLU and the quantisation of its output in one grouped kernel
  // over all local experts, then FC2 in another (ForwardGroupedMLP_CuTeGEMMSwiGLU_MXFP8);
  // false: GroupedLinear's one cuBLAS GEMM per local expert (default False).
  bool fused_grouped_mlp = false;
  // cuDNN frontend's CUDNNFE_CLUSTER_OVERLAP_MARGIN (default 0; the Megatron-Bridge 26.08
  // GB200 and B200 MXFP8 MoE recipes set 8, src/megatron/bridge/perf_recipes/*/gb200/*.py @
  // v0.6.0): the fused grouped MLP's persistent kernels launch this many clusters fewer than
  // fit on the GPU (`max_active_clusters -= margin`, python/cudnn/grouped_gemm/grouped_gemm_
  // {glu,quant,dglu}/api.py @ NVIDIA/cudnn-frontend 3929da2), leaving their SMs to the
  // kernels overlapped beside them. Each cluster is kFusedMlpClusterSms SMs; the weight-
  // gradient kernel (grouped_gemm_wgrad) keeps them all. Needs fused_grouped_mlp.
  int fused_grouped_mlp_cluster_margin = 0;
  // Megatron-Core moe_paged_stash (default False; the Megatron-Bridge 26.08 GB200 MXFP8 MoE
  // recipes' full-iteration helpers set it, with moe_expert_rank_capacity_factor 1.5): the
  // tensors Transformer Engine's fused grouped MLP saves for backward (mark_grouped_tensor:
  // FC1's and FC2's column-wise MXFP8 inputs with their scales, FC1's BF16 output, the
  // routing probabilities) are copied into a paged buffer after the layer's forward and
  // copied back before its backward (megatron/core/transformer/moe/paged_stash.py @
  // NVIDIA/Megatron-LM core_v0.19.0: paged_stash_copy_kernel, paged_stash_pop_kernel).
  // Needs fused_grouped_mlp and HybridEP (docs/user-guide/features/paged_stash.md).
  bool moe_paged_stash = false;
  // Megatron-Core --overlap-moe-expert-parallel-comm with --delay-wgrad-compute (Megatron-
  // Bridge's moe_a2a_overlap; default False): the forward and backward steps of two
  // micro-batches run merged, layer by layer, each one's EP all-to-alls under the other's
  // compute (sim/schedule/ep_overlap.cc). Needs ep > 1, no full recomputation, and with
  // pipelining the interleaved schedule with overlapped sends and receives.
  bool overlap_moe_expert_parallel_comm = false;
  // Megatron-Core overlap_dispatch_backward_with_experts_wgrad (default False;
  // model_parallel_config.py, NVIDIA/Megatron-LM PR #3795 @ 97e36aab): the routed experts'
  // weight gradients run on a side stream after their input gradients, so the gradient of
  // the token dispatch (a combine) overlaps them. Off, Transformer Engine's GroupedLinear
  // backward computes the weight gradients before it returns the input gradient
  // (grouped_linear.py `_GroupedLinear.backward` @ d0067d0), and the dispatch's gradient
  // starts after them. Excludes overlap_moe_expert_parallel_comm (as Megatron-Core checks).
  bool overlap_dispatch_backward_with_experts_wgrad = false;
  // Megatron-Core moe_flex_dispatcher_num_sms (moe_hybridep_num_sms / moe_deepep_num_sms,
  // routed to it in TransformerConfig.__post_init__; megatron/core/transformer/
  // transformer_config.py @ NVIDIA/Megatron-LM d98e8a6): the SMs the flex dispatcher's
  // (DeepEP's, HybridEP's) dispatch and combine kernels hold while they run. The compute
  // kernels beside them keep the rest: while an expert dispatch or combine is in flight the
  // compute slowdown is sms / (gpu.sms - sms) in place of comm_interference.all_to_all.
  // 0: not stated (default; the all_to_all value).
  int moe_flex_dispatcher_num_sms = 0;

  // --- deepspeed (zero_optimization section, deepspeed/runtime/zero/config.py) ---
  double reduce_bucket_size = 5e8;     // elements per gradient reduction
  double allgather_bucket_size = 5e8;  // elements per ZeRO-1/2 parameter all-gather
  // ZeRO-3: parameters of consecutive submodules fetched together (one all-gather) and
  // ahead of use; the most gathered parameters alive at once; parameters of submodules
  // smaller than the threshold stay unpartitioned (no fetch).
  double stage3_prefetch_bucket_size = 5e7;
  double stage3_max_live_parameters = 1e9;
  double stage3_param_persistence_threshold = 1e5;

  // --- fsdp (torch.distributed.fsdp.FullyShardedDataParallel) ---
  BackwardPrefetch backward_prefetch = BackwardPrefetch::kBackwardPre;
  bool forward_prefetch = false;
  bool limit_all_gathers = true;  // at most two units' all-gathers in flight

  // --- fsdp2 (torch.distributed.fsdp.fully_shard) ---
  // With false, parameters stay gathered from forward to backward (no backward all-gather).
  bool reshard_after_forward = true;
  // FSDPModule.set_reshard_after_backward(False) and set_requires_gradient_sync(False) on
  // every micro-batch but the last, as NeMo-Automodel's enable_fsdp_optimizations does
  // (nemo_automodel/components/moe/fsdp_mixin.py @ 79994aa1f). reshard_after_backward
  // false: a unit is gathered at its first forward of the step and kept to its last
  // backward (needs reshard_after_forward false). requires_gradient_sync false: gradients
  // accumulate unsharded, in the reduce dtype, and are reduce-scattered in the last
  // micro-batch only.
  bool reshard_after_backward = true;
  bool requires_gradient_sync = true;
};

}  // namespace meshsim

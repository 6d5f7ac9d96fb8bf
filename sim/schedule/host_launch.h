// The host (CPU) side of a training step: one thread per rank issues the GPU ops in
// program order, as PyTorch's eager mode does (one Python thread per rank, each op's
// kernels launched by the CPU onto CUDA streams).
//
// The thread is the rank's host stream (Stream::kHost), built alongside the GPU ops:
//  - Issuing a GPU op is a host op of `launches` kernel launches (Program::AddHost; its
//    time is launches x the cluster's host.launch_us, HostLaunchComputeModel), and the GPU
//    op depends on it: a kernel cannot start before the CPU has launched it. The GPU op
//    waits for all its launches (a launch stands for its module's host work, which
//    precedes the module's main kernels: TE GroupedLinear's per-expert Python before its
//    grouped GEMM), except `trailing` ones that the framework issues after the op's main
//    kernels (Issue): the replay releases the GPU op before them (HostRelease in
//    sim/engine/replay.h), and they run on the host while the GPU runs (a launch is
//    asynchronous). The host stream runs its ops in order, so issuing is serial; it does
//    not wait for the GPU, so the host runs ahead of the GPU as far as the program lets it
//    (CUDA's launch queue is not bounded here).
//  - A host-device synchronisation (Sync) is a host op of no launches that depends on
//    the GPU ops it waits for: every later launch waits with it, draining the run-ahead.
//  - A region captured in a CUDA graph (BeginGraph .. EndGraph) is launched once: its
//    first op pays one launch and the others depend on that launch. A synchronisation
//    inside a captured region is dropped: CUDA cannot capture one, so a framework that
//    captures the region runs without it (Megatron-Core's full_iteration graphs need a
//    dispatcher that does not synchronise).
// Off (a thread built with on = false), it adds nothing to the program.
#pragma once

#include <initializer_list>
#include <optional>

#include "sim/core/dtype.h"
#include "sim/schedule/program.h"
#include "sim/workload/kernel_shapes.h"

namespace meshsim {

class HostThread {
 public:
  HostThread() = default;
  HostThread(int rank, bool on) : rank_(rank), on_(on) {}

  bool On() const { return on_; }
  // Issues GPU op `gpu` (already in `p`): `launches` kernel launches of host time, the
  // first `grouped_calls` of them GroupedLinear calls (cluster.host.call_us each), and
  // `expert_units` local experts' GroupedLinear host work (cluster.host.expert_us each),
  // all but the last `trailing` launches before it can start (inside a captured region:
  // the region's one launch). With both, the trailing launches are a host op of their own
  // after the GPU op's, which the GPU op does not wait for.
  void Issue(Program& p, OpId gpu, int launches, int layer = -1, int micro_batch = -1,
             int trailing = 0, int expert_units = 0, int grouped_calls = 0);
  // The host waits until every op of `gpu` (kNoOp entries ignored) has finished.
  void Sync(Program& p, std::initializer_list<OpId> gpu, int layer = -1, int micro_batch = -1);
  // Ops issued until the matching EndGraph are one captured CUDA graph. Regions nest (the
  // outermost one counts).
  void BeginGraph() { ++graph_depth_; }
  void EndGraph();
  bool InGraph() const { return graph_depth_ > 0; }

 private:
  int rank_ = 0;
  bool on_ = false;
  int graph_depth_ = 0;
  std::optional<OpId> graph_launch_;  // the open region's launch, once its first op is issued
};

// The per-expert host work of one pass of a MoE layer's routed experts' GEMMs as Transformer
// Engine's GroupedLinear runs them (megatron/core/transformer/moe/experts.py TEGroupedMLP;
// transformer_engine/pytorch/module/grouped_linear.py, cpp_extensions/gemm.py
// general_grouped_gemm, csrc/extensions/gemm.cpp te_general_grouped_gemm and
// common/gemm/cublaslt_gemm.cu multi_stream_cublas_gemm @ NVIDIA/TransformerEngine v2.14,
// the 26.04 container's TE): each of the `gemms_per_expert` GroupedLinear calls (FC1, FC2)
// is one Python module call (one launch, StepBuilder::ExpertGemmLaunches) that then works
// per local expert: in forward it sets each expert's input and weight quantizer's usage,
// fetches each expert's FP8 weight workspace (module.get_weight_workspace) and lists each
// expert's input, FP8 and master weight for saving; in backward it builds each expert's
// main_grad, sets each weight's column-wise usage, and after the weight gradients hands
// Megatron each expert's dummy wgrad (handle_custom_ddp_from_mcore) and frees each input;
// and in C++ split_quantize quantises each expert's input (forward) or output gradient
// (backward) and te_general_grouped_gemm wraps each expert's operands and runs
// nvte_cublas_gemm (cuBLASLt descriptors, heuristic, cublasLtMatmul) on stream i % 4. One
// unit per local expert and call (a local expert count that is not whole rounds up),
// whatever streams the GPU runs the GEMMs on, and with `fp8_casts` (an FP8 call that
// quantises its input: forward, input gradient) a second: the FP8 path's per-expert work
// that BF16 does not do (BF16 splits the input with one torch.split and passes the weights
// as they are): each expert's quantizer usage set and its FP8 weight workspace fetched
// (forward) or its FP8 weight's column-wise usage set (backward), and split_quantize's
// per-expert quantizer conversion, FP8 tensor and quantize in C++ (one kernel per expert
// for current, blockwise and MXFP8 scaling, the fused multi_cast_transpose for delayed:
// the per-expert kernel launch, 1-3 us, is the same order as the rest of the unit). The
// call's stream-event record/wait calls (1 + 3 x min(4, experts) per call) are not kernels
// and not counted.
int GroupedGemmExpertUnits(double local_experts, int gemms_per_expert, bool fp8_casts = false);

// Host launches of the FP8 casts before an op's GEMMs under FP8 training: each GEMM that
// casts its A operand (GemmShape::casts_a) launches the recipe's cast kernels
// (Fp8CastKernels), which the op's GPU kernel count leaves out (the kernel model times
// them with the GEMM). GroupedLinear's per-expert GEMMs (GemmShape::launches_per_batch)
// cast their experts' inputs in one call too: TE's split_quantize (transformer_engine/
// pytorch/csrc/extensions/cast.cpp @ v2.14, the 26.04 container's TE) is one Python call
// into C++, which allocates the experts' FP8 tensors in bulk (bulk_allocate_mxfp8_tensors,
// ..._fp8_blockwise_...) and, in multi_tensor_quantize_impl, launches one fused kernel for
// all of them under delayed scaling or, for the other recipes, the experts' quantize
// kernels one by one from a C++ loop (quantizer_cpp_list[i]->quantize), with no Python,
// autograd or dispatcher work per expert: the per-expert kernels' cudaLaunchKernel cost
// (1-3 us) is not counted, as for the grouped_gemm library's per-expert cublasGemmEx calls
// (StepBuilder::ExpertGemmLaunches) and TE's TP overlap chunks (tp_overlap.cc). With
// `norm_amax` (TE's own norm kernels, not cuDNN's: TrainingSpec::cudnn_norm) a cast of an
// amax_fused A leaves out current scaling's amax kernel (Fp8AmaxPassKernels).
int Fp8CastLaunches(const KernelShapes& shapes, Fp8Recipe recipe, bool norm_amax = true);

}  // namespace meshsim

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
  // Issues GPU op `gpu` (already in `p`): `launches` kernel launches of host time, all but
  // the last `trailing` before it can start (inside a captured region: the region's one
  // launch).
  void Issue(Program& p, OpId gpu, int launches, int layer = -1, int micro_batch = -1,
             int trailing = 0);
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

// Host launches of a MoE layer's routed experts' GEMMs: Transformer Engine's GroupedLinear
// (megatron/core/transformer/moe/experts.py TEGroupedMLP, transformer_engine/pytorch/
// module/grouped_linear.py general_grouped_gemm), like the grouped_gemm library
// (CublasGroupedGemm), launches one GEMM per local expert for each of `gemms_per_expert`
// weight matrices, whatever streams the GPU runs them on.
int GroupedGemmLaunches(double local_experts, int gemms_per_expert);

// Host launches of the FP8 casts before an op's GEMMs under FP8 training: each GEMM that
// casts its A operand (GemmShape::casts_a) launches the recipe's cast kernels
// (Fp8CastKernels), which the op's GPU kernel count leaves out (the kernel model times
// them with the GEMM). GroupedLinear's per-expert GEMMs (GemmShape::launches_per_batch)
// cast each expert's A apart, batch times, except under delayed scaling: TE's
// split_quantize runs multi_tensor_quantize_impl, which has one fused kernel for all the
// tensors only for delayed scaling ("Currently only have fused kernel for FP8 delayed
// scaling", transformer_engine/pytorch/csrc/extensions/cast.cpp) and quantises the
// tensors one by one otherwise. With `norm_amax` (TE's own norm kernels, not cuDNN's:
// TrainingSpec::cudnn_norm) a cast of an amax_fused A leaves out current scaling's amax
// kernel (Fp8AmaxPassKernels).
int Fp8CastLaunches(const KernelShapes& shapes, Fp8Recipe recipe, bool norm_amax = true);

}  // namespace meshsim

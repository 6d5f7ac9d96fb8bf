// The kernel shapes of each compute op of a transformer layer, for one rank and one
// micro-batch: the same ops, with the same FLOPs, that TransformerLayerCost and
// MoeLayerCost cost (transformer.h), cut into the GEMMs and attention kernels that
// Megatron-LM launches.
//
// T = seq x micro_batch tokens; with sequence parallelism the GEMMs run on the all-gathered
// sequence, so m = T either way. A forward GEMM Y[T x out] = X[T x in] W[in x out] has
// the input-gradient GEMM dX[T x in] = dY[T x out] W^T (dgrad) and the weight-gradient
// GEMM dW[in x out] = X^T[in x T] dY[T x out] (wgrad). Unfused attention is two batched
// GEMMs per pass (scores = Q K^T, context = P V; backward four); with flash_attention it
// is one fused kernel per pass. Decoder models: attention is causal.
#pragma once

#include "sim/workload/kernel_shapes.h"
#include "sim/workload/model_spec.h"
#include "sim/workload/transformer.h"

namespace meshsim {

// The ops of one block (attention, MLP, router or experts), as the schedule runs them:
// the forward, the backward's input-gradient op (dgrad: also the backward of the attention
// core's first half) and weight-gradient op (wgrad: the core's second half), and what
// recomputation re-runs (selective: the attention core and MLA's up-projections; full:
// the forward; else empty).
struct PassKernels {
  KernelShapes fwd;
  KernelShapes dgrad;
  KernelShapes wgrad;
  KernelShapes recompute;
};

// The attention block, and its ops under context parallelism (ring attention): the
// projections before and after the core (each op runs half of them: fraction 0.5), their
// backward, and one ring block of the core (queries of the rank's chunk against one
// chunk of keys; backward: both halves in one op).
struct AttentionKernels {
  PassKernels block;
  KernelShapes edge_fwd;
  KernelShapes edge_dgrad;
  KernelShapes edge_wgrad;
  KernelShapes ring_fwd;
  KernelShapes ring_bwd;
};

struct LayerKernels {
  AttentionKernels attention;
  PassKernels mlp;
};

// Precondition: as TransformerLayerCost (tp divides heads and kv_heads).
LayerKernels TransformerLayerKernels(const ModelSpec& m, const LayerShape& shape);

// Streams Transformer Engine's GroupedLinear spreads the experts' GEMMs over (one cuBLAS
// GEMM per expert, round-robin): 4.
double TeGroupedGemmStreams();

// The MoE block (see MoeLayerCost): the router (its backward, dgrad and wgrad, is one
// op: in `router.dgrad`; LatentMoE's two projections with it), the routed experts as
// Transformer Engine's GroupedLinear (or the grouped_gemm library, shape.grouped_gemm
// kGmm) runs them, one GEMM per local expert on TeGroupedGemmStreams() streams
// (GemmShape::launches_per_batch; a JAX-style plan, shape.xla_remat, TE's fused grouped
// MLP, shape.fused_grouped_mlp, or torch._grouped_mm, kTorchMm: one grouped kernel per
// GEMM; gmm and torch_mm at GemmShape::gmm_rate, the fused MLP at
// GemmShape::grouped_rate; each expert gets its average share of the
// tokens the rank receives; ExpertDim() wide), and the shared experts.
struct MoeKernels {
  PassKernels router;
  PassKernels experts;
  PassKernels shared;
};
MoeKernels MoeLayerKernels(const ModelSpec& m, const LayerShape& shape, int ep, double load = 1.0);

// A Mamba-2 layer (mamba.h): in_proj, the SSD scan's four batched GEMMs per chunk (C B^T
// per group; its product with X, the chunk states B^T X and the state-to-output C h per
// head; batch = micro_batch x chunks x heads-or-groups / tp) and out_proj. Backward: the
// projections' dgrad and wgrad; the scan's backward, twice its forward, is one copy of
// its GEMMs in dgrad and one in wgrad. Full recomputation re-runs the forward.
PassKernels MambaLayerKernels(const ModelSpec& m, const LayerShape& shape);

// The output layer: forward (logits = X E^T over the rank's vocabulary shard), and its
// backward (dgrad and wgrad in one op).
struct LogitKernels {
  KernelShapes fwd;
  KernelShapes bwd;
};
LogitKernels LogitLayerKernels(const ModelSpec& m, const LayerShape& shape);

}  // namespace meshsim

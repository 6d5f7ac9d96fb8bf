// The Mamba-2 mixer layer of a hybrid model (ModelSpec::layer_pattern 'M'), for one rank
// and one micro-batch: parameters, FLOPs, HBM traffic and stored activations.
//
// The layer (Megatron-LM megatron/core/ssm/mamba_layer.py and mamba_mixer.py; Dao & Gu
// 2024, "Transformers are SSMs", arXiv 2405.21060, Sec. 7): RMSNorm, in_proj (hidden ->
// z, x, B, C and dt: 2*d_inner + 2*groups*state + heads), a depthwise causal conv1d
// over x, B and C, the SSD scan, a gated RMSNorm of its output with z, and out_proj
// (d_inner -> hidden). Tensor parallelism splits it like attention: in_proj column-
// parallel and out_proj row-parallel over heads and groups (tp divides both), conv1d,
// A_log, D, dt_bias and the gated norm split with them; the layer ends in the same TP
// all-reduce (reduce-scatter with sequence parallelism) of s*b*h elements.
//
// SSD FLOPs, the chunked algorithm of the paper's Sec. 6 with chunk length Q =
// min(mamba_chunk, seq), state N, head dim P, per token: the intra-chunk (diagonal-block)
// terms C B^T, once per group (2*Q*N), and its product with X, per head (2*Q*P); the
// chunk states B^T X and the state-to-output products C h, per head (2*N*P each). So
// 2*Q*(groups*N + heads*P) + 4*heads*N*P; the causal blocks are counted whole, as
// attention counts the full square. The inter-chunk state recurrence and the conv1d are
// element-wise (HBM traffic, no matmul FLOPs). For Nemotron-H 8B this scan is ~3 % of
// the layer's FLOPs; Megatron-LM's FLOPs estimate (training.py) counts 7*d_inner*N for it.
#pragma once

#include "sim/workload/model_spec.h"
#include "sim/workload/transformer.h"

namespace meshsim {

// Parameters of one Mamba-2 layer, all TP ranks together: pre-norm (hidden), in_proj
// (hidden x MambaInProjDim), conv1d weight and bias (MambaConvDim x (conv_kernel + 1)),
// A_log, D and dt_bias (heads each), the gated norm (d_inner) and out_proj (d_inner x
// hidden). No projection biases (Nemotron-H: mamba_proj_bias false, use_conv_bias true).
double MambaLayerParams(const ModelSpec& m);
// What one TP rank holds: the pre-norm whole, the rest / tp.
double MambaLayerParamsPerRank(const ModelSpec& m, int tp);

// Forward matmul FLOPs of the SSD scan of one token, all heads (see above).
double MambaScanFlopsPerToken(const ModelSpec& m, int64_t seq);

// The layer as one block (BlockCost: fwd_flops, bytes, stored activations under the
// shape's recomputation, TP collective). Stored without recomputation: the norm's and
// in_proj's inputs (s*b*h each, split by sequence parallelism; in_proj's in FP8 under
// FP8 training), and per rank in_proj's output (z, x, B, C, dt), the conv1d output
// (x, B, C), the scan output and out_proj's input (d_inner each), and the fp32 cumulative
// decay (4 bytes per head and token). Selective recomputation recomputes nothing here;
// full keeps the layer input only. Precondition: tp divides mamba_heads and mamba_groups.
BlockCost MambaBlockCost(const ModelSpec& m, const LayerShape& shape);

}  // namespace meshsim

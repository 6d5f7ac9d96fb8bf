// The sizes a layer's cost is computed from (shared by the dense and the MoE halves of the
// per-layer cost model, transformer.cc and moe_layer_cost.cc; not part of the public API).
#pragma once

#include "sim/workload/model_spec.h"
#include "sim/workload/transformer.h"

namespace meshsim {

// Element-wise HBM traffic per stored element, a coarse constant for LayerNorm, dropout,
// bias and residual kernels (read + write of their inputs and outputs), in sbh-units.
inline constexpr double kElementwiseTrafficSbh = 11.0;

struct LayerDims {
  double s, b, h, a, f, t, elt;
  int ffn_matrices;
  double kv_s;  // keys per query
  // Widths (elements per token, all heads) of Q, K, V and of the output projection's
  // input; MLA: the latents, replicated on every TP rank (0 without MLA).
  double q_w, k_w, v_w, o_w, latent_w;
  // Bytes per element of the stored inputs of linear layers: elt, or 1 under FP8 training
  // (Transformer Engine saves the FP8 copy it cast for the GEMM, not the BF16 tensor).
  double gemm_in;
  double Fp8Saving() const { return elt - gemm_in; }  // per stored GEMM input element
};

LayerDims DimsOf(const ModelSpec& m, const LayerShape& shape);

// One shared expert (on hidden, LatentMoE or not).
double SharedExpertParams(const ModelSpec& m);
// LatentMoE's hidden -> latent and latent -> hidden projections (0 without).
double LatentProjectionParams(const ModelSpec& m);

}  // namespace meshsim

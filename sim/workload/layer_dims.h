// The sizes a layer's cost is computed from (shared by the dense and the MoE halves of the
// per-layer cost model, transformer.cc and moe_layer_cost.cc; not part of the public API).
#pragma once

#include "sim/workload/model_spec.h"
#include "sim/workload/transformer.h"

namespace meshsim {

// Element-wise HBM traffic per stored element, a coarse constant for LayerNorm, dropout,
// bias and residual kernels (read + write of their inputs and outputs), in sbh-units.
inline constexpr double kElementwiseTrafficSbh = 11.0;

// The MLP activation's element-wise kernels per token: the elements (each of the
// activation's dtype) they read and write per element of the FFN width f, forward and
// backward, and their launches. GeLU: one kernel each way (bias_gelu / F.gelu: x -> y;
// backward reads dy and x, writes dx). SwiGLU: reads 2f, writes f; backward reads the
// saved 2f and dy (f), writes dx (2f): 5 (megatron/core/fusions/fused_bias_swiglu.py
// swiglu_back @ NVIDIA/Megatron-LM core_v0.17.0). Squared ReLU fused (torch.compile of
// torch.pow(F.relu(x), 2), TrainingSpec::squared_relu_fusion): as GeLU. Unfused (eager):
// relu and pow, each reading and writing f forward; backward PyTorch's pow_backward for a
// scalar exponent, grad * (2 * self.pow(1)), three kernels (pow(1) a copy, the scale, the
// product: 2 + 2 + 3), and relu's threshold_backward(grad, result) (3)
// (torch/csrc/autograd/FunctionsManual.cpp, derivatives.yaml @ pytorch/pytorch 002ca671).
// What is kept for backward is as GeLU's either way: one f-wide tensor (the fused kernel's
// input; eagerly relu's output, which pow saves too) besides FC2's input.
struct ActivationKernels {
  double fwd_elements = 2, bwd_elements = 3;
  int fwd_kernels = 1, bwd_kernels = 1;
};
ActivationKernels ActivationKernelsOf(FfnKind kind, bool squared_relu_fused);

// RoPE on Q and K beyond Megatron-Core's fused kernel, per element of Q and K (16-bit
// elements read plus written, kernels per tensor). With apply_rope_fusion Megatron-Core runs
// Transformer Engine's fused RoPE, one kernel each way reading and writing the tensor once
// (2 elements), unless mscale != 1, which it does not take: then _apply_rotary_pos_emb_bshd
// (megatron/core/models/common/embeddings/rope_utils.py apply_rotary_pos_emb @
// NVIDIA/Megatron-LM 00c51e13, "mscale=... is not supported by TE's fused RoPE. Using
// unfused implementation.") runs eagerly: t * cos (2), rotate_half's neg of one half (1)
// and cat (2), * sin (2), the sum (3), the cat with the unrotated part (2): 12 elements in
// 6 kernels, and 6 more on the [seq, dim] frequencies (cos, * mscale, cast; sin, ...).
// Backward (autograd): the products' gradients (2 + 2), the neg's (1), the chunk's cat
// (2), the sum of the two gradients of t (3) and the slice's zero fill and copy (3): 13
// elements in 7 kernels. Zero without mscale or off Megatron-Core (no RoPE kernel is
// costed there, as for the fused one). GPT-OSS on Megatron-Bridge (the recipes build it
// with AutoBridge.from_hf_pretrained, recipes/gpt_oss/h100/gpt_oss.py): its bridge sets
// yarn_mscale and yarn_mscale_all_dim None (models/gpt_oss/gpt_oss_bridge.py @
// NVIDIA-NeMo/Megatron-Bridge 067f987d), for which Megatron-Core's
// _yarn_get_concentration_factor returns _yarn_get_mscale(32) = 0.1 ln 32 + 1
// (yarn_rotary_pos_embedding.py @ NVIDIA/Megatron-LM 00caa53a), while the perf recipes ask
// for apply_rope_fusion (perf_recipes/_common.py _benchmark_common @ 067f987d).
struct RopeKernels {
  double fwd_elements = 0, bwd_elements = 0;
  int fwd_kernels = 0, bwd_kernels = 0;
};
RopeKernels UnfusedRopeExtra(const ModelSpec& m, bool megatron);

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

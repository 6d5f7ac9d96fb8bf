// The MoE half of the per-layer cost model (transformer.h): the router, the token
// permutations around the dispatch, the routed experts' GEMMs and element-wise extras, the
// paged stash and the shared experts, per rank and micro-batch.
#include <algorithm>
#include <cassert>
#include <cmath>

#include "sim/workload/layer_dims.h"
#include "sim/workload/transformer.h"

namespace meshsim {

MoePermutation AlltoAllPermutation(double sent, double received, double tokens,
                                   double local_experts) {
  // Megatron-Core's MoEAlltoAllTokenDispatcher (megatron/core/transformer/moe/
  // token_dispatcher.py @ d98e8a6, moe_utils.py permute / sort_chunks_by_idxs / unpermute):
  // dispatch_preprocess permutes the rank's tokens into expert order (a gather: `sent`
  // rows read, `sent` rows written); with more than one local expert, dispatch_postprocess
  // sorts the received chunks by local expert and combine_preprocess sorts them back
  // (`received` rows read and written, each); combine_postprocess unpermutes (`sent` rows
  // read, weighted by their probabilities and summed into the rank's `tokens` rows).
  // Kernels: fused (moe_permute_fusion) as two per permutation (row-id map, copy) and one
  // per chunk sort; plus the token counts per expert, their all-to-all and the
  // device-to-host copy the all-to-all's split sizes need.
  MoePermutation p;
  p.rows = 2 * sent + sent + tokens;
  p.kernels = 2 + 2 + 3;
  if (local_experts > 1) {
    p.rows += 4 * received;
    p.kernels += 2;
  }
  return p;
}

MoePermutation FlexPermutation(double received) { return MoePermutation{2 * received, 2}; }

namespace {

// RecomputeModules::layernorm: the pre-MLP norm's output (`norm_out` bytes) is dropped and
// re-run from its kept input: one norm kernel reading the input and writing the output.
void SetNormRecompute(double norm_out, BlockCost* router) {
  router->stored_act_bytes -= norm_out;
  router->transient_act_bytes = norm_out;
  router->recompute_bytes = 2 * norm_out;
  router->recompute_kernels = 1;
}

// RecomputeModules::moe_act: FC2's input, the activation's output (`act_out` bytes), is
// dropped and the activation re-run from FC1's kept output, moving `traffic` bytes as in
// forward.
void SetActivationRecompute(double act_out, double traffic, int kernels, BlockCost* experts) {
  experts->stored_act_bytes -= act_out;
  experts->transient_act_bytes = act_out;
  experts->recompute_bytes = traffic;
  experts->recompute_kernels = kernels;
}

// The element-wise work Megatron-Core's TEGroupedMLP adds for a model with expert biases
// or a clamped GLU (GPT-OSS), per rank and micro-batch (megatron/core/transformer/moe/
// experts.py and fusions/fused_bias_geglu.py @ NVIDIA/Megatron-LM core_v0.17.0, the
// Megatron-Core of the 26.04 containers; Megatron-Bridge docs/releases/software-versions.md
// @ 067f987d). Byte counts are per element of `received` x width, `e` bytes an activation
// element, booleans 1 byte.
struct ExpertExtras {
  double fwd_bytes = 0, bwd_bytes = 0;
  int fwd_kernels = 0, bwd_kernels = 0;
  double clamp_bytes = 0;  // the clamp's forward: re-run by moe_act's recomputation
  int clamp_kernels = 0;
  double clamp_copy = 0;  // the clamped copy of FC1's output that the activation saves
  int fwd_after_fc2 = 0;  // forward kernels launched after FC2's GEMMs (_apply_bias)
};

// The fused grouped MLP takes the biases into its kernels' epilogues but for FC2's bias
// gradient, which it scales by the routing probabilities (GroupedLinear scale_bias):
// compute_grouped_dbias_dscales, a Triton kernel, reads FC2's output gradient (dim x e bytes
// per copy) and the fp32 probabilities and adds into the fp32 probabilities' gradient it
// zeroes first (transformer_engine/pytorch/ops/fused/grouped_mlp.py and triton/
// grouped_dbias_dscales.py @ release_v2.18_nemo_26.08): received x (dim x e + 12) bytes, in
// four kernels (the two zero fills, the kernel, the bias gradient's cast to e). FC1's bias
// gradient is the dGLU kernel's (GemmShape::fused_dbias).
ExpertExtras FusedExpertBias(const ModelSpec& m, double received, double e) {
  ExpertExtras x;
  if (!m.expert_bias) return x;
  x.bwd_bytes = received * (static_cast<double>(m.ExpertDim()) * e + 12);
  x.bwd_kernels = 4;
  return x;
}

ExpertExtras ExpertElementwise(const ModelSpec& m, const LayerShape& shape, double received,
                               double local_experts, double e) {
  ExpertExtras x;
  if (shape.megatron && shape.fused_grouped_mlp) return FusedExpertBias(m, received, e);
  if (!shape.megatron || shape.fused_grouped_mlp || shape.grouped_gemm != MoeGroupedGemm::kTe)
    return x;
  const double f = static_cast<double>(m.ExpertFfnHidden());
  if (m.glu_clamp > 0) {
    // weighted_bias_quick_geglu_impl with clamp_value: x_glu.clamp(max=c) and
    // x_linear.clamp(-c, c) on the two halves of FC1's output and torch.cat of the two, as
    // eager PyTorch ops before the fused activation: each reads and writes its elements
    // (f per token each clamp, 2f the cat). Backward (PyTorch's clamp_backward,
    // torch/csrc/autograd/FunctionsManual.cpp @ pytorch/pytorch 002ca671): the one-sided
    // clamp where(self <= c, grad, 0) (a compare writing bools, then where), the two-sided
    // where((self >= -c).logical_and_(self <= c), grad, 0) (two compares, the and, where),
    // and torch.chunk's backward, a cat of the two halves' gradients (2f).
    x.clamp_bytes = received * f * 8 * e;
    x.clamp_kernels = 3;
    x.fwd_bytes += x.clamp_bytes;
    x.fwd_kernels += x.clamp_kernels;
    const double one_sided = (e + 1) + (1 + 2 * e);
    const double two_sided = 2 * (e + 1) + 3 + (1 + 2 * e);
    x.bwd_bytes += received * f * (one_sided + two_sided + 4 * e);
    x.bwd_kernels += 2 + 4 + 1;
    x.clamp_copy = received * 2 * f * e;
  }
  if (m.expert_bias) {
    // FC1's bias is GroupedLinear's (skip_bias_add false): the cuBLAS epilogue adds it and
    // the weight-gradient GEMM's reduces its gradient (TransformerEngine
    // pytorch/module/grouped_linear.py @ 71bbefb, TE 2.14 of the 26.04 container): no
    // kernel. FC2's is returned (skip_bias_add true) and added by _apply_bias: per local
    // expert t + b * p (the bias scaled by the token's routing probability, a [tokens, 1]
    // column), torch.cat of the experts' results, .to() the activation dtype. The
    // probabilities are fp32 with the flex dispatcher (token_dispatcher.py: DeepEP and
    // HybridEP take float32 probs and upcast them), else the router's dtype (bf16: GPT-OSS
    // sets no moe_router_dtype), so b * p and what follows are q = max(e, p) bytes wide.
    const double w = static_cast<double>(m.ExpertDim());
    const double p = shape.moe_dispatcher == MoeDispatcher::kFlex ? 4.0 : e;
    const double q = std::max(e, p);
    const bool cast = q > e;
    // Forward: b * p writes q; t + (b * p) reads e + q, writes q; cat reads and writes q;
    // the cast reads q and writes e.
    x.fwd_bytes += received * w * (q + (e + 2 * q) + 2 * q + (cast ? q + e : 0));
    // TEGroupedMLP.forward calls _apply_bias after linear_fc2 returns, so these are
    // launched after FC2's GEMMs and run behind them (HostThread::Issue's trailing).
    x.fwd_after_fc2 = static_cast<int>(2 * local_experts) + 1 + (cast ? 1 : 0);
    x.fwd_kernels += x.fwd_after_fc2;
    // Backward (autograd): the cast's backward (e to q) and, per expert, the add's gradient
    // cast back to t's dtype; the split's backward, a cat of t's gradients (e); the mul's
    // two gradients, grad * p and grad * b, each written at q and summed to the bias'
    // [w] and the probabilities' [tokens, 1] (read again).
    x.bwd_bytes += received * w * ((cast ? 2 * (e + q) : 0) + 2 * e + 6 * q);
    x.bwd_kernels += static_cast<int>((4 + (cast ? 1 : 0)) * local_experts) + 1 + (cast ? 1 : 0);
  }
  return x;
}

// Adds ExpertElementwise's kernels to the MoE block. The clamped copy is what the
// activation saves (FC1's output stays for the clamp's backward); under moe_act's
// recomputation the checkpointed function is bias_act_func whole, so the clamp is re-run
// with it and its copy is working memory of the backward instead.
void AddExpertElementwise(const ExpertExtras& x, const LayerShape& shape, MoeCost* c) {
  c->extra_fwd_bytes = x.fwd_bytes;
  c->extra_bwd_bytes = x.bwd_bytes;
  c->extra_fwd_kernels = x.fwd_kernels;
  c->extra_fwd_trailing = x.fwd_after_fc2;
  c->extra_bwd_kernels = x.bwd_kernels;
  if (!shape.RecomputesMoeAct()) {
    c->experts.stored_act_bytes += x.clamp_copy;
    return;
  }
  c->experts.transient_act_bytes += x.clamp_copy;
  c->experts.recompute_bytes += x.clamp_bytes;
  c->experts.recompute_kernels += x.clamp_kernels;
}

// The routed experts' activation kernel(s) (ActivationKernelsOf), over `width_bytes` per
// received token (f elements). Its backward runs once, one kernel for SwiGLU
// (SwiGLUFunction / WeightedSwiGLUFunction.backward: swiglu_back, weighted_swiglu_back in
// megatron/core/fusions/fused_bias_swiglu.py @ NVIDIA/Megatron-LM 00caa53a), between FC2's
// backward and FC1's: in the input-gradient op (MoeCost::act_bwd_bytes).
void AddExpertActivation(const ActivationKernels& act, double width_bytes, MoeCost* c) {
  c->experts.fwd_kernels += act.fwd_kernels;
  c->experts.fwd_bytes = act.fwd_elements * width_bytes;
  c->act_bwd_bytes = act.bwd_elements * width_bytes;
  c->experts.bwd_extra_kernels = act.bwd_kernels - act.fwd_kernels;
}

// Megatron-Core's paged stash (LayerShape::moe_paged_stash; megatron/core/transformer/moe/
// paged_stash.py @ NVIDIA/Megatron-LM core_v0.19.0): what Transformer Engine's fused grouped
// MLP saves for backward and marks as grouped (mark_grouped_tensor in transformer_engine/
// pytorch/ops/fused/grouped_mlp.py @ release_v2.18_nemo_26.08, the 26.08 container's TE):
// per received token copy, FC1's input column-wise in MXFP8 (dim bytes and one E8M0 scale
// per 32), FC1's BF16 output (the GLU's input: 2f elements, f without a GLU), the routing
// probability (fp32 from HybridEP), and FC2's input column-wise (f bytes and its scales).
// After the experts' forward paged_stash_copy_kernel reads each and writes it into the
// buffer's pages; before their backward paged_stash_pop_kernel reads it back into a fresh
// tensor: each way twice the saved bytes, one kernel per tensor (the few-byte book-keeping
// kernels beside them, the page record's and free list's, are not counted). Megatron-Core
// runs them on a side stream (PagedStashManager.pack_stream, also its unpack stream): the
// schedule puts them there (moe_blocks.cc).
void AddPagedStash(const ModelSpec& m, double received, MoeCost* c) {
  constexpr double kBf16 = 2, kProbBytes = 4, kScalePerElement = 1.0 / 32;
  constexpr int kTensors = 6;  // FC1's input and FC2's data and scales, FC1's output, probs
  const double dim = static_cast<double>(m.ExpertDim());
  const double f = static_cast<double>(m.ExpertFfnHidden());
  const double fc1_out = (m.FfnMatrices() == 3 ? 2 : 1) * f;
  const double saved =
      received * ((dim + f) * (1 + kScalePerElement) + fc1_out * kBf16 + kProbBytes);
  c->stash_bytes = 2 * saved;
  c->stash_kernels = kTensors;
}

}  // namespace

MoeCost MoeLayerCost(const ModelSpec& m, const LayerShape& shape, int ep, double load) {
  const LayerDims d = DimsOf(m, shape);
  MoeCost c;
  c.tokens = d.s * d.b / d.t;
  const double h = d.h, f = static_cast<double>(m.ExpertFfnHidden());
  const int mats = m.FfnMatrices();
  const double sp_split = shape.sequence_parallel ? d.t : 1.0;
  // Router: LayerNorm, a hidden x experts GEMM and top-k, on the rank's tokens, and the
  // kernels around them (MoeRouterKernels).
  c.router.fwd_kernels = kMoeRouterKernels;
  c.router.weight_kernels = 1;
  c.router.fwd_flops = 2 * c.tokens * h * m.experts;
  c.router.fwd_bytes = kElementwiseTrafficSbh * d.s * d.b * h / sp_split;
  c.router.stored_act_bytes = (2 * d.elt + 1) * d.s * d.b * h / sp_split + 4 * c.tokens * m.experts;
  if (shape.RecomputesLayernorm()) SetNormRecompute(d.elt * d.s * d.b * h / sp_split, &c.router);
  const double dim = static_cast<double>(m.ExpertDim());
  if (m.moe_latent_size > 0) {
    // LatentMoE: the hidden -> latent and latent -> hidden projections, with the router,
    // on the rank's tokens; their inputs are kept for backward.
    c.router.fwd_kernels += 2;
    c.router.weight_kernels += 2;
    c.router.fwd_flops += 4 * c.tokens * h * dim;
    c.router.stored_act_bytes += c.tokens * (h + dim) * d.elt;
  }
  // Routed experts: each token goes to top_k experts; this rank's experts receive, when
  // balanced, as many token copies as it sends.
  const double sent = c.tokens * m.top_k, received = sent * load;
  const double local_experts = static_cast<double>(m.experts) / ep;
  // GroupedLinear (and the grouped_gemm library) launches one GEMM per local expert for
  // each of FC1 and FC2, on 4 streams (TeGroupedGemmStreams, layer_kernels.h): a launch
  // slot per 4 experts. The fused grouped MLP, torch._grouped_mm: one kernel each; the
  // fused MLP has the activation in FC1's epilogue.
  const bool fused = shape.fused_grouped_mlp;
  const int gemm_slots =
      shape.OneKernelPerExpertGemm() ? 2 : 2 * static_cast<int>(std::ceil(local_experts / 4));
  const MoePermutation perm = shape.moe_dispatcher == MoeDispatcher::kFlex
                                  ? FlexPermutation(received)
                                  : AlltoAllPermutation(sent, received, c.tokens, local_experts);
  const ActivationKernels act = ActivationKernelsOf(m.ffn_kind, shape.squared_relu_fused);
  c.experts.fwd_kernels = gemm_slots + perm.kernels;
  c.experts.weight_kernels = gemm_slots;
  c.experts.fwd_flops = 2 * received * dim * f * mats;
  if (!fused) AddExpertActivation(act, received * f * d.elt, &c);
  c.permute_bytes = perm.rows * dim * d.elt;
  // Permuted input, FFN intermediates (as a dense MLP of the received tokens).
  // FP8: the permuted input and FC2's input are saved in FP8.
  c.experts.stored_act_bytes = received * (dim * (d.elt - d.Fp8Saving()) +
                                           f * ((mats == 3 ? 3 : 2) * d.elt - d.Fp8Saving()));
  if (shape.RecomputesMoeAct()) {
    SetActivationRecompute(received * f * d.gemm_in, act.fwd_elements * received * f * d.elt,
                           act.fwd_kernels, &c.experts);
  }
  AddExpertElementwise(ExpertElementwise(m, shape, received, local_experts, d.elt), shape, &c);
  if (shape.fused_grouped_mlp && shape.moe_paged_stash) AddPagedStash(m, received, &c);
  if (shape.recompute == Recompute::kFull) {
    c.experts.transient_act_bytes = c.experts.stored_act_bytes;
    c.experts.stored_act_bytes = 0;
    c.experts.recompute_flops = c.experts.fwd_flops;
    c.experts.recompute_bytes = c.experts.fwd_bytes;
    c.experts.recompute_kernels = c.experts.fwd_kernels;
  }
  c.dispatch_bytes = c.tokens * m.top_k * dim * d.elt;
  c.token_bytes = c.tokens * dim * d.elt;
  // Shared experts: a dense MLP of shared_experts * moe_ffn_hidden, TP-split.
  if (m.shared_experts > 0) {
    ModelSpec dense = m;
    dense.ffn_hidden = m.shared_experts * m.ExpertFfnHidden();
    LayerShape shared = shape;
    shared.recompute_modules.mlp = false;  // Megatron's shared_experts (not modelled)
    c.shared = TransformerLayerCost(dense, shared).mlp;
  }
  c.expert_params = static_cast<double>(m.experts) / ep * ExpertParams(m);
  const double dense = h * m.experts + m.shared_experts * SharedExpertParams(m);
  c.dense_params = (m.moe_latent_size > 0 ? dense + LatentProjectionParams(m) : dense) / d.t + h;
  return c;
}

}  // namespace meshsim

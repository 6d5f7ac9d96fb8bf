#include "sim/workload/transformer.h"

#include <algorithm>
#include <cassert>
#include <cmath>

#include "sim/workload/mamba.h"

namespace meshsim {
namespace {

// Element-wise HBM traffic per stored element, a coarse constant for LayerNorm, dropout,
// bias and residual kernels (read + write of their inputs and outputs), in sbh-units.
constexpr double kElementwiseTrafficSbh = 11.0;
// Softmax, masking and dropout over the attention scores, in a*s*s*b units of 16-bit
// elements: write scores, read + write softmax, read + write dropout, mask.
constexpr double kAttentionCoreTraffic = 5.5;

struct Dims {
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

Dims DimsOf(const ModelSpec& m, const LayerShape& shape) {
  assert(m.heads % shape.tp == 0);
  const double qk = static_cast<double>(m.QkHeadDim()), v = static_cast<double>(m.VHeadDim());
  const double latent =
      m.IsMla() ? static_cast<double>(m.q_lora_rank + m.kv_lora_rank + m.qk_rope_head_dim) : 0.0;
  return Dims{static_cast<double>(shape.seq),
              static_cast<double>(shape.micro_batch),
              static_cast<double>(m.hidden),
              static_cast<double>(m.heads),
              static_cast<double>(m.ffn_hidden),
              static_cast<double>(shape.tp),
              BytesPerElement(shape.dtype),
              m.FfnMatrices(),
              static_cast<double>(shape.KeysPerQuery()),
              m.heads * qk,
              m.kv_heads * qk,
              m.kv_heads * v,
              m.heads * v,
              latent,
              GemmOperandBytes(shape.dtype)};
}

// Parameters of the attention projections: those split by TP (over heads) and those every
// TP rank holds whole (MLA's down-projections), and MLA's latent norms (whole too).
struct AttentionWeights {
  double split, replicated, latent_norms;
};

AttentionWeights AttentionWeightsOf(const ModelSpec& m) {
  const double h = static_cast<double>(m.hidden), a = m.heads;
  const double qk = static_cast<double>(m.QkHeadDim()), v = static_cast<double>(m.VHeadDim());
  const double out = a * v * h;
  if (!m.IsMla()) return {h * (a * qk + m.kv_heads * (qk + v)) + out, 0, 0};
  const double q_lora = static_cast<double>(m.q_lora_rank);
  const double kv_lora = static_cast<double>(m.kv_lora_rank);
  const double rope = static_cast<double>(m.qk_rope_head_dim);
  const double nope = static_cast<double>(m.HeadDim());
  // Q: hidden -> q_lora (+ norm) -> heads x qk, or hidden -> heads x qk directly.
  const double q_up = (q_lora > 0 ? q_lora : h) * a * qk;
  const double q_down = h * q_lora;
  // K, V: hidden -> kv_lora + rope (+ norm of kv_lora) -> heads x (nope + v).
  const double kv_down = h * (kv_lora + rope);
  const double kv_up = kv_lora * a * (nope + v);
  return {q_up + kv_up + out, q_down + kv_down, q_lora + kv_lora};
}

// Stored activations of the attention block without recomputation, split into the part
// that is replicated across TP ranks (split only by sequence parallelism), the part split
// by TP, and the attention core (softmax, its dropout mask and output), split by TP.
struct AttentionActs {
  double replicated, parallel, core;
  double latent;  // MLA's latents: whole on every TP rank (and not split by SP)
};

AttentionActs AttentionActivations(const Dims& d, bool flash) {
  const double sbh = d.s * d.b * d.h;
  // LayerNorm input, QKV input (elt each; FP8: the QKV input in FP8) and the dropout
  // mask (1 byte).
  const double replicated = sbh * (2 * d.elt + 1 - d.Fp8Saving());
  // Q, K, V and the output-projection input (FP8: that input in FP8; MLA: and the
  // latents, on every TP rank).
  const double parallel =
      d.s * d.b * (d.elt * (d.q_w + d.k_w + d.v_w + d.o_w) - d.Fp8Saving() * d.o_w);
  const double latent = d.s * d.b * d.elt * d.latent_w;
  // Softmax output (elt), dropout mask (1 byte), dropout output (elt) per score; with
  // fused attention only the fp32 softmax statistics (one per query and head).
  const double core = flash ? d.a * d.s * d.b * 4 : d.a * d.s * d.kv_s * d.b * (2 * d.elt + 1);
  return {replicated, parallel, core, latent};
}

// Stored activations of the MLP block: replicated part and TP-split part.
std::pair<double, double> MlpActivations(const Dims& d) {
  const double sbh = d.s * d.b * d.h;
  // LayerNorm input, FC1 input (FP8: in FP8), mask.
  const double replicated = sbh * (2 * d.elt + 1 - d.Fp8Saving());
  // GeLU: its input and FC2's input; SwiGLU: gate, up and FC2's input (FP8: in FP8).
  const double parallel = d.s * d.b * d.f * (d.elt * (d.ffn_matrices == 3 ? 3 : 2) - d.Fp8Saving());
  return {replicated, parallel};
}

// Recompute::kProjections: of the weight matmuls' outputs JAX saves those the backward
// needs: Q, K and V (the attention core's backward), the attention output projection's
// (with the layer input, the residual sum that the MLP's norm re-runs from) and the MLP's
// input projections' (gate and up for SwiGLU: the activation's backward); not FC2's, whose
// only use is the residual add. The layer input is kept as with full recomputation.
// Element-wise results and the attention core are re-run in backward.
void SetProjectionsActivations(const Dims& d, double sp_split, double core, LayerCost* c) {
  const double sbh = d.s * d.b * d.h;
  c->attention.stored_act_bytes =
      2 * sbh * d.elt / sp_split + d.s * d.b * d.elt * ((d.q_w + d.k_w + d.v_w) / d.t + d.latent_w);
  c->attention.transient_act_bytes = core;
  c->mlp.stored_act_bytes = d.s * d.b * d.f * d.elt * (d.ffn_matrices - 1) / d.t;
}

// Recompute::kFull: only the layer input is kept; backward re-runs the whole layer
// forward, under XLA less each block's last GEMM (LayerShape::xla_remat).
void SetFullRecompute(const Dims& d, double sp_split, double attn_none, double mlp_none, bool xla,
                      LayerCost* c) {
  BlockCost& at = c->attention;
  BlockCost& mlp = c->mlp;
  at.stored_act_bytes = 2 * d.s * d.b * d.h / sp_split;
  at.transient_act_bytes = attn_none;
  at.recompute_flops = at.fwd_flops;
  at.recompute_bytes = at.fwd_bytes;
  at.recompute_kernels = at.fwd_kernels;
  mlp.transient_act_bytes = mlp_none;
  mlp.recompute_flops = mlp.fwd_flops;
  mlp.recompute_bytes = mlp.fwd_bytes;
  mlp.recompute_kernels = mlp.fwd_kernels;
  if (!xla) return;
  at.recompute_flops -= 2 * d.s * d.b * d.o_w * d.h / d.t;  // the output projection
  mlp.recompute_flops -= 2 * d.s * d.b * d.h * d.f / d.t;   // FC2
  --at.recompute_kernels;
  --mlp.recompute_kernels;
}

// RecomputeModules::mlp: the checkpointed MLP keeps its input (the residual stream, split
// by sequence parallelism) and, outside the checkpoint, the residual add's dropout mask;
// backward re-runs the block's forward and re-materialises the rest.
void SetMlpRecompute(const Dims& d, double sp_split, double mlp_none, BlockCost* mlp) {
  mlp->stored_act_bytes = d.s * d.b * d.h * (d.elt + 1) / sp_split;
  mlp->transient_act_bytes = mlp_none - mlp->stored_act_bytes;
  mlp->recompute_flops = mlp->fwd_flops;
  mlp->recompute_bytes = mlp->fwd_bytes;
  mlp->recompute_kernels = mlp->fwd_kernels;
}

}  // namespace

LayerCost TransformerLayerCost(const ModelSpec& m, const LayerShape& shape) {
  const Dims d = DimsOf(m, shape);
  const double sbh = d.s * d.b * d.h;
  const double sp_split = shape.sequence_parallel ? d.t : 1.0;
  LayerCost c;

  // Attention block: projections (per rank: the TP-split ones / tp, MLA's
  // down-projections whole), scores over qk and context over v elements per head.
  const AttentionWeights w = AttentionWeightsOf(m);
  const double proj_flops = 2 * d.s * d.b * (w.split + w.replicated * d.t);
  const double core_flops = 2 * d.b * d.s * d.kv_s * (d.q_w + d.o_w);
  // Fused attention keeps the scores on chip: no element-wise HBM traffic for them.
  const double core_bytes =
      shape.flash_attention ? 0.0 : kAttentionCoreTraffic * d.a * d.s * d.kv_s * d.b * d.elt / d.t;
  BlockCost& at = c.attention;
  // LayerNorm, QKV GEMM, scores, softmax+mask, dropout, context, projection GEMM,
  // bias+dropout+residual. MLA: Q down and up (or one Q GEMM), KV down and up, projection.
  const int proj_gemms = m.IsMla() ? (m.q_lora_rank > 0 ? 5 : 4) : 2;
  at.fwd_kernels = 6 + proj_gemms;
  at.weight_kernels = proj_gemms;
  at.fwd_flops = (proj_flops + core_flops) / d.t;
  at.fwd_bytes = kElementwiseTrafficSbh * sbh / sp_split + core_bytes;
  at.tp_comm_bytes = sbh * d.elt;
  at.core_flops = core_flops / d.t;
  at.core_bytes = core_bytes;
  const AttentionActs aa = AttentionActivations(d, shape.flash_attention);
  const double attn_none = aa.replicated / sp_split + (aa.parallel + aa.core) / d.t + aa.latent;

  // MLP block.
  BlockCost& mlp = c.mlp;
  // LayerNorm, FC1 GEMM, activation, FC2 GEMM, bias+dropout+residual (SwiGLU: + 1 GEMM).
  mlp.fwd_kernels = d.ffn_matrices == 3 ? 6 : 5;
  mlp.weight_kernels = d.ffn_matrices;
  mlp.fwd_flops = 2 * sbh * d.f * d.ffn_matrices / d.t;
  mlp.fwd_bytes = kElementwiseTrafficSbh * sbh / sp_split +
                  (d.ffn_matrices == 3 ? 6 : 4) * d.s * d.b * d.f / d.t;
  mlp.tp_comm_bytes = sbh * d.elt;
  const auto [mlp_rep, mlp_par] = MlpActivations(d);
  const double mlp_none = mlp_rep / sp_split + mlp_par / d.t;

  switch (shape.recompute) {
    case Recompute::kNone:
      at.stored_act_bytes = attn_none;
      mlp.stored_act_bytes = mlp_none;
      break;
    case Recompute::kSelective:
      at.stored_act_bytes = attn_none;
      if (shape.recompute_modules.core_attn) {
        at.stored_act_bytes -= aa.core / d.t;
        at.transient_act_bytes = aa.core / d.t;
        at.recompute_flops = core_flops / d.t;
        at.recompute_bytes = core_bytes;
        at.recompute_kernels = 4;  // scores, softmax+mask, dropout, context
      }
      mlp.stored_act_bytes = mlp_none;
      if (shape.RecomputesMlp()) SetMlpRecompute(d, sp_split, mlp_none, &mlp);
      break;
    case Recompute::kProjections:
      SetProjectionsActivations(d, sp_split, aa.core / d.t, &c);
      at.recompute_flops = core_flops / d.t;
      at.recompute_bytes = core_bytes;
      at.recompute_kernels = 4;  // scores, softmax+mask, dropout, context
      break;
    case Recompute::kFull:
      SetFullRecompute(d, sp_split, attn_none, mlp_none, shape.xla_remat, &c);
      break;
  }
  const double whole = w.replicated + w.latent_norms;
  c.params = (LayerParams(m) - whole) / d.t + whole;
  return c;
}

double StoredActivationBytesPerLayer(const ModelSpec& m, const LayerShape& shape) {
  const LayerCost c = TransformerLayerCost(m, shape);
  return c.attention.stored_act_bytes + c.mlp.stored_act_bytes;
}

double AttentionParams(const ModelSpec& m) {
  const AttentionWeights w = AttentionWeightsOf(m);
  return w.split + w.replicated + w.latent_norms + 2 * static_cast<double>(m.hidden);  // + norms
}

double AttentionParamsPerRank(const ModelSpec& m, int tp) {
  const AttentionWeights w = AttentionWeightsOf(m);
  const double whole = w.replicated + w.latent_norms;
  return (AttentionParams(m) - whole) / tp + whole;
}

double LayerParams(const ModelSpec& m) {
  const double h = static_cast<double>(m.hidden);
  return AttentionParams(m) + m.FfnMatrices() * h * static_cast<double>(m.ffn_hidden);
}

double ExpertParams(const ModelSpec& m) {
  return m.FfnMatrices() * static_cast<double>(m.ExpertDim()) *
         static_cast<double>(m.ExpertFfnHidden());
}

namespace {
// One shared expert (on hidden, LatentMoE or not).
double SharedExpertParams(const ModelSpec& m) {
  return m.FfnMatrices() * static_cast<double>(m.hidden) * static_cast<double>(m.ExpertFfnHidden());
}
// LatentMoE's hidden -> latent and latent -> hidden projections (0 without).
double LatentProjectionParams(const ModelSpec& m) {
  return 2.0 * static_cast<double>(m.hidden) * static_cast<double>(m.moe_latent_size);
}
}  // namespace

double MoeLayerParams(const ModelSpec& m, bool active_only) {
  const double router = static_cast<double>(m.hidden) * m.experts;
  const double routed = (active_only ? m.top_k : m.experts) * ExpertParams(m);
  const double moe = router + routed + m.shared_experts * SharedExpertParams(m);
  return AttentionParams(m) + (m.moe_latent_size > 0 ? moe + LatentProjectionParams(m) : moe);
}

double EmbeddingParams(const ModelSpec& m) {
  return static_cast<double>(m.vocab) * static_cast<double>(m.hidden);
}

double LayerParamsOf(const ModelSpec& m, int layer, bool active_only) {
  const double h = static_cast<double>(m.hidden);
  switch (m.KindOf(layer)) {
    case LayerKind::kMamba:
      return MambaLayerParams(m);
    case LayerKind::kAttention:
      return AttentionParams(m) - h;  // one norm: AttentionParams counts the MLP's too
    case LayerKind::kMlp:
      return LayerParams(m) - AttentionParams(m) + h;
    case LayerKind::kMoe:
      return MoeLayerParams(m, active_only) - AttentionParams(m) + h;
    case LayerKind::kTransformer:
      break;
  }
  return m.IsMoeLayer(layer) ? MoeLayerParams(m, active_only) : LayerParams(m);
}

double MtpExtraParams(const ModelSpec& m) {
  const double h = static_cast<double>(m.hidden);
  return 3 * h + 2 * h * h;
}

namespace {
double CountParams(const ModelSpec& m, bool active_only) {
  const double output = m.tied_embeddings ? 0.0 : EmbeddingParams(m);
  double layers = 0;
  for (int l = 0; l < m.AllLayers(); ++l) layers += LayerParamsOf(m, l, active_only);
  return layers + m.mtp_layers * MtpExtraParams(m) + EmbeddingParams(m) + output +
         static_cast<double>(m.hidden);
}
}  // namespace

double TotalParams(const ModelSpec& m) { return CountParams(m, false); }
double ActiveParams(const ModelSpec& m) { return CountParams(m, true); }

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
void SetActivationRecompute(double act_out, double traffic, BlockCost* experts) {
  experts->stored_act_bytes -= act_out;
  experts->transient_act_bytes = act_out;
  experts->recompute_bytes = traffic;
  experts->recompute_kernels = 1;
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

ExpertExtras ExpertElementwise(const ModelSpec& m, const LayerShape& shape, double received,
                               double local_experts, double e) {
  ExpertExtras x;
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
// runs them on a side stream; meshsim has one compute stream and charges them in the
// experts' ops (an upper bound on their cost where the compute they overlap leaves HBM
// bandwidth and SMs idle).
void AddPagedStash(const ModelSpec& m, double received, MoeCost* c) {
  constexpr double kBf16 = 2, kProbBytes = 4, kScalePerElement = 1.0 / 32;
  constexpr int kTensors = 6;  // FC1's input and FC2's data and scales, FC1's output, probs
  const double dim = static_cast<double>(m.ExpertDim());
  const double f = static_cast<double>(m.ExpertFfnHidden());
  const double fc1_out = (m.FfnMatrices() == 3 ? 2 : 1) * f;
  const double saved =
      received * ((dim + f) * (1 + kScalePerElement) + fc1_out * kBf16 + kProbBytes);
  c->extra_fwd_bytes += 2 * saved;
  c->extra_bwd_bytes += 2 * saved;
  c->extra_fwd_kernels += kTensors;
  c->extra_bwd_kernels += kTensors;
}

}  // namespace

MoeCost MoeLayerCost(const ModelSpec& m, const LayerShape& shape, int ep, double load) {
  const Dims d = DimsOf(m, shape);
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
  const int activation_kernels = fused ? 0 : 1;
  c.experts.fwd_kernels = gemm_slots + activation_kernels + perm.kernels;
  c.experts.weight_kernels = gemm_slots;
  c.experts.fwd_flops = 2 * received * dim * f * mats;
  // The activation (SwiGLU reads 2f and writes f elements; GeLU 1 and 1).
  c.experts.fwd_bytes = received * (mats == 3 ? 3 : 2) * f * d.elt * activation_kernels;
  c.permute_bytes = perm.rows * dim * d.elt;
  // Permuted input, FFN intermediates (as a dense MLP of the received tokens).
  // FP8: the permuted input and FC2's input are saved in FP8.
  c.experts.stored_act_bytes = received * (dim * (d.elt - d.Fp8Saving()) +
                                           f * ((mats == 3 ? 3 : 2) * d.elt - d.Fp8Saving()));
  if (shape.RecomputesMoeAct()) {
    SetActivationRecompute(received * f * d.gemm_in, received * (mats == 3 ? 3 : 2) * f * d.elt,
                           &c.experts);
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

double KvBlockBytes(const ModelSpec& m, const LayerShape& shape) {
  const double kv =
      static_cast<double>(m.kv_heads) * static_cast<double>(m.QkHeadDim() + m.VHeadDim());
  return shape.seq * shape.micro_batch * kv * BytesPerElement(shape.dtype) / shape.tp;
}

double RingMergeBytes(const ModelSpec& m, const LayerShape& shape, bool backward) {
  const double heads = static_cast<double>(m.heads);
  const double qk = static_cast<double>(m.QkHeadDim()), v = static_cast<double>(m.VHeadDim());
  const double per_token =
      backward ? heads * qk + static_cast<double>(m.kv_heads) * (qk + v) : heads * v;
  constexpr double kReadReadWrite = 3;
  return kReadReadWrite * shape.seq * shape.micro_batch * per_token * BytesPerElement(shape.dtype) /
         shape.tp;
}

double LogitFlops(const ModelSpec& m, const LayerShape& shape) {
  return 2.0 * shape.seq * shape.micro_batch * static_cast<double>(m.hidden) *
         static_cast<double>(m.vocab) / shape.tp;
}

namespace {

// Forward FLOPs of layer `layer` for one sequence of the model's seq_len.
double LayerForwardFlops(const ModelSpec& m, int layer, const LayerShape& one, const LayerCost& c,
                         double windowed_attention) {
  double fwd = 0;
  if (m.IsMambaLayer(layer)) fwd += MambaBlockCost(m, one).fwd_flops;
  if (m.HasAttention(layer))
    fwd += m.IsWindowedLayer(layer) ? windowed_attention : c.attention.fwd_flops;
  if (m.IsMoeLayer(layer)) {
    const MoeCost moe = MoeLayerCost(m, one, 1);
    fwd += moe.router.fwd_flops + moe.experts.fwd_flops + moe.shared.fwd_flops;
  } else if (m.HasDenseMlp(layer)) {
    fwd += c.mlp.fwd_flops;
  }
  return fwd;
}

}  // namespace

double MtpProjectionFlops(const ModelSpec& m, const LayerShape& shape) {
  const double h = static_cast<double>(m.hidden);
  return 2.0 * shape.seq * shape.micro_batch * 2 * h * h;
}

double ModelFlopsPerStep(const ModelSpec& m, double sequences) {
  LayerShape one;
  one.seq = m.seq_len;
  const LayerCost c = TransformerLayerCost(m, one);
  LayerShape windowed = one;
  windowed.window = m.sliding_window;
  const double windowed_attention = TransformerLayerCost(m, windowed).attention.fwd_flops;
  // The output layer, once more per MTP module, and each MTP module's projection.
  double fwd = (1 + m.mtp_layers) * LogitFlops(m, one) + m.mtp_layers * MtpProjectionFlops(m, one);
  for (int l = 0; l < m.AllLayers(); ++l)
    fwd += LayerForwardFlops(m, l, one, c, windowed_attention);
  return 3.0 * fwd * sequences;
}

}  // namespace meshsim

#include "sim/workload/transformer.h"

#include <algorithm>
#include <cassert>
#include <cmath>

#include "sim/workload/layer_dims.h"
#include "sim/workload/mamba.h"

namespace meshsim {

LayerDims DimsOf(const ModelSpec& m, const LayerShape& shape) {
  assert(m.heads % shape.tp == 0);
  const double qk = static_cast<double>(m.QkHeadDim()), v = static_cast<double>(m.VHeadDim());
  const double latent =
      m.IsMla() ? static_cast<double>(m.q_lora_rank + m.kv_lora_rank + m.qk_rope_head_dim) : 0.0;
  return LayerDims{static_cast<double>(shape.seq),
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

ActivationKernels ActivationKernelsOf(FfnKind kind, bool squared_relu_fused) {
  if (kind == FfnKind::kSwiglu) return {3, 5, 1, 1};
  if (kind == FfnKind::kSquaredRelu && !squared_relu_fused) return {4, 10, 2, 4};
  return {};
}

RopeKernels UnfusedRopeExtra(const ModelSpec& m, bool megatron) {
  if (!megatron || m.rope_mscale == 1.0 || m.IsMla()) return {};
  return {12 - 2, 13 - 2, 12 - 1, 7 - 1};
}

namespace {

// Softmax, masking and dropout over the attention scores, in a*s*s*b units of 16-bit
// elements: write scores, read + write softmax, read + write dropout, mask.
constexpr double kAttentionCoreTraffic = 5.5;

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

AttentionActs AttentionActivations(const LayerDims& d, bool flash, bool qk_norm) {
  const double sbh = d.s * d.b * d.h;
  // LayerNorm input, QKV input (elt each; FP8: the QKV input in FP8) and the dropout
  // mask (1 byte).
  const double replicated = sbh * (2 * d.elt + 1 - d.Fp8Saving());
  // Q, K, V and the output-projection input (FP8: that input in FP8; MLA: and the
  // latents, on every TP rank; QK normalization: and Q and K before their norms).
  const double normed = qk_norm ? d.q_w + d.k_w : 0.0;
  const double parallel =
      d.s * d.b * (d.elt * (d.q_w + d.k_w + d.v_w + d.o_w + normed) - d.Fp8Saving() * d.o_w);
  const double latent = d.s * d.b * d.elt * d.latent_w;
  // Softmax output (elt), dropout mask (1 byte), dropout output (elt) per score; with
  // fused attention only the fp32 softmax statistics (one per query and head).
  const double core = flash ? d.a * d.s * d.b * 4 : d.a * d.s * d.kv_s * d.b * (2 * d.elt + 1);
  return {replicated, parallel, core, latent};
}

// Stored activations of the MLP block: replicated part and TP-split part.
std::pair<double, double> MlpActivations(const LayerDims& d) {
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
void SetProjectionsActivations(const LayerDims& d, double sp_split, double core, LayerCost* c) {
  const double sbh = d.s * d.b * d.h;
  c->attention.stored_act_bytes =
      2 * sbh * d.elt / sp_split + d.s * d.b * d.elt * ((d.q_w + d.k_w + d.v_w) / d.t + d.latent_w);
  c->attention.transient_act_bytes = core;
  c->mlp.stored_act_bytes = d.s * d.b * d.f * d.elt * (d.ffn_matrices - 1) / d.t;
}

// Unfused RoPE (YaRN's mscale) on Q and K: its forward traffic and launches, and its
// backward's less the forward's, which dgrad and wgrad each charge (BlockCost::bwd_extra_*).
void AddUnfusedRope(const RopeKernels& rope, const LayerDims& d, BlockCost* at) {
  const double unit = 2 * d.s * d.b * (d.q_w + d.k_w) / d.t;  // Q and K in 16 bits
  at->fwd_bytes += rope.fwd_elements * unit;
  at->fwd_kernels += 2 * rope.fwd_kernels;
  at->bwd_extra_bytes += (rope.bwd_elements - 2 * rope.fwd_elements) * unit;
  at->bwd_extra_kernels += 2 * (rope.bwd_kernels - rope.fwd_kernels);
}

// QK normalization (ModelSpec::qk_norm) as Transformer Engine's RMSNorm runs it, one norm
// on Q and one on K: forward reads and writes them (2 units of Q and K in 16 bits, 2
// kernels); backward reads the input and the output gradient and writes the input
// gradient (3 units; a kernel and the weight gradient's finalizing kernel each), of which
// dgrad and wgrad each charge the forward's (BlockCost::bwd_extra_*: 3 - 2 x 2 units,
// 4 - 2 kernels). Its input, Q and K before the norm, is stored for backward.
void AddQkNorm(const LayerDims& d, BlockCost* at) {
  const double unit = 2 * d.s * d.b * (d.q_w + d.k_w) / d.t;
  at->fwd_bytes += 2 * unit;
  at->fwd_kernels += 2;
  at->bwd_extra_bytes += (3 - 2 * 2) * unit;
  at->bwd_extra_kernels += 4 - 2;
}

// What Q and K go through between the QKV projection and the attention core beyond the
// fused RoPE: YaRN's unfused RoPE and QK normalization.
void AddQkKernels(const ModelSpec& m, const LayerShape& shape, const LayerDims& d, BlockCost* at) {
  AddUnfusedRope(UnfusedRopeExtra(m, shape.megatron), d, at);
  if (m.qk_norm) AddQkNorm(d, at);
}

// Recompute::kFull: only the layer input is kept; backward re-runs the whole layer
// forward, under XLA less each block's last GEMM (LayerShape::xla_remat).
void SetFullRecompute(const LayerDims& d, double sp_split, double attn_none, double mlp_none,
                      bool xla, LayerCost* c) {
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
void SetMlpRecompute(const LayerDims& d, double sp_split, double mlp_none, BlockCost* mlp) {
  mlp->stored_act_bytes = d.s * d.b * d.h * (d.elt + 1) / sp_split;
  mlp->transient_act_bytes = mlp_none - mlp->stored_act_bytes;
  mlp->recompute_flops = mlp->fwd_flops;
  mlp->recompute_bytes = mlp->fwd_bytes;
  mlp->recompute_kernels = mlp->fwd_kernels;
}

// RecomputeModules::mla_up_proj: Q, K and V (the attention core's inputs, split by TP) are
// dropped and re-materialised before the attention's backward by the Q and KV
// up-projection GEMMs and two fused kernels that apply RoPE and concatenate (reading the
// up-projections' outputs, writing Q, K and V); the latents stay stored.
void SetMlaUpProjRecompute(const ModelSpec& m, const LayerDims& d, BlockCost* at) {
  const double qkv = d.s * d.b * d.elt * (d.q_w + d.k_w + d.v_w) / d.t;
  at->stored_act_bytes -= qkv;
  at->transient_act_bytes += qkv;
  const double a = m.heads, qk = static_cast<double>(m.QkHeadDim());
  const double q_in = m.q_lora_rank > 0 ? static_cast<double>(m.q_lora_rank) : d.h;
  const double kv_up =
      static_cast<double>(m.kv_lora_rank) * a * static_cast<double>(m.HeadDim() + m.VHeadDim());
  at->recompute_flops += 2 * d.s * d.b * (q_in * a * qk + kv_up) / d.t;
  at->recompute_bytes += 2 * qkv;
  at->recompute_kernels += 4;  // two GEMMs, two RoPE-and-concatenate kernels
}

}  // namespace

LayerCost TransformerLayerCost(const ModelSpec& m, const LayerShape& shape) {
  const LayerDims d = DimsOf(m, shape);
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
  AddQkKernels(m, shape, d, &at);
  const AttentionActs aa = AttentionActivations(d, shape.flash_attention, m.qk_norm);
  const double attn_none = aa.replicated / sp_split + (aa.parallel + aa.core) / d.t + aa.latent;

  // MLP block.
  BlockCost& mlp = c.mlp;
  // LayerNorm, FC1 GEMM, activation, FC2 GEMM, bias+dropout+residual (SwiGLU: + 1 GEMM).
  // The activation's traffic in 16-bit elements; its backward, as the block's other
  // element-wise work, is charged as the forward's in each of dgrad and wgrad, and what
  // an unfused squared ReLU's backward moves beyond that in dgrad (bwd_extra_*).
  const ActivationKernels act = ActivationKernelsOf(m.ffn_kind, shape.squared_relu_fused);
  constexpr double kActivationElementBytes = 2;
  const double act_unit = kActivationElementBytes * d.s * d.b * d.f / d.t;
  mlp.fwd_kernels = (d.ffn_matrices == 3 ? 5 : 4) + act.fwd_kernels;
  mlp.weight_kernels = d.ffn_matrices;
  mlp.fwd_flops = 2 * sbh * d.f * d.ffn_matrices / d.t;
  mlp.fwd_bytes = kElementwiseTrafficSbh * sbh / sp_split + act.fwd_elements * act_unit;
  mlp.bwd_extra_bytes = std::max(0.0, act.bwd_elements - 2 * act.fwd_elements) * act_unit;
  mlp.bwd_extra_kernels = act.bwd_kernels - act.fwd_kernels;
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
      if (shape.recompute_modules.mla_up_proj && m.IsMla()) SetMlaUpProjRecompute(m, d, &at);
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
  // + the layer's norms (and QK normalization's two, over a head's Q and K elements)
  const double qk_norms = m.qk_norm ? 2.0 * static_cast<double>(m.QkHeadDim()) : 0.0;
  return w.split + w.replicated + w.latent_norms + 2 * static_cast<double>(m.hidden) + qk_norms;
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

// One shared expert (on hidden, LatentMoE or not).
double SharedExpertParams(const ModelSpec& m) {
  return m.FfnMatrices() * static_cast<double>(m.hidden) * static_cast<double>(m.ExpertFfnHidden());
}
// LatentMoE's hidden -> latent and latent -> hidden projections (0 without).
double LatentProjectionParams(const ModelSpec& m) {
  return 2.0 * static_cast<double>(m.hidden) * static_cast<double>(m.moe_latent_size);
}

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
  for (int l = 0; l < m.AllLayers(); ++l) {
    if (!m.SharesMtpWeights(l)) layers += LayerParamsOf(m, l, active_only);
  }
  return layers + m.MtpWeightModules() * MtpExtraParams(m) + EmbeddingParams(m) + output +
         static_cast<double>(m.hidden);
}
}  // namespace

double TotalParams(const ModelSpec& m) { return CountParams(m, false); }
double ActiveParams(const ModelSpec& m) { return CountParams(m, true); }

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

#include "sim/schedule/stage_costs.h"

#include <algorithm>
#include <optional>

#include "sim/workload/mamba.h"

namespace meshsim {
namespace {

LayerShape ShapeOf(const ModelSpec& m, const PlanSpec& p, const TrainingSpec& t) {
  LayerShape s;
  s.seq = m.seq_len / p.cp;
  s.kv_seq = m.seq_len;
  s.micro_batch = p.micro_batch;
  s.tp = p.tp;
  s.sequence_parallel = p.sequence_parallel && p.tp > 1;
  s.recompute = p.recompute;
  s.recompute_modules = p.recompute_modules;
  s.dtype = t.dtype;
  s.flash_attention = t.flash_attention;
  s.fp8_attention = t.dtype == Dtype::kFp8 && t.fp8_attention;
  s.squared_relu_fused = t.squared_relu_fusion;
  s.xla_remat = !p.jax.Empty();
  s.moe_dispatcher = p.moe_dispatcher;
  s.fused_grouped_mlp = p.framework_options.fused_grouped_mlp;
  s.moe_paged_stash = p.framework_options.moe_paged_stash;
  s.grouped_gemm = p.moe_grouped_gemm;
  s.megatron = p.framework == Framework::kMegatron;
  return s;
}

// Bytes per logit the loss keeps to its backward (StageCosts::LogitBytes). PyTorch's
// F.cross_entropy saves log_softmax's output (`result`, in the input's dtype: its
// derivatives.yaml entry for _log_softmax), and NeMo-Automodel's training step holds the
// model's output, the bf16 logits, until its backward has run (`out = model(**batch)` ...
// `.backward()` in one function, _forward_backward_step of nemo_automodel/recipes/llm/
// train_ft.py @ NVIDIA-NeMo/Automodel 364f600be): 2 + 2 bytes, 2 + 4 cast to fp32.
double KeptBytesPerLogit(const TrainingSpec& t) {
  if (!t.cross_entropy_fusion) return 4.0;
  switch (t.cross_entropy_impl) {
    case CrossEntropyImpl::kTe:
      return 2.0;
    case CrossEntropyImpl::kTorch:
      return 4.0;
    case CrossEntropyImpl::kTorchFp32:
      return 6.0;
    case CrossEntropyImpl::kNative:
      break;
  }
  return 4.0;
}

}  // namespace

StageCosts::StageCosts(const ModelSpec& m, const PlanSpec& p, const TrainingSpec& t)
    : m_(m), p_(p), split_(p, m), shape_(ShapeOf(m, p, t)), logit_bytes_(KeptBytesPerLogit(t)) {
  dense_layer_ = TransformerLayerCost(m, shape_);
  windowed_shape_ = shape_;
  windowed_shape_.window = m.sliding_window;
  windowed_attention_ = TransformerLayerCost(m, windowed_shape_).attention;
  embedding_params_ = meshsim::EmbeddingParams(m) / p.tp;
  if (m.IsHybrid() && m.mamba_heads > 0) mamba_ = MambaBlockCost(m, shape_);
  layer_params_.resize(m.AllLayers());
  const double h = static_cast<double>(m.hidden);
  const double attention = AttentionParamsPerRank(m, p.tp);
  // A dense MLP with its norm: a dense layer less its attention and attention norm.
  const double mlp = dense_layer_.params - attention + h / p.tp;
  std::optional<MoeCost> moe;  // every MoE block holds the same
  if (m.IsMoe()) moe = MoeLayerCost(m, shape_, p.ep);
  for (int l = 0; l < m.AllLayers(); ++l) {
    if (m.SharesMtpWeights(l)) continue;  // no parameters: the first MTP layer's weights
    LocalParams& lp = layer_params_[l];
    switch (m.KindOf(l)) {
      case LayerKind::kMamba:
        lp.dense = MambaLayerParamsPerRank(m, p.tp);
        break;
      case LayerKind::kAttention:
        lp.dense = attention - h / p.tp;
        break;
      case LayerKind::kMlp:
        lp.dense = mlp;
        break;
      case LayerKind::kMoe:
        lp = {moe->dense_params, moe->expert_params};
        break;
      case LayerKind::kTransformer:
        lp = m.IsMoeLayer(l) ? LocalParams{attention + moe->dense_params, moe->expert_params}
                             : LocalParams{dense_layer_.params, 0};
        break;
    }
    if (l >= m.layers) lp.dense += MtpExtraParams(m) / p.tp;
  }
}

LocalParams StageCosts::StageParams(int stage) const {
  LocalParams total;
  for (int chunk = 0; chunk < p_.virtual_stages; ++chunk) {
    const int vs = split_.VirtualStage(chunk, stage);
    for (int l = split_.FirstLayer(vs); l < split_.EndLayer(vs); ++l) {
      total.dense += layer_params_[l].dense;
      total.expert += layer_params_[l].expert;
    }
    if (!split_.IsLast(vs)) continue;
    for (int l = MtpBegin(); l < MtpEnd(); ++l) {
      total.dense += layer_params_[l].dense;
      total.expert += layer_params_[l].expert;
    }
  }
  if (HoldsEmbedding(stage)) total.dense += embedding_params_;
  if (HoldsOutput(stage)) total.dense += embedding_params_;
  return total;
}

bool StageCosts::HoldsOutput(int stage) const {
  return stage == p_.pp - 1 && !(m_.tied_embeddings && p_.pp == 1);
}

double StageCosts::Logits() const {
  return shape_.seq * shape_.micro_batch * static_cast<double>(m_.vocab) / p_.tp;
}

double StageCosts::LogitBytes() const { return logit_bytes_ * Logits(); }

double StageCosts::ExpertLoad(int ep_coord) const {
  if (p_.moe_skew == 1.0) return 1.0;
  const double e = m_.experts, local = e / p_.ep;
  double hot = p_.moe_skew;
  if (p_.moe_capacity_factor > 0) hot = std::min(hot, p_.moe_capacity_factor);
  const double others = (e - hot) / (e - 1);
  return ep_coord == 0 ? (hot + (local - 1) * others) / local : others;
}

}  // namespace meshsim

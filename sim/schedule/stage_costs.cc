#include "sim/schedule/stage_costs.h"

#include <algorithm>
#include <optional>

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
  s.dtype = t.dtype;
  s.flash_attention = t.flash_attention;
  return s;
}

}  // namespace

StageCosts::StageCosts(const ModelSpec& m, const PlanSpec& p, const TrainingSpec& t)
    : m_(m), p_(p), split_(p, m), shape_(ShapeOf(m, p, t)) {
  dense_layer_ = TransformerLayerCost(m, shape_);
  windowed_shape_ = shape_;
  windowed_shape_.window = m.sliding_window;
  windowed_attention_ = TransformerLayerCost(m, windowed_shape_).attention;
  embedding_params_ = meshsim::EmbeddingParams(m) / p.tp;
  layer_params_.resize(m.layers);
  std::optional<LocalParams> moe;  // every MoE layer holds the same
  for (int l = 0; l < m.layers; ++l) {
    if (!m.IsMoeLayer(l)) {
      layer_params_[l] = {dense_layer_.params, 0};
      continue;
    }
    if (!moe) {
      const MoeCost c = MoeLayerCost(m, shape_, p.ep);
      moe = LocalParams{AttentionParamsPerRank(m, p.tp) + c.dense_params, c.expert_params};
    }
    layer_params_[l] = *moe;
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
  }
  if (HoldsEmbedding(stage)) total.dense += embedding_params_;
  if (HoldsOutput(stage)) total.dense += embedding_params_;
  return total;
}

bool StageCosts::HoldsOutput(int stage) const {
  return stage == p_.pp - 1 && !(m_.tied_embeddings && p_.pp == 1);
}

double StageCosts::LogitBytes() const {
  return 4.0 * shape_.seq * shape_.micro_batch * static_cast<double>(m_.vocab) / p_.tp;
}

double StageCosts::ExpertLoad(int ep_coord) const {
  if (p_.moe_skew == 1.0) return 1.0;
  const double e = m_.experts, local = e / p_.ep;
  double hot = p_.moe_skew;
  if (p_.moe_capacity_factor > 0) hot = std::min(hot, p_.moe_capacity_factor);
  const double others = (e - hot) / (e - 1);
  return ep_coord == 0 ? (hot + (local - 1) * others) / local : others;
}

}  // namespace meshsim

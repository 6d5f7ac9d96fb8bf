#include "sim/workload/param_count.h"

namespace meshsim {
namespace {

double AttentionParams(const ModelSpec& m) {
  const double h = static_cast<double>(m.hidden);
  return h * (h + 2.0 * static_cast<double>(m.KvDim())) + h * h;  // QKV + output projection
}

}  // namespace

bool IsMoeLayer(const ModelSpec& m, int layer) {
  if (m.experts <= 0 || layer < m.dense_layers) return false;
  const int every = m.moe_every > 0 ? m.moe_every : 1;
  return (layer - m.dense_layers) % every == 0;
}

int MoeLayerCount(const ModelSpec& m) {
  int n = 0;
  for (int i = 0; i < m.layers; ++i) n += IsMoeLayer(m, i) ? 1 : 0;
  return n;
}

int64_t ExpertFfnHidden(const ModelSpec& m) {
  return m.moe_ffn_hidden > 0 ? m.moe_ffn_hidden : m.ffn_hidden;
}

ParamCount CountParams(const ModelSpec& m) {
  const double h = static_cast<double>(m.hidden);
  const double mats = m.FfnMatrices();
  const double embedding = static_cast<double>(m.vocab) * h;
  const double output = m.tied_embeddings ? 0.0 : embedding;
  const double per_layer = AttentionParams(m) + 2 * h;  // attention + two norms
  const double dense_mlp = mats * h * static_cast<double>(m.ffn_hidden);
  const double expert = mats * h * static_cast<double>(ExpertFfnHidden(m));
  const double router = h * m.experts;

  const int moe_layers = MoeLayerCount(m);
  const int dense_layers = m.layers - moe_layers;
  const double common = embedding + output + h + m.layers * per_layer + dense_layers * dense_mlp;
  ParamCount c;
  c.total = common + moe_layers * (router + (m.experts + m.shared_experts) * expert);
  c.active = common + moe_layers * (router + (m.top_k + m.shared_experts) * expert);
  return c;
}

}  // namespace meshsim

// Decodes a model YAML (experiment key `model`, or a file under workloads/models/).
#include "sim/config/decode.h"
#include "sim/config/decode_checks.h"

namespace meshsim::config {
namespace {

// The keys of hybrid models (layer_pattern, the Mamba-2 mixer), of LatentMoE and of MTP.
void DecodeHybridKeys(YamlReader& r, ModelSpec* m) {
  r.GetInt64("moe_latent_size", &m->moe_latent_size);
  r.GetString("layer_pattern", &m->layer_pattern);
  r.GetInt("mamba_heads", &m->mamba_heads);
  r.GetInt64("mamba_head_dim", &m->mamba_head_dim);
  r.GetInt64("mamba_state", &m->mamba_state);
  r.GetInt("mamba_groups", &m->mamba_groups);
  r.GetInt("mamba_conv_kernel", &m->mamba_conv_kernel);
  r.GetInt64("mamba_chunk", &m->mamba_chunk);
  r.GetInt("mtp_layers", &m->mtp_layers);
  r.GetBool("mtp_repeated_layer", &m->mtp_repeated_layer);
}

// layer_pattern: one of M * - E per layer, layers of them; MoE layers only with experts
// and experts only with MoE layers; the pattern, not dense_layers / moe_every, places them.
void CheckLayerPattern(YamlReader& r, const ModelSpec& m) {
  const std::string& p = m.layer_pattern;
  const size_t bad = p.find_first_not_of("M*-E");
  if (bad != std::string::npos) {
    FailKey(r, "layer_pattern",
            "expected one character per layer, M (Mamba-2), * (attention), - (MLP) or E (MoE), "
            "found '" +
                p.substr(bad, 1) + "' at position " + std::to_string(bad));
  }
  if (p.size() != static_cast<size_t>(m.layers)) {
    FailKey(r, "layer_pattern",
            "expected layers = " + std::to_string(m.layers) + " characters, found " +
                std::to_string(p.size()));
  }
  const bool moe_layers = p.find('E') != std::string::npos;
  if (moe_layers && m.experts == 0) {
    FailKey(r, "layer_pattern", "expected experts >= 1 for its E (MoE) layers, found experts = 0");
  }
  if (!moe_layers && m.experts > 0) {
    FailKey(r, "experts",
            "expected E (MoE) layers in layer_pattern for experts = " + std::to_string(m.experts) +
                ", found none");
  }
  for (const char* key : {"dense_layers", "moe_every"}) {
    if (r.Has(key)) {
      FailKey(r, key,
              std::string("expected no ") + key +
                  " with layer_pattern (the pattern places the MoE layers), found " +
                  Describe(r.Child(key)));
    }
  }
}

// Node-limited routing: groups of whole experts, a token's top_k within its groups.
void CheckRouterGroups(YamlReader& r, const ModelSpec& m) {
  const int groups = m.moe_router_num_groups, topk = m.moe_router_group_topk;
  if (groups <= 1 && topk == 0) return;  // no groups
  if (m.experts == 0 || groups < 1 || m.experts % groups != 0) {
    FailKey(r, "moe_router_num_groups",
            "expected a divisor of experts = " + std::to_string(m.experts) + ", found " +
                std::to_string(groups));
  }
  const int64_t reachable = static_cast<int64_t>(topk) * (m.experts / groups);
  if (topk < 1 || topk > groups || reachable < m.top_k) {
    FailKey(r, "moe_router_group_topk",
            "expected 1 <= moe_router_group_topk <= moe_router_num_groups = " +
                std::to_string(groups) + " with top_k = " + std::to_string(m.top_k) +
                " experts in that many groups, found " + std::to_string(topk));
  }
}

// At least one layer, and no more (MTP layers included) than the replay's layer index holds.
void CheckLayers(YamlReader& r, const ModelSpec& m) {
  RequireAtLeast(r, "layers", m.layers, 1);
  if (m.layers > kMaxModelLayers - m.mtp_layers) {
    FailKey(r, "layers",
            "expected layers + mtp_layers <= " + std::to_string(kMaxModelLayers) + ", found " +
                std::to_string(m.layers) + " + " + std::to_string(m.mtp_layers));
  }
}

// The Mamba-2 mixer's sizes when the pattern has M layers; MTP counts.
void CheckHybrid(YamlReader& r, const ModelSpec& m) {
  RequireAtLeast(r, "mtp_layers", m.mtp_layers, 0);
  if (m.mtp_repeated_layer && m.mtp_layers == 0) {
    FailKey(r, "mtp_repeated_layer",
            "expected mtp_layers >= 1 with mtp_repeated_layer true (the MTP module it "
            "repeats), found mtp_layers = 0");
  }
  RequireAtLeast(r, "moe_latent_size", m.moe_latent_size, 0);
  RequireAtLeast(r, "mamba_groups", m.mamba_groups, 1);
  RequireAtLeast(r, "mamba_conv_kernel", m.mamba_conv_kernel, 1);
  RequireAtLeast(r, "mamba_chunk", m.mamba_chunk, 1);
  if (!m.IsHybrid()) return;
  CheckLayerPattern(r, m);
  if (m.layer_pattern.find('M') == std::string::npos) return;
  const std::pair<const char*, int64_t> sizes[] = {{"mamba_heads", m.mamba_heads},
                                                   {"mamba_head_dim", m.mamba_head_dim},
                                                   {"mamba_state", m.mamba_state}};
  for (const auto& [key, v] : sizes) {
    if (v < 1) {
      FailKey(r, key,
              std::string("expected ") + key +
                  " >= 1 for the M (Mamba-2) layers of layer_pattern, found " +
                  (r.Has(key) ? Describe(r.Child(key)) : std::string("none")));
    }
  }
  if (m.mamba_heads % m.mamba_groups != 0) {
    FailKey(r, "mamba_groups",
            "mamba_groups = " + std::to_string(m.mamba_groups) +
                " does not divide mamba_heads = " + std::to_string(m.mamba_heads));
  }
}

// GPT-OSS's routed experts: their biases and the clamp of their gated activation.
void DecodeExpertKeys(YamlReader& r, ModelSpec* m) {
  r.GetBool("expert_bias", &m->expert_bias);
  r.GetDouble("glu_clamp", &m->glu_clamp);
}

void CheckGluClamp(YamlReader& r, const ModelSpec& m) {
  if (m.glu_clamp < 0) {
    FailKey(r, "glu_clamp",
            "expected a clamp limit > 0, or 0 for none, found " + Describe(r.Child("glu_clamp")));
  }
}

std::vector<std::pair<std::string, FfnKind>> FfnKinds() {
  std::vector<std::pair<std::string, FfnKind>> kinds;
  for (FfnKind k : {FfnKind::kGelu, FfnKind::kSwiglu, FfnKind::kSquaredRelu})
    kinds.emplace_back(FfnKindName(k), k);
  return kinds;
}

// Head sizes, Multi-head Latent Attention and sliding windows.
void DecodeAttentionKeys(YamlReader& r, ModelSpec* m) {
  r.GetInt64("head_dim", &m->head_dim);
  r.GetInt64("v_head_dim", &m->v_head_dim);
  r.GetInt64("q_lora_rank", &m->q_lora_rank);
  r.GetInt64("kv_lora_rank", &m->kv_lora_rank);
  r.GetInt64("qk_rope_head_dim", &m->qk_rope_head_dim);
  r.GetInt64("sliding_window", &m->sliding_window);
  r.GetInt("sliding_window_pattern", &m->sliding_window_pattern);
  r.GetDouble("rope_mscale", &m->rope_mscale);
  if (m->rope_mscale <= 0) {
    FailKey(r, "rope_mscale",
            "expected a factor > 0 (1: none), found " + Describe(r.Child("rope_mscale")));
  }
  r.GetBool("qk_norm", &m->qk_norm);
}

}  // namespace

ModelSpec DecodeModel(YamlReader& r) {
  RejectExperiment(r, "model");
  ModelSpec m;
  r.GetString("name", &m.name, true);
  r.GetInt("layers", &m.layers, true);
  r.GetInt64("hidden", &m.hidden, true);
  r.GetInt("heads", &m.heads, true);
  m.kv_heads = m.heads;
  r.GetInt("kv_heads", &m.kv_heads);
  r.GetInt64("ffn_hidden", &m.ffn_hidden, true);
  r.GetEnum<FfnKind>("ffn_kind", FfnKinds(), &m.ffn_kind);
  r.GetInt64("vocab", &m.vocab, true);
  r.GetInt64("seq_len", &m.seq_len, true);
  r.GetBool("tied_embeddings", &m.tied_embeddings);
  r.GetBool("parallel_block", &m.parallel_block);
  r.GetInt("experts", &m.experts);
  r.GetInt("top_k", &m.top_k);
  r.GetInt("moe_router_num_groups", &m.moe_router_num_groups);
  r.GetInt("moe_router_group_topk", &m.moe_router_group_topk);
  r.GetInt64("moe_ffn_hidden", &m.moe_ffn_hidden);
  r.GetInt("shared_experts", &m.shared_experts);
  r.GetInt("moe_every", &m.moe_every);
  r.GetInt("dense_layers", &m.dense_layers);
  DecodeExpertKeys(r, &m);
  DecodeAttentionKeys(r, &m);
  DecodeHybridKeys(r, &m);
  r.Finish();
  CheckLayers(r, m);
  RequireAtLeast(r, "hidden", m.hidden, 1);
  RequireAtLeast(r, "heads", m.heads, 1);
  RequireAtLeast(r, "kv_heads", m.kv_heads, 1);
  RequireAtLeast(r, "ffn_hidden", m.ffn_hidden, 1);
  RequireAtLeast(r, "vocab", m.vocab, 1);
  RequireAtLeast(r, "seq_len", m.seq_len, 1);
  RequireAtLeast(r, "experts", m.experts, 0);
  RequireAtLeast(r, "shared_experts", m.shared_experts, 0);
  RequireAtLeast(r, "moe_every", m.moe_every, 1);
  RequireAtLeast(r, "dense_layers", m.dense_layers, 0);
  CheckGluClamp(r, m);
  RequireAtLeast(r, "head_dim", m.head_dim, 0);
  RequireAtLeast(r, "v_head_dim", m.v_head_dim, 0);
  RequireAtLeast(r, "q_lora_rank", m.q_lora_rank, 0);
  RequireAtLeast(r, "kv_lora_rank", m.kv_lora_rank, 0);
  RequireAtLeast(r, "qk_rope_head_dim", m.qk_rope_head_dim, 0);
  RequireAtLeast(r, "sliding_window", m.sliding_window, 0);
  RequireAtLeast(r, "sliding_window_pattern", m.sliding_window_pattern, 1);
  // Megatron's default: experts as wide as the dense MLP.
  if (m.experts > 0 && m.moe_ffn_hidden == 0) m.moe_ffn_hidden = m.ffn_hidden;
  if (m.head_dim == 0 && m.hidden % m.heads != 0) {
    Fail(r.sources(), r.Child("heads"), r.KeyPath("heads"),
         "heads = " + std::to_string(m.heads) + " does not divide hidden = " +
             std::to_string(m.hidden) + " (set head_dim when heads x head_dim != hidden)");
  }
  if (m.IsMla() && m.kv_heads != m.heads) {
    Fail(r.sources(), r.Child("kv_heads"), r.KeyPath("kv_heads"),
         "Multi-head Latent Attention (kv_lora_rank > 0) needs kv_heads = heads = " +
             std::to_string(m.heads) + ", found " + std::to_string(m.kv_heads));
  }
  if (!m.IsMla() && (m.q_lora_rank > 0 || m.qk_rope_head_dim > 0)) {
    const char* key = m.q_lora_rank > 0 ? "q_lora_rank" : "qk_rope_head_dim";
    Fail(r.sources(), r.Child(key), r.KeyPath(key),
         std::string("expected ") + key +
             " only with Multi-head Latent Attention (kv_lora_rank > 0), found " +
             std::to_string(m.q_lora_rank > 0 ? m.q_lora_rank : m.qk_rope_head_dim));
  }
  if (m.heads % m.kv_heads != 0) {
    Fail(r.sources(), r.Child("kv_heads"), r.KeyPath("kv_heads"),
         "kv_heads = " + std::to_string(m.kv_heads) +
             " does not divide heads = " + std::to_string(m.heads));
  }
  if (m.experts > 0 && (m.top_k < 1 || m.top_k > m.experts)) {
    Fail(r.sources(), r.Child("top_k"), r.KeyPath("top_k"),
         "a MoE model needs 1 <= top_k <= experts = " + std::to_string(m.experts) + ", found " +
             std::to_string(m.top_k));
  }
  CheckRouterGroups(r, m);
  CheckHybrid(r, m);
  return m;
}

}  // namespace meshsim::config

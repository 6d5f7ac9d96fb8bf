#include "sim/config/import_hf_families.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace meshsim::hf_internal {

void DecodeMixtral(const Fields& f, ModelSpec* m) {
  m->experts = f.Int32("num_local_experts", 1);
  m->top_k = f.Int32("num_experts_per_tok", 1);
  m->moe_ffn_hidden = m->ffn_hidden;
}

void DecodeQwen2Moe(const Fields& f, ModelSpec* m, HfImport* out) {
  m->experts = f.Int32Or("num_experts", 0, 0);
  if (m->experts == 0) return;
  m->top_k = f.Int32("num_experts_per_tok", 1);
  m->moe_ffn_hidden = f.Int("moe_intermediate_size", 1);
  const int64_t shared = f.IntOr("shared_expert_intermediate_size", 0, 0);
  if (shared > 0) {
    const double ratio = static_cast<double>(shared) / static_cast<double>(m->moe_ffn_hidden);
    m->shared_experts = std::max(1, static_cast<int>(std::lround(ratio)));
    if (shared % m->moe_ffn_hidden != 0) {
      out->warnings.push_back("shared_expert_intermediate_size " + std::to_string(shared) +
                              " is not a multiple of moe_intermediate_size " +
                              std::to_string(m->moe_ffn_hidden) + "; approximated as " +
                              std::to_string(m->shared_experts) + " shared experts");
    }
    out->warnings.push_back("not counted: the shared-expert gate (a hidden_size x 1 projection: " +
                            std::to_string(m->hidden) +
                            " parameters per MoE layer; its compute is not modelled either)");
  }
  // Qwen2-MoE: layer i is sparse when (i + 1) % decoder_sparse_step == 0.
  const int step = f.Int32Or("decoder_sparse_step", 1, 1);
  m->moe_every = step;
  m->dense_layers = step - 1;
  if (f.Has("mlp_only_layers")) {
    const json& only = f.At("mlp_only_layers");
    if (!only.is_array()) f.Fail("mlp_only_layers", "expected a list, found " + Describe(only));
    // Only a leading run 0..n-1 of dense layers (with step 1) is expressible.
    for (size_t i = 0; i < only.size(); ++i) {
      if (!only[i].is_number_integer() || only[i].get<int64_t>() != static_cast<int64_t>(i) ||
          step != 1) {
        f.Fail("mlp_only_layers",
               "only a leading run of dense layers [0, 1, ..., n-1] with decoder_sparse_step 1 "
               "can be expressed (dense_layers), found " +
                   only.dump());
      }
    }
    if (!only.empty()) m->dense_layers = static_cast<int>(only.size());
  }
}

// Multi-token-prediction modules: left out, as the published parameter counts leave them
// out; model.mtp_layers adds them (DeepSeek-V3's: a transformer layer each). Nemotron-H's
// module (mtp_hybrid_override_pattern, e.g. "*E": attention then MoE, what an MTP layer of
// a hybrid MoE model is) is trained repeated: Megatron-Bridge's NemotronHBridge sets
// mtp_use_repeated_layer unless the config says otherwise, and its Nemotron 3 Super recipe
// runs it mtp_num_layers = 2 times.
void WarnMtp(const Fields& f, HfImport* out) {
  const int mtp = f.Int32Or("num_nextn_predict_layers", 0, 0);
  if (mtp == 0) return;
  const bool repeated = f.Has("mtp_hybrid_override_pattern");
  out->warnings.push_back(
      "not counted: the multi-token-prediction module (num_nextn_predict_layers " +
      std::to_string(mtp) + "), as in the published parameter count; set mtp_layers: " +
      (repeated ? std::string("N with mtp_repeated_layer: true (its one module run N times)")
                : std::to_string(mtp)) +
      " to train with it (its parameters and compute on the last pipeline stage)");
}

void DecodeDeepseek(const Fields& f, ModelSpec* m) {
  m->experts = f.Int32Or("n_routed_experts", 0, 0);
  if (m->experts > 0) {
    m->top_k = f.Int32("num_experts_per_tok", 1);
    m->moe_ffn_hidden = f.Int("moe_intermediate_size", 1);
    m->shared_experts = f.Int32Or("n_shared_experts", 0, 0);
    // DeepSeek: layer i is MoE when i >= first_k_dense_replace and i % moe_layer_freq == 0.
    const int k = f.Int32Or("first_k_dense_replace", 0, 0);
    const int freq = f.Int32Or("moe_layer_freq", 1, 1);
    m->moe_every = freq;
    m->dense_layers = (k + freq - 1) / freq * freq;
    // Node-limited routing (DeepSeek-V3: 8 groups, each token in 4 of them).
    const int groups = f.Int32Or("n_group", 1, 1);
    if (groups > 1) {
      if (m->experts % groups != 0) {
        f.Fail("n_group", "expected a divisor of n_routed_experts = " + std::to_string(m->experts) +
                              ", found " + std::to_string(groups));
      }
      m->moe_router_num_groups = groups;
      m->moe_router_group_topk = f.Int32("topk_group", 1);
      const int64_t reachable =
          static_cast<int64_t>(m->moe_router_group_topk) * (m->experts / groups);
      if (m->moe_router_group_topk > groups || reachable < m->top_k) {
        f.Fail("topk_group",
               "expected at most n_group = " + std::to_string(groups) +
                   " groups holding num_experts_per_tok = " + std::to_string(m->top_k) +
                   " experts, found " + std::to_string(m->moe_router_group_topk));
      }
    }
  }
  if (!f.Has("kv_lora_rank")) return;
  // Multi-head Latent Attention, exactly: the model schema's MLA keys.
  m->kv_lora_rank = f.Int("kv_lora_rank", 1);
  m->q_lora_rank = f.IntOr("q_lora_rank", 0, 0);
  m->qk_rope_head_dim = f.Int("qk_rope_head_dim", 0);
  m->head_dim = f.Int("qk_nope_head_dim", 1);
  const int64_t v = f.Int("v_head_dim", 1);
  m->v_head_dim = v == m->head_dim ? 0 : v;
  if (m->kv_heads != m->heads) {
    f.Fail("num_key_value_heads",
           "Multi-head Latent Attention needs num_key_value_heads = "
           "num_attention_heads = " +
               std::to_string(m->heads) + ", found " + std::to_string(m->kv_heads));
  }
}

// GPT-OSS: every layer MoE, num_local_experts experts of intermediate_size.
void DecodeGptOss(const Fields& f, ModelSpec* m, HfImport* out) {
  m->experts = f.Int32("num_local_experts", 1);
  m->top_k = f.Has("num_experts_per_tok") ? f.Int32("num_experts_per_tok", 1)
                                          : f.Int32("experts_per_token", 1);
  m->moe_ffn_hidden = m->ffn_hidden;
  // Every expert's gate_up_proj and down_proj have biases (GptOssExperts), and the gated
  // activation clamps at swiglu_limit (transformers models/gpt_oss).
  m->expert_bias = true;
  m->glu_clamp = f.NumberOr("swiglu_limit", 0);
  const double h = static_cast<double>(m->hidden);
  const double per_layer = m->experts * (static_cast<double>(m->ffn_hidden) * 2 + h) + m->experts +
                           static_cast<double>(m->heads);
  out->warnings.push_back(
      "not counted: the experts' and the router's biases and the attention "
      "sinks (GPT-OSS): " +
      FormatParams(per_layer * m->layers) + " parameters");
}

// A Nemotron-H layer pattern from `hybrid_override_pattern` ("M-M*-E...") or, in newer
// configs, `layers_block_type` (["mamba", "attention", "mlp", "moe", ...]).
namespace {

std::string NemotronHPattern(const Fields& f, int layers) {
  std::string pattern;
  const char* key = f.Has("layers_block_type") ? "layers_block_type" : "hybrid_override_pattern";
  if (!f.Has(key)) f.Fail(key, "required field is missing (the hybrid layer pattern)");
  const json& v = f.At(key);
  if (v.is_string()) {
    pattern = v.get<std::string>();
  } else if (v.is_array()) {
    static const std::pair<const char*, char> kinds[] = {
        {"mamba", 'M'}, {"attention", '*'}, {"mlp", '-'}, {"moe", 'E'}};
    for (const json& t : v) {
      char c = '?';
      for (const auto& [name, ch] : kinds)
        c = t.is_string() && t.get<std::string>() == name ? ch : c;
      if (c == '?') f.Fail(key, "expected mamba, attention, mlp or moe, found " + Describe(t));
      pattern += c;
    }
  } else {
    f.Fail(key, "expected a pattern, found " + Describe(v));
  }
  const size_t bad = pattern.find_first_not_of("M*-E");
  if (bad != std::string::npos) {
    f.Fail(key, "expected the characters M (Mamba-2), * (attention), - (MLP), E (MoE), found '" +
                    pattern.substr(bad, 1) + "' at position " + std::to_string(bad));
  }
  if (pattern.size() != static_cast<size_t>(layers)) {
    f.Fail(key, "expected num_hidden_layers = " + std::to_string(layers) + " layers, found " +
                    std::to_string(pattern.size()));
  }
  return pattern;
}

}  // namespace

// Nemotron-H and Nemotron 3 (model_type nemotron_h): the layer pattern, the Mamba-2
// mixer (d_inner = mamba_num_heads x mamba_head_dim, as the HF and Megatron-LM models
// build it; `expand` is not used), squared-ReLU MLPs and MoE blocks with one shared
// expert of moe_shared_expert_intermediate_size.
void DecodeNemotronH(const Fields& f, ModelSpec* m, HfImport* out) {
  m->layer_pattern = NemotronHPattern(f, m->layers);
  m->mamba_heads = f.Int32("mamba_num_heads", 1);
  m->mamba_head_dim = f.Int("mamba_head_dim", 1);
  m->mamba_state = f.Int("ssm_state_size", 1);
  m->mamba_groups = f.Int32Or("n_groups", 1, 1);
  m->mamba_conv_kernel = f.Int32Or("conv_kernel", 4, 1);
  m->mamba_chunk = f.IntOr("chunk_size", 128, 1);
  if (m->mamba_heads % m->mamba_groups != 0) {
    f.Fail("n_groups", "n_groups = " + std::to_string(m->mamba_groups) +
                           " does not divide mamba_num_heads = " + std::to_string(m->mamba_heads));
  }
  const std::string act = f.StringOr("mlp_hidden_act", "relu2");
  if (act == "relu2") {
    m->ffn_kind = FfnKind::kSquaredRelu;
  } else {
    out->warnings.push_back("mlp_hidden_act '" + act +
                            "' in a plain MLP is modelled as ffn_kind gelu (2 matrices: the same "
                            "parameters and FLOPs)");
  }
  m->moe_latent_size = f.IntOr("moe_latent_size", 0, 1);
  if (m->layer_pattern.find('E') == std::string::npos) return;
  m->experts = f.Int32("n_routed_experts", 1);
  m->top_k = f.Int32("num_experts_per_tok", 1);
  m->moe_ffn_hidden = f.Int("moe_intermediate_size", 1);
  const int64_t shared =
      f.IntOr("moe_shared_expert_intermediate_size", 0, 0) * f.IntOr("n_shared_experts", 1, 0);
  if (shared % m->moe_ffn_hidden != 0) {
    f.Fail("moe_shared_expert_intermediate_size",
           "expected a multiple of moe_intermediate_size = " + std::to_string(m->moe_ffn_hidden) +
               " (meshsim's shared experts are that wide), found " + std::to_string(shared));
  }
  m->shared_experts = static_cast<int>(shared / m->moe_ffn_hidden);
  out->notes.push_back("the shared expert of " + std::to_string(shared) +
                       " as shared_experts: " + std::to_string(m->shared_experts) + " of " +
                       std::to_string(m->moe_ffn_hidden) + " (the same parameters and FLOPs)");
}

// The layers' attention pattern from `layer_types` ("sliding_attention" /
// "full_attention"): k-1 windowed layers then one full layer, repeated (returns k), or
// all windowed (1). Fails on any other pattern.
namespace {

int SlidingPattern(const Fields& f, int layers) {
  if (!f.Has("layer_types")) return 1;
  const json& types = f.At("layer_types");
  const auto is = [&](size_t i, const char* t) {
    return types[i].is_string() && types[i].get<std::string>() == t;
  };
  if (!types.is_array() || types.size() != static_cast<size_t>(layers)) {
    f.Fail("layer_types", "expected a list of num_hidden_layers = " + std::to_string(layers) +
                              " layer types, found " + Describe(types));
  }
  size_t k = 0;
  while (k < types.size() && is(k, "sliding_attention")) ++k;
  const int pattern = k == types.size() ? 1 : static_cast<int>(k) + 1;
  for (size_t i = 0; i < types.size(); ++i) {
    const bool full = pattern > 1 && (i + 1) % pattern == 0;
    if (!is(i, full ? "full_attention" : "sliding_attention")) {
      f.Fail("layer_types",
             "only k-1 'sliding_attention' layers then one 'full_attention' "
             "layer, repeated, can be expressed (sliding_window_pattern k); "
             "layer " +
                 std::to_string(i) + " is " + types[i].dump());
    }
  }
  return pattern;
}

}  // namespace

// sliding_window (unless use_sliding_window is false) on the layers `layer_types` names.
void DecodeSlidingWindow(const Fields& f, ModelSpec* m, HfImport* out) {
  if (!f.Has("sliding_window") || !f.BoolOr("use_sliding_window", true)) return;
  const int64_t window = f.IntOr("sliding_window", 0, 1);
  if (window >= m->seq_len) return;  // the window covers every sequence: full attention
  if (f.Has("max_window_layers")) {
    out->warnings.push_back("max_window_layers is ignored: sliding_window " +
                            std::to_string(window) +
                            " is modelled on the layers layer_types "
                            "names, or on all");
  }
  m->sliding_window = window;
  m->sliding_window_pattern = SlidingPattern(f, m->layers);
  out->notes.push_back("sliding_window " + std::to_string(window) + " on " +
                       (m->sliding_window_pattern == 1
                            ? std::string("every layer")
                            : std::to_string(m->sliding_window_pattern - 1) + " of every " +
                                  std::to_string(m->sliding_window_pattern) +
                                  " layers (layer_types)"));
}

}  // namespace meshsim::hf_internal

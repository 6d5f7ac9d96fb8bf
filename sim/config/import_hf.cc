#include "sim/config/import_hf.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <sstream>

#include "sim/workload/param_count.h"
#include "sim/workload/transformer.h"

namespace meshsim {
namespace {

using json = nlohmann::json;

// Thrown inside this file only; ImportHfConfig turns it into a Result.
struct ImportFailure {
  InputError error;
};

// 1-based line and column of byte `offset` (0-based) of `text`.
std::pair<int, int> LineColumn(const std::string& text, size_t offset) {
  offset = std::min(offset, text.size());
  int line = 1;
  size_t line_start = 0;
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return {line, static_cast<int>(offset - line_start) + 1};
}

std::string Describe(const json& v) {
  switch (v.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return v.get<bool>() ? "true" : "false";
    case json::value_t::string:
      return "the string " + v.dump();
    case json::value_t::object:
      return "an object";
    case json::value_t::array:
      return "a list";
    default:
      return v.dump();  // numbers
  }
}

enum class MoeStyle { kNone, kMixtral, kQwen2Moe, kDeepseek, kGptOss, kNemotronH };

// Which linear layers of a family carry biases (the model schema counts none).
struct Biases {
  bool qkv;            // Q, K and V projections, whatever the config says (Qwen2)
  bool attention;      // default of the config's `attention_bias` (QKV and output
                       // projections): false for Llama-style models, true for GPT-NeoX
  bool mlp;            // default of the config's `mlp_bias`
  const char* source;  // how the family sets them, for the warning
};

struct Family {
  const char* model_type;
  const char* architecture;
  bool gated_mlp;  // gate and up projections (3 matrices) whatever the activation
  MoeStyle moe;
  Biases biases;
};

constexpr Biases kNoBiases = {false, false, false, "attention_bias / mlp_bias"};
constexpr Biases kQwen2Biases = {true, false, false, "the Qwen2 family"};
constexpr Biases kNeoxBiases = {false, true, true, "GPT-NeoX"};
constexpr Biases kGptOssBiases = {false, true, false, "GPT-OSS"};

constexpr Family kFamilies[] = {
    {"llama", "LlamaForCausalLM", true, MoeStyle::kNone, kNoBiases},
    {"mistral", "MistralForCausalLM", true, MoeStyle::kNone, kNoBiases},
    {"mixtral", "MixtralForCausalLM", true, MoeStyle::kMixtral, kNoBiases},
    {"qwen2", "Qwen2ForCausalLM", true, MoeStyle::kNone, kQwen2Biases},
    {"qwen2_moe", "Qwen2MoeForCausalLM", true, MoeStyle::kQwen2Moe, kQwen2Biases},
    {"deepseek_v2", "DeepseekV2ForCausalLM", true, MoeStyle::kDeepseek, kNoBiases},
    {"deepseek_v3", "DeepseekV3ForCausalLM", true, MoeStyle::kDeepseek, kNoBiases},
    {"gpt_neox", "GPTNeoXForCausalLM", false, MoeStyle::kNone, kNeoxBiases},
    {"qwen3", "Qwen3ForCausalLM", true, MoeStyle::kNone, kNoBiases},
    {"qwen3_moe", "Qwen3MoeForCausalLM", true, MoeStyle::kQwen2Moe, kNoBiases},
    {"gpt_oss", "GptOssForCausalLM", true, MoeStyle::kGptOss, kGptOssBiases},
    {"nemotron", "NemotronForCausalLM", false, MoeStyle::kNone, kNoBiases},
    {"nemotron_h", "NemotronHForCausalLM", false, MoeStyle::kNemotronH, kNoBiases},
};

std::string SupportedTypes() {
  std::string s;
  for (const Family& f : kFamilies) s += (s.empty() ? "" : ", ") + std::string(f.model_type);
  return s;
}

// Typed access to the top-level fields of one config.json, failing with the file, the
// field and (where the field occurs once in the text) its line and column.
class Fields {
 public:
  Fields(const json& root, const std::string& text, const std::string& file)
      : root_(root), text_(text), file_(file) {}

  // Present and not null (HF writes null for "not set").
  bool Has(const std::string& key) const {
    auto it = root_.find(key);
    return it != root_.end() && !it->is_null();
  }
  const json& At(const std::string& key) const { return root_.at(key); }

  [[noreturn]] void Fail(const std::string& key, const std::string& message) const {
    InputError e;
    e.file = file_;
    e.key = key;
    e.message = message;
    if (const auto at = Locate(key)) std::tie(e.line, e.column) = *at;
    throw ImportFailure{e};
  }

  int64_t Int(const std::string& key, int64_t min) const {
    if (!Has(key)) Fail(key, "required field is missing (expected an integer >= " + N(min) + ")");
    return IntOr(key, 0, min);
  }
  int64_t IntOr(const std::string& key, int64_t fallback, int64_t min) const {
    if (!Has(key)) return fallback;
    const json& v = At(key);
    if (!v.is_number_integer()) Fail(key, "expected an integer, found " + Describe(v));
    const int64_t x = v.get<int64_t>();
    if (x < min) Fail(key, "expected an integer >= " + N(min) + ", found " + N(x));
    if (x > int64_t{1} << 40) Fail(key, "expected a plausible size, found " + N(x));
    return x;
  }
  int Int32(const std::string& key, int64_t min) const {
    if (!Has(key)) Fail(key, "required field is missing (expected an integer >= " + N(min) + ")");
    return Int32Or(key, 0, min);
  }
  int Int32Or(const std::string& key, int64_t fallback, int64_t min) const {
    const int64_t x = IntOr(key, fallback, min);
    if (x > 1 << 30) Fail(key, "expected a plausible count, found " + N(x));
    return static_cast<int>(x);
  }
  bool BoolOr(const std::string& key, bool fallback) const {
    if (!Has(key)) return fallback;
    const json& v = At(key);
    if (!v.is_boolean()) Fail(key, "expected true or false, found " + Describe(v));
    return v.get<bool>();
  }
  std::string StringOr(const std::string& key, const std::string& fallback) const {
    if (!Has(key)) return fallback;
    const json& v = At(key);
    if (!v.is_string()) Fail(key, "expected a string, found " + Describe(v));
    return v.get<std::string>();
  }

  static std::string N(int64_t v) { return std::to_string(v); }

 private:
  // Line and column of `"key":` when it occurs exactly once in the text.
  std::optional<std::pair<int, int>> Locate(const std::string& key) const {
    const std::regex pattern(
        "\"" + std::regex_replace(key, std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)") + "\"\\s*:");
    auto begin = std::sregex_iterator(text_.begin(), text_.end(), pattern);
    auto end = std::sregex_iterator();
    if (begin == end || std::next(begin) != end) return std::nullopt;
    return LineColumn(text_, static_cast<size_t>(begin->position()));
  }

  const json& root_;
  const std::string& text_;
  std::string file_;
};

json ParseJson(const std::string& text, const std::string& file) {
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    InputError err;
    err.file = file;
    // e.byte: 1-based index of the last character read (size + 1 at the end of input).
    const size_t offset = e.byte > 0 ? e.byte - 1 : 0;
    std::tie(err.line, err.column) = LineColumn(text, offset);
    // "[json.exception.parse_error.101] parse error at line 3, column 5: syntax error..."
    std::string what = e.what();
    const size_t at = what.find("parse error");
    const size_t colon = at == std::string::npos ? std::string::npos : what.find(": ", at);
    err.message = "invalid JSON: " + (colon == std::string::npos ? what : what.substr(colon + 2));
    throw ImportFailure{err};
  } catch (const json::exception& e) {
    // Valid syntax that nlohmann::json cannot hold: "[json.exception.out_of_range.406]
    // number overflow parsing '1e400'". No position comes with it: point at the first
    // occurrence of the quoted text.
    InputError err;
    err.file = file;
    const std::string what = e.what();
    const size_t bracket = what.find("] ");
    err.message =
        "invalid JSON: " + (bracket == std::string::npos ? what : what.substr(bracket + 2));
    const size_t open = what.find('\''), close = what.rfind('\'');
    if (open != std::string::npos && close > open + 1) {
      const size_t at = text.find(what.substr(open + 1, close - open - 1));
      if (at != std::string::npos) std::tie(err.line, err.column) = LineColumn(text, at);
    }
    throw ImportFailure{err};
  }
}

const Family& FindFamily(const Fields& f, std::string* model_type, std::string* architecture) {
  if (f.Has("architectures")) {
    const json& a = f.At("architectures");
    if (!a.is_array() || (!a.empty() && !a[0].is_string())) {
      f.Fail("architectures", "expected a list of class names, found " + Describe(a));
    }
    if (!a.empty()) *architecture = a[0].get<std::string>();
  }
  *model_type = f.StringOr("model_type", "");
  if (!model_type->empty()) {
    for (const Family& fam : kFamilies) {
      if (*model_type == fam.model_type) return fam;
    }
    f.Fail("model_type",
           "unsupported model_type '" + *model_type + "'; supported: " + SupportedTypes());
  }
  for (const Family& fam : kFamilies) {
    if (*architecture == fam.architecture) {
      *model_type = fam.model_type;
      return fam;
    }
  }
  if (!architecture->empty()) {
    f.Fail("architectures", "unsupported architecture '" + *architecture +
                                "' and no model_type; supported model_type: " + SupportedTypes());
  }
  f.Fail("model_type",
         "required field is missing (and no architectures); supported: " + SupportedTypes());
}

// ffn_kind from hidden_act. Gated families always have 3 matrices; the activation only
// names which gated unit it is (SwiGLU for silu, GeGLU for gelu).
FfnKind DecodeActivation(const Fields& f, const Family& fam, HfImport* out) {
  const std::string act = f.StringOr("hidden_act", fam.gated_mlp ? "silu" : "gelu");
  static const std::regex gelu("gelu(_new|_fast|_pytorch_tanh|_python|_accurate)?|quick_gelu");
  const bool is_silu = act == "silu" || act == "swish";
  const bool is_gelu = std::regex_match(act, gelu);
  if (!is_silu && !is_gelu && act != "relu" && act != "relu2") {
    f.Fail("hidden_act", "unsupported activation '" + act +
                             "'; expected silu, gelu, gelu_new, "
                             "gelu_pytorch_tanh, relu or relu2");
  }
  if (fam.gated_mlp) {
    if (!is_silu) {
      out->warnings.push_back("hidden_act '" + act +
                              "' in a gated MLP is modelled as ffn_kind "
                              "swiglu (3 matrices: the same parameters and FLOPs)");
    }
    return FfnKind::kSwiglu;
  }
  if (!is_gelu) {
    out->warnings.push_back("hidden_act '" + act +
                            "' in a plain MLP is modelled as ffn_kind "
                            "gelu (2 matrices: the same parameters and FLOPs)");
  }
  return FfnKind::kGelu;
}

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
// out; model.mtp_layers adds them (DeepSeek-V3's: a transformer layer each).
void WarnMtp(const Fields& f, HfImport* out) {
  const int mtp = f.Int32Or("num_nextn_predict_layers", 0, 0);
  if (mtp == 0) return;
  out->warnings.push_back(
      "not counted: the multi-token-prediction module (num_nextn_predict_layers " +
      std::to_string(mtp) +
      "), as in the published parameter count; set mtp_layers: " + std::to_string(mtp) +
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
  out->warnings.push_back("mlp_hidden_act '" + act +
                          "' in a plain MLP is modelled as ffn_kind gelu (2 matrices: the same "
                          "parameters and FLOPs)");
  if (f.Has("moe_latent_size")) {
    f.Fail("moe_latent_size", "LatentMoE (experts in a moe_latent_size space) is not modelled");
  }
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

// The linear layers' biases, which the model schema does not count: a warning with their
// number when the family or the config (attention_bias, mlp_bias) has them.
void WarnBiases(const Fields& f, const Family& fam, HfImport* out) {
  const ModelSpec& m = out->model;
  const double h = static_cast<double>(m.hidden);
  const double qkv = static_cast<double>(m.heads * m.QkHeadDim() + m.KvDim() * 2);
  const bool attention = f.BoolOr("attention_bias", fam.biases.attention);
  const bool mlp = f.BoolOr("mlp_bias", fam.biases.mlp);
  double per_layer = 0;
  std::string where;
  if (attention) {
    per_layer += qkv + h;
    where = "the Q, K, V and output projections";
  } else if (fam.biases.qkv) {
    per_layer += qkv;
    where = "the Q, K and V projections";
  }
  if (mlp) {
    per_layer += static_cast<double>(m.ffn_hidden) * (m.FfnMatrices() - 1) + h;
    where += std::string(where.empty() ? "" : " and ") + "the MLP";
  }
  if (per_layer == 0) return;
  const double all = per_layer * m.layers;
  char share[32];
  std::snprintf(share, sizeof share, "%.2g%%", 100 * all / CountParams(m).total);
  out->warnings.push_back("not counted: the biases of " + where + " (" + fam.biases.source +
                          "): " + FormatParams(all) + " parameters, " + share +
                          " of the model, and their element-wise work");
}

// `name` made usable as a folder name (config/folder_name.h): characters other than
// letters, digits, '.', '_', '-', '+' become '-', leading dots are dropped.
std::string SafeName(std::string name) {
  for (char& c : name) {
    const bool ok =
        std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' || c == '+';
    if (!ok) c = '-';
  }
  name.erase(0, name.find_first_not_of('.'));
  return name.substr(0, 128);
}

// --name as given; else a name derived from the config (made safe: a model's name may end
// up in a file or folder name of the user's).
std::string DefaultName(const Fields& f, const HfImportOptions& o, const std::string& model_type) {
  if (!o.name.empty()) return o.name;
  std::string path = f.StringOr("_name_or_path", "");
  while (!path.empty() && path.back() == '/') path.pop_back();
  std::string name;
  if (!path.empty()) name = SafeName(path.substr(path.find_last_of('/') + 1));
  if (name.empty() && !o.source.empty() && o.source != "-") {
    name = SafeName(std::filesystem::path(o.source).stem().string());
  }
  return name.empty() ? SafeName(model_type) : name;
}

HfImport Decode(const std::string& text, const HfImportOptions& o) {
  const std::string file = o.source.empty() || o.source == "-" ? "<stdin>" : o.source;
  const json root = ParseJson(text, file);
  const Fields f(root, text, file);
  if (!root.is_object()) f.Fail("(top level)", "expected a JSON object, found " + Describe(root));

  HfImport out;
  const Family& fam = FindFamily(f, &out.model_type, &out.architecture);
  ModelSpec& m = out.model;
  m.name = DefaultName(f, o, out.model_type);
  m.hidden = f.Int("hidden_size", 1);
  m.heads = f.Int32("num_attention_heads", 1);
  m.kv_heads = f.Int32Or("num_key_value_heads", m.heads, 1);
  m.ffn_hidden = f.Int("intermediate_size", 1);
  m.layers = f.Int32("num_hidden_layers", 1);
  m.vocab = f.Int("vocab_size", 1);
  m.tied_embeddings = f.BoolOr("tie_word_embeddings", false);
  m.ffn_kind = DecodeActivation(f, fam, &out);
  const int64_t head_dim = f.IntOr("head_dim", 0, 1);
  if (head_dim > 0 && (m.hidden % m.heads != 0 || head_dim != m.hidden / m.heads)) {
    m.head_dim = head_dim;
  }
  if (m.head_dim == 0 && m.hidden % m.heads != 0) {
    f.Fail("num_attention_heads", "num_attention_heads = " + std::to_string(m.heads) +
                                      " does not divide hidden_size = " + std::to_string(m.hidden) +
                                      " and there is no head_dim");
  }
  if (m.heads % m.kv_heads != 0) {
    f.Fail("num_key_value_heads",
           "num_key_value_heads = " + std::to_string(m.kv_heads) +
               " does not divide num_attention_heads = " + std::to_string(m.heads));
  }
  const int64_t max_pos = o.seq_len > 0 ? f.IntOr("max_position_embeddings", 0, 1)
                                        : f.Int("max_position_embeddings", 1);
  m.seq_len = o.seq_len > 0 ? o.seq_len : max_pos;
  out.notes.push_back(o.seq_len > 0 ? "seq_len " + std::to_string(o.seq_len) + " from --seq-len" +
                                          (max_pos > 0 ? " (max_position_embeddings " +
                                                             std::to_string(max_pos) + ")"
                                                       : std::string())
                                    : "seq_len: max_position_embeddings (use --seq-len to set "
                                      "the training length)");

  switch (fam.moe) {
    case MoeStyle::kMixtral:
      DecodeMixtral(f, &m);
      break;
    case MoeStyle::kQwen2Moe:
      DecodeQwen2Moe(f, &m, &out);
      break;
    case MoeStyle::kDeepseek:
      DecodeDeepseek(f, &m);
      WarnMtp(f, &out);
      break;
    case MoeStyle::kGptOss:
      DecodeGptOss(f, &m, &out);
      break;
    case MoeStyle::kNemotronH:
      DecodeNemotronH(f, &m, &out);
      WarnMtp(f, &out);
      break;
    case MoeStyle::kNone:
      break;
  }
  if (m.experts > 0 && m.top_k > m.experts) {
    f.Fail("num_experts_per_tok", "num_experts_per_tok = " + std::to_string(m.top_k) +
                                      " exceeds the number of experts " +
                                      std::to_string(m.experts));
  }
  if (m.experts > 0 && m.dense_layers >= m.layers) {
    out.warnings.push_back("no layer is MoE: dense_layers " + std::to_string(m.dense_layers) +
                           " >= num_hidden_layers " + std::to_string(m.layers));
  }
  WarnBiases(f, fam, &out);
  DecodeSlidingWindow(f, &m, &out);
  return out;
}

}  // namespace

Result<HfImport> ImportHfConfig(const std::string& json_text, const HfImportOptions& options) {
  try {
    return Decode(json_text, options);
  } catch (const ImportFailure& f) {
    return f.error;
  }
}

std::string FormatParams(double params) {
  char buf[32];
  if (params >= 1e9) {
    std::snprintf(buf, sizeof buf, "%.2fB", params / 1e9);
  } else if (params < 1e6) {
    std::snprintf(buf, sizeof buf, "%.1fk", params / 1e3);
  } else {
    std::snprintf(buf, sizeof buf, "%.1fM", params / 1e6);
  }
  return buf;
}

std::string YamlScalar(const std::string& s) {
  static const std::regex plain(R"([A-Za-z0-9_./][A-Za-z0-9_.\-/]*)");
  static const std::regex number(
      R"([-+]?(\.[0-9]+|[0-9][0-9_]*(\.[0-9_]*)?)([eE][-+]?[0-9]+)?|0x[0-9a-fA-F]+|0o[0-7]+)");
  static const std::regex special(
      R"(~|null|Null|NULL|true|True|TRUE|false|False|FALSE|yes|Yes|YES|no|No|NO|on|On|ON|off|Off|OFF|y|Y|n|N|\.inf|\.nan|\.Inf|\.NaN|\.INF|\.NAN)");
  if (std::regex_match(s, plain) && !std::regex_match(s, number) && !std::regex_match(s, special)) {
    return s;
  }
  std::string q = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      q += '\\';
      q += c;
    } else if (c == '\n') {
      q += "\\n";
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      q += buf;
    } else {
      q += c;
    }
  }
  return q + "\"";
}

namespace {

void HybridYamlKeys(const ModelSpec& m, const std::string& indent, std::ostringstream& o) {
  o << indent << "layer_pattern: " << YamlScalar(m.layer_pattern) << "\n";
  if (m.layer_pattern.find('M') == std::string::npos) return;
  o << indent << "mamba_heads: " << m.mamba_heads << "\n";
  o << indent << "mamba_head_dim: " << m.mamba_head_dim << "\n";
  o << indent << "mamba_state: " << m.mamba_state << "\n";
  o << indent << "mamba_groups: " << m.mamba_groups << "\n";
  o << indent << "mamba_conv_kernel: " << m.mamba_conv_kernel << "\n";
  o << indent << "mamba_chunk: " << m.mamba_chunk << "\n";
}

}  // namespace

std::string ModelYamlKeys(const ModelSpec& m, const std::string& indent) {
  std::ostringstream o;
  o << indent << "name: " << YamlScalar(m.name) << "\n";
  o << indent << "layers: " << m.layers << "\n";
  o << indent << "hidden: " << m.hidden << "\n";
  o << indent << "heads: " << m.heads << "\n";
  o << indent << "kv_heads: " << m.kv_heads << "\n";
  o << indent << "ffn_hidden: " << m.ffn_hidden << "\n";
  o << indent << "ffn_kind: " << (m.ffn_kind == FfnKind::kSwiglu ? "swiglu" : "gelu") << "\n";
  o << indent << "vocab: " << m.vocab << "\n";
  o << indent << "seq_len: " << m.seq_len << "\n";
  o << indent << "tied_embeddings: " << (m.tied_embeddings ? "true" : "false") << "\n";
  o << indent << "experts: " << m.experts << "\n";
  o << indent << "top_k: " << m.top_k << "\n";
  o << indent << "moe_ffn_hidden: " << m.moe_ffn_hidden << "\n";
  if (m.experts > 0) o << indent << "shared_experts: " << m.shared_experts << "\n";
  if (m.experts > 0 && !m.IsHybrid()) {
    o << indent << "moe_every: " << m.moe_every << "\n";
    o << indent << "dense_layers: " << m.dense_layers << "\n";
  }
  if (m.head_dim > 0) o << indent << "head_dim: " << m.head_dim << "\n";
  if (m.v_head_dim > 0) o << indent << "v_head_dim: " << m.v_head_dim << "\n";
  if (m.IsMla()) {
    o << indent << "q_lora_rank: " << m.q_lora_rank << "\n";
    o << indent << "kv_lora_rank: " << m.kv_lora_rank << "\n";
    o << indent << "qk_rope_head_dim: " << m.qk_rope_head_dim << "\n";
  }
  if (m.sliding_window > 0) {
    o << indent << "sliding_window: " << m.sliding_window << "\n";
    o << indent << "sliding_window_pattern: " << m.sliding_window_pattern << "\n";
  }
  if (m.IsHybrid()) HybridYamlKeys(m, indent, o);
  if (m.mtp_layers > 0) o << indent << "mtp_layers: " << m.mtp_layers << "\n";
  return o.str();
}

std::string YamlComment(const std::string& text) {
  constexpr size_t kWidth = 90;
  std::string printable;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == ' ' || c == '\n' || c == '\t' || (byte > 0x20 && byte < 0x7f)) {
      printable += c;
    } else {
      constexpr const char* kHex = "0123456789abcdef";
      printable += std::string("\\x") + kHex[byte >> 4] + kHex[byte & 15];
    }
  }
  std::string out, line = "#";
  std::istringstream words(printable);
  std::string word;
  while (words >> word) {
    if (line.size() + 1 + word.size() > kWidth && line.size() > 3) {
      out += line + "\n";
      line = "#  ";
    }
    line += " " + word;
  }
  return out + line + "\n";
}

std::string HfModelYaml(const HfImport& import, const HfImportOptions& options) {
  const ModelSpec& m = import.model;
  std::ostringstream o;
  if (!options.command.empty()) o << YamlComment("Generated by `" + options.command + "`.");
  o << YamlComment(
      "Source: Hugging Face config.json " +
      (options.source.empty() || options.source == "-" ? std::string("<stdin>") : options.source) +
      " (model_type " + import.model_type +
      (import.architecture.empty() ? "" : ", " + import.architecture) + ").");
  const ParamCount c = CountParams(m);
  std::string params = "Parameters (meshsim's count): " + FormatParams(c.total) + " total";
  if (m.experts > 0) {
    params += ", " + FormatParams(c.active) + " active per token (" +
              FormatParams(c.active - EmbeddingParams(m)) + " without the input embedding; " +
              std::to_string(MoeLayerCount(m)) + " MoE layers)";
  }
  o << YamlComment(params + ".");
  for (const std::string& n : import.notes) o << YamlComment(n + ".");
  for (const std::string& w : import.warnings) o << YamlComment("Approximation: " + w + ".");
  o << ModelYamlKeys(m, "");
  return o.str();
}

}  // namespace meshsim

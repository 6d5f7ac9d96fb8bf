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

#include "sim/config/import_hf_families.h"
#include "sim/config/import_hf_fields.h"
#include "sim/workload/param_count.h"
#include "sim/workload/transformer.h"

namespace meshsim {

using namespace hf_internal;

namespace {

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
  // RMSNorms on each head's Q and K (ModelSpec::qk_norm): Qwen3's q_norm and k_norm
  // (transformers models/qwen3/modeling_qwen3.py and qwen3_moe/modeling_qwen3_moe.py,
  // Qwen3Attention / Qwen3MoeAttention); no config field says so.
  bool qk_norm = false;
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
    {"qwen3", "Qwen3ForCausalLM", true, MoeStyle::kNone, kNoBiases, true},
    {"qwen3_moe", "Qwen3MoeForCausalLM", true, MoeStyle::kQwen2Moe, kNoBiases, true},
    {"gpt_oss", "GptOssForCausalLM", true, MoeStyle::kGptOss, kGptOssBiases},
    {"nemotron", "NemotronForCausalLM", false, MoeStyle::kNone, kNoBiases},
    {"nemotron_h", "NemotronHForCausalLM", false, MoeStyle::kNemotronH, kNoBiases},
};

std::string SupportedTypes() {
  std::string s;
  for (const Family& f : kFamilies) s += (s.empty() ? "" : ", ") + std::string(f.model_type);
  return s;
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
// names which gated unit it is (SwiGLU for silu, GeGLU for gelu). A plain MLP's relu2
// (transformers' ReLUSquaredActivation, ACT2FN["relu2"]) is ffn_kind squared_relu.
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
  if (act == "relu2") return FfnKind::kSquaredRelu;
  if (!is_gelu) {
    out->warnings.push_back("hidden_act '" + act +
                            "' in a plain MLP is modelled as ffn_kind "
                            "gelu (2 matrices: the same parameters and FLOPs)");
  }
  return FfnKind::kGelu;
}

// YaRN's attention factor (ModelSpec::rope_mscale), as transformers computes it
// (src/transformers/modeling_rope_utils.py _compute_yarn_parameters, get_mscale(scale,
// mscale) = 0.1 mscale ln(scale) + 1 for scale > 1): rope_scaling's attention_factor;
// else, with mscale and mscale_all_dim (DeepSeek), get_mscale(factor, mscale) /
// get_mscale(factor, mscale_all_dim); else get_mscale(factor). 1 without YaRN.
double RopeMscale(const Fields& f) {
  if (!f.Has("rope_scaling") || !f.At("rope_scaling").is_object()) return 1.0;
  const json& s = f.At("rope_scaling");
  const auto number = [&s](const char* key, double fallback) {
    return s.contains(key) && s[key].is_number() ? s[key].get<double>() : fallback;
  };
  const auto text = [&s](const char* key) {
    return s.contains(key) && s[key].is_string() ? s[key].get<std::string>() : std::string();
  };
  const std::string type = text("rope_type").empty() ? text("type") : text("rope_type");
  if (type != "yarn") return 1.0;
  if (number("attention_factor", 0) > 0) return number("attention_factor", 0);
  const double factor = number("factor", 1);
  const auto get_mscale = [factor](double mscale) {
    return factor <= 1 ? 1.0 : 0.1 * mscale * std::log(factor) + 1.0;
  };
  if (s.contains("mscale") && s.contains("mscale_all_dim")) {
    return get_mscale(number("mscale", 1)) / get_mscale(number("mscale_all_dim", 1));
  }
  return get_mscale(1);
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
  m.rope_mscale = RopeMscale(f);
  m.qk_norm = fam.qk_norm;
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

}  // namespace meshsim

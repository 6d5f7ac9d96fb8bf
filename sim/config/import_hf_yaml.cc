// The model YAML `meshsim import hf` writes: its keys, scalars, comments and header.
#include <cstdio>
#include <regex>
#include <sstream>

#include "sim/config/import_hf.h"
#include "sim/workload/param_count.h"
#include "sim/workload/transformer.h"

namespace meshsim {

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
  o << indent << "ffn_kind: " << FfnKindName(m.ffn_kind) << "\n";
  o << indent << "vocab: " << m.vocab << "\n";
  o << indent << "seq_len: " << m.seq_len << "\n";
  o << indent << "tied_embeddings: " << (m.tied_embeddings ? "true" : "false") << "\n";
  if (m.parallel_block) o << indent << "parallel_block: true\n";
  o << indent << "experts: " << m.experts << "\n";
  o << indent << "top_k: " << m.top_k << "\n";
  if (m.moe_router_num_groups > 0) {
    o << indent << "moe_router_num_groups: " << m.moe_router_num_groups << "\n";
    o << indent << "moe_router_group_topk: " << m.moe_router_group_topk << "\n";
  }
  o << indent << "moe_ffn_hidden: " << m.moe_ffn_hidden << "\n";
  if (m.experts > 0) o << indent << "shared_experts: " << m.shared_experts << "\n";
  if (m.moe_latent_size > 0) o << indent << "moe_latent_size: " << m.moe_latent_size << "\n";
  if (m.expert_bias) o << indent << "expert_bias: true\n";
  if (m.glu_clamp > 0) o << indent << "glu_clamp: " << m.glu_clamp << "\n";
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
  if (m.rope_mscale != 1.0) o << indent << "rope_mscale: " << m.rope_mscale << "\n";
  if (m.qk_norm) o << indent << "qk_norm: true\n";
  if (m.IsHybrid()) HybridYamlKeys(m, indent, o);
  if (m.mtp_layers > 0) o << indent << "mtp_layers: " << m.mtp_layers << "\n";
  if (m.mtp_repeated_layer) o << indent << "mtp_repeated_layer: true\n";
  return o.str();
}

std::string ImportNotesYaml(const std::vector<std::string>& notes,
                            const std::vector<std::string>& warnings,
                            const std::vector<std::string>& not_modelled,
                            const std::vector<std::string>& unknown,
                            const std::string& unknown_label) {
  std::string o;
  for (const std::string& n : notes) o += YamlComment(n + ".");
  for (const std::string& w : warnings) o += YamlComment("Approximation: " + w + ".");
  for (const std::string& f : not_modelled) o += YamlComment(f + ".");
  if (!unknown.empty()) {
    std::string list;
    for (const std::string& u : unknown) list += (list.empty() ? "" : ", ") + u;
    o += YamlComment(unknown_label + ": " + list + ".");
  }
  return o;
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

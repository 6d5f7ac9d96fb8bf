// Hugging Face config.json -> model YAML (`meshsim import hf`).
//
// Pure functions: JSON text in, a ModelSpec and the YAML text of SPEC's model schema out.
// No file access; the CLI reads and writes the files.
//
// Supported, by `model_type` (or, without it, `architectures[0]`):
//   llama (LlamaForCausalLM), mistral (MistralForCausalLM), qwen2 (Qwen2ForCausalLM):
//       dense, gated MLP (ffn_kind swiglu);
//   mixtral (MixtralForCausalLM): every layer MoE, num_local_experts experts of
//       intermediate_size, num_experts_per_tok routed per token;
//   qwen2_moe (Qwen2MoeForCausalLM): num_experts of moe_intermediate_size,
//       shared_expert_intermediate_size as shared experts of moe_intermediate_size,
//       decoder_sparse_step k as every k-th layer MoE (layers k-1, 2k-1, ...);
//   deepseek_v2, deepseek_v3 (DeepseekV2/V3ForCausalLM): n_routed_experts of
//       moe_intermediate_size, n_shared_experts, first_k_dense_replace and moe_layer_freq
//       as dense_layers / moe_every; Multi-head Latent Attention exactly (q_lora_rank,
//       kv_lora_rank, qk_rope_head_dim; qk_nope_head_dim as head_dim, v_head_dim);
//   gpt_neox (GPTNeoXForCausalLM): dense, non-gated MLP (gelu for gelu/gelu_new);
//   qwen3 (Qwen3ForCausalLM): dense, gated MLP, head_dim;
//   qwen3_moe (Qwen3MoeForCausalLM): as qwen2_moe (no shared experts), head_dim;
//   gpt_oss (GptOssForCausalLM): every layer MoE, num_local_experts experts of
//       intermediate_size, num_experts_per_tok (or experts_per_token) routed per token;
//       head_dim; sliding_window on the layers layer_types marks "sliding_attention";
//   nemotron (NemotronForCausalLM): dense, non-gated MLP (relu2, squared ReLU).
//
// head_dim is written when it differs from hidden_size / num_attention_heads. A
// sliding_window shorter than seq_len (unless use_sliding_window is false) becomes
// sliding_window and sliding_window_pattern: layer_types must be k-1
// "sliding_attention" layers then one "full_attention" layer, repeated (pattern k), or
// absent (every layer windowed).
//
// Approximations, each one line of HfImport::warnings: a shared-expert size that is not a
// multiple of the expert size; Qwen2's max_window_layers; not counted: biases (Qwen2's
// Q/K/V, GPT-NeoX's, GPT-OSS's attention and experts' biases and attention sinks,
// attention_bias / mlp_bias), Qwen2-MoE's shared-expert gate, DeepSeek's
// multi-token-prediction module; a non-SiLU gated or non-GeLU plain activation.
//
// Every problem is an InputError naming the file, the JSON field and, where the field
// occurs once in the text, its line and column; JSON syntax errors carry line:column.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/status.h"
#include "sim/workload/model_spec.h"

namespace meshsim {

struct HfImportOptions {
  std::string source;   // file name for messages and the header; "-" for stdin
  std::string name;     // model name; empty: _name_or_path's last part, the file stem,
                        // or model_type, the first that exists
  int64_t seq_len = 0;  // training sequence length; 0: max_position_embeddings
  std::string command;  // the command line that produced the file, for the header
};

struct HfImport {
  ModelSpec model;
  std::string model_type;
  std::string architecture;           // architectures[0], empty when absent
  std::vector<std::string> warnings;  // approximations the user must know about
  std::vector<std::string> notes;     // provenance lines for the header comment
};

// Parses a config.json text. Errors name options.source and the offending field.
Result<HfImport> ImportHfConfig(const std::string& json_text, const HfImportOptions& options);

// The model YAML text of an import: a comment header (command, source, parameter
// counts, approximations; no date, so regenerating gives identical files), then the
// model's keys in SPEC's order.
std::string HfModelYaml(const HfImport& import, const HfImportOptions& options);

// The keys of a model mapping in SPEC's order, each line prefixed by `indent`. MoE keys
// beyond experts/top_k/moe_ffn_hidden are written only for MoE models.
std::string ModelYamlKeys(const ModelSpec& m, const std::string& indent);

// A YAML scalar for `s`: plain when that reads back as the same string, else quoted.
std::string YamlScalar(const std::string& s);

// `text` as YAML comment lines ("# ..."), wrapped at 90 columns. Bytes outside printable
// ASCII (control characters, non-ASCII, invalid UTF-8 from a command line) are written as
// \xNN, so that the comment reads back as one line of valid YAML.
std::string YamlComment(const std::string& text);

// An importer's header comments: its notes, approximations, what it does not model, and
// the unrecognised inputs listed after `unknown_label` (e.g. "Unknown flags, ignored").
std::string ImportNotesYaml(const std::vector<std::string>& notes,
                            const std::vector<std::string>& warnings,
                            const std::vector<std::string>& not_modelled,
                            const std::vector<std::string>& unknown,
                            const std::string& unknown_label);

// "405.9B", "12.88B", "124.4M", "129.0k": a parameter count for humans.
std::string FormatParams(double params);

}  // namespace meshsim

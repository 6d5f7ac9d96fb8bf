// Plain description of a transformer model, as read from a model YAML.
#pragma once

#include <cstdint>
#include <string>

namespace meshsim {

enum class FfnKind { kGelu, kSwiglu };

struct ModelSpec {
  std::string name;
  int layers = 0;
  int64_t hidden = 0;
  int heads = 0;
  int kv_heads = 0;        // == heads without grouped-query attention
  int64_t ffn_hidden = 0;  // intermediate size of the dense MLP
  FfnKind ffn_kind = FfnKind::kGelu;
  int64_t vocab = 0;
  int64_t seq_len = 0;
  bool tied_embeddings = false;
  int experts = 0;  // MoE: routed experts per MoE layer; 0 = dense
  int top_k = 0;
  int64_t moe_ffn_hidden = 0;
  int shared_experts = 0;  // MoE: experts every token goes through (each moe_ffn_hidden)
  int moe_every = 1;       // MoE: every k-th layer after the dense ones is MoE
  int dense_layers = 0;    // MoE: leading dense layers (DeepSeek's first_k_dense_replace)

  // Attention head sizes. head_dim 0: hidden / heads (then hidden must be a multiple of
  // heads); Qwen3 and GPT-OSS set it apart from hidden / heads. v_head_dim 0: head_dim.
  int64_t head_dim = 0;
  int64_t v_head_dim = 0;
  // Multi-head Latent Attention (DeepSeek-V2/V3), when kv_lora_rank > 0: queries go
  // through a q_lora_rank latent (0: a direct hidden x heads*(head_dim+rope) projection),
  // keys and values through a shared kv_lora_rank latent; each query/key head has
  // head_dim (no position encoding) + qk_rope_head_dim (rotary, its key part shared by all
  // heads) elements; values have v_head_dim. kv_heads must equal heads.
  int64_t q_lora_rank = 0;
  int64_t kv_lora_rank = 0;
  int64_t qk_rope_head_dim = 0;
  // Sliding-window attention: a windowed layer's query attends to the sliding_window
  // keys before it (0: every layer attends to the whole causal prefix). Of every
  // sliding_window_pattern layers, the first pattern-1 are windowed and the last is full
  // (1: all windowed; GPT-OSS: 2, layers 0, 2, 4, ... windowed).
  int64_t sliding_window = 0;
  int sliding_window_pattern = 1;

  bool IsMoe() const { return experts > 0; }
  // One expert's intermediate size: moe_ffn_hidden, or ffn_hidden when 0 (Megatron's default).
  int64_t ExpertFfnHidden() const { return moe_ffn_hidden > 0 ? moe_ffn_hidden : ffn_hidden; }
  bool IsMoeLayer(int layer) const {
    return IsMoe() && layer >= dense_layers &&
           (layer - dense_layers) % (moe_every > 0 ? moe_every : 1) == 0;
  }
  bool IsMla() const { return kv_lora_rank > 0; }
  int64_t HeadDim() const { return head_dim > 0 ? head_dim : hidden / heads; }
  // Elements of one query/key head (MLA: plus the rotary part) and of one value head.
  int64_t QkHeadDim() const { return HeadDim() + (IsMla() ? qk_rope_head_dim : 0); }
  int64_t VHeadDim() const { return v_head_dim > 0 ? v_head_dim : HeadDim(); }
  int64_t KvDim() const { return HeadDim() * kv_heads; }
  // Whether layer `layer` (0-based) uses the sliding window.
  bool IsWindowedLayer(int layer) const {
    return sliding_window > 0 &&
           (sliding_window_pattern <= 1 || (layer + 1) % sliding_window_pattern != 0);
  }
  bool HasWindowedLayers() const { return sliding_window > 0 && layers > 0 && IsWindowedLayer(0); }
  // Number of weight matrices of size hidden x ffn_hidden in one MLP.
  int FfnMatrices() const { return ffn_kind == FfnKind::kSwiglu ? 3 : 2; }
};

enum class Optimizer { kAdam, kSgd };
enum class GradAccumDtype { kSame, kFp32 };

}  // namespace meshsim

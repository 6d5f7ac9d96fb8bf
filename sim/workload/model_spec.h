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

  bool IsMoe() const { return experts > 0; }
  // One expert's intermediate size: moe_ffn_hidden, or ffn_hidden when 0 (Megatron's default).
  int64_t ExpertFfnHidden() const { return moe_ffn_hidden > 0 ? moe_ffn_hidden : ffn_hidden; }
  bool IsMoeLayer(int layer) const {
    return IsMoe() && layer >= dense_layers &&
           (layer - dense_layers) % (moe_every > 0 ? moe_every : 1) == 0;
  }
  int64_t HeadDim() const { return hidden / heads; }
  int64_t KvDim() const { return HeadDim() * kv_heads; }
  // Number of weight matrices of size hidden x ffn_hidden in one MLP.
  int FfnMatrices() const { return ffn_kind == FfnKind::kSwiglu ? 3 : 2; }
};

enum class Optimizer { kAdam, kSgd };
enum class GradAccumDtype { kSame, kFp32 };

}  // namespace meshsim

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
  int experts = 0;  // MoE: experts per MoE layer; 0 = dense
  int top_k = 0;
  int64_t moe_ffn_hidden = 0;
  int shared_experts = 0;  // MoE: shared experts per MoE layer, each of moe_ffn_hidden
  int moe_every = 1;       // MoE: every moe_every-th layer is MoE
  int dense_layers = 0;    // MoE: leading dense layers before the first MoE layer

  int64_t HeadDim() const { return hidden / heads; }
  int64_t KvDim() const { return HeadDim() * kv_heads; }
  // Number of weight matrices of size hidden x ffn_hidden in one MLP.
  int FfnMatrices() const { return ffn_kind == FfnKind::kSwiglu ? 3 : 2; }
};

enum class Optimizer { kAdam, kSgd };
enum class GradAccumDtype { kSame, kFp32 };

}  // namespace meshsim

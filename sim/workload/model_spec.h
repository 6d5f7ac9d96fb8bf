// Plain description of a transformer model, as read from a model YAML.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "sim/core/expert_routing.h"

namespace meshsim {

// The MLP's activation. kGelu: FC1, GeLU, FC2. kSwiglu: a gated unit (gate and up as one
// FC1 of twice the width, SiLU times up, FC2): 3 matrices. kSquaredRelu: FC1, relu(x)^2,
// FC2 (Nemotron-3/4, Nemotron-H; Megatron --squared-relu, HF hidden_act relu2): 2 matrices,
// the parameters and FLOPs of kGelu; its activation kernels depend on
// TrainingSpec::squared_relu_fusion.
enum class FfnKind { kGelu, kSwiglu, kSquaredRelu };

// The model YAML's name of each kind (model.ffn_kind).
inline const char* FfnKindName(FfnKind k) {
  switch (k) {
    case FfnKind::kSwiglu:
      return "swiglu";
    case FfnKind::kSquaredRelu:
      return "squared_relu";
    case FfnKind::kGelu:
      break;
  }
  return "gelu";
}

// What one layer of a model holds. kTransformer: attention + dense MLP or MoE block (every
// layer of a model without a layer pattern). The others are the one-block layers of a
// hybrid model's layer_pattern (Megatron-LM's hybrid_override_pattern): kMamba a Mamba-2
// mixer ('M'), kAttention self-attention ('*'), kMlp a dense MLP ('-'), kMoe a MoE block
// ('E'); each block has its own pre-norm.
enum class LayerKind { kTransformer, kMamba, kAttention, kMlp, kMoe };

// The most layers (layers + mtp_layers) a model may have: the replay keeps an op's layer
// index in 16 bits (OpInfo). Today's deepest published models have ~130 layers.
constexpr int kMaxModelLayers = 32'000;

struct ModelSpec {
  std::string name;
  int layers = 0;  // at most kMaxModelLayers with mtp_layers
  int64_t hidden = 0;
  int heads = 0;
  int kv_heads = 0;        // == heads without grouped-query attention
  int64_t ffn_hidden = 0;  // intermediate size of the dense MLP
  FfnKind ffn_kind = FfnKind::kGelu;
  int64_t vocab = 0;
  int64_t seq_len = 0;
  bool tied_embeddings = false;
  // PaLM's parallel formulation (Chowdhery et al. 2022, section 2), MaxText's default
  // decoder block until 2024: attention and MLP both read one norm's output and their
  // outputs are summed into the residual, so under tensor parallelism a layer gathers its
  // input and reduces its output once per pass instead of once per block. The same
  // parameters and FLOPs as the sequential block (meshsim still counts two norms' traffic
  // and activations).
  bool parallel_block = false;
  int experts = 0;  // MoE: routed experts per MoE layer; 0 = dense
  int top_k = 0;
  // MoE: node-limited (group-limited) routing, as DeepSeek-V3 trains (HF `n_group` /
  // `topk_group`; Megatron-Core `moe_router_num_groups` / `moe_router_group_topk`): the
  // experts form this many groups of consecutive experts and a token picks its experts in
  // moe_router_group_topk of them. 0: no groups.
  int moe_router_num_groups = 0;
  int moe_router_group_topk = 0;
  int64_t moe_ffn_hidden = 0;
  int shared_experts = 0;  // MoE: experts every token goes through (each moe_ffn_hidden)
  int moe_every = 1;       // MoE: every k-th layer after the dense ones is MoE
  int dense_layers = 0;    // MoE: leading dense layers (DeepSeek's first_k_dense_replace)
  // LatentMoE (Nemotron 3 Super / Ultra): when > 0 the routed experts work in a latent
  // space of this size: a hidden -> latent projection before dispatch and latent -> hidden
  // after combine (each hidden x latent), experts of latent x moe_ffn_hidden, tokens sent
  // as latents. Router and shared experts stay on hidden. 0: experts on hidden.
  int64_t moe_latent_size = 0;
  // GPT-OSS's routed experts (HF GptOssExperts; Megatron-Bridge models/gpt_oss/
  // gpt_oss_bridge.py @ v0.4.1: add_bias_linear, activation_func_clamp_value 7.0):
  // expert_bias, FC1 and FC2 of every routed expert carry a bias; glu_clamp > 0, the gated
  // activation clamps its gate half from above and its linear half to +-glu_clamp (HF
  // `swiglu_limit`). Costed as the element-wise kernels Megatron-Core runs for them
  // (ExpertElementwise, moe_layer_cost.cc); their parameters are not counted.
  bool expert_bias = false;
  double glu_clamp = 0;

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
  // The factor RoPE scales its cos and sin by: YaRN's attention factor (mscale; HF
  // rope_scaling, 0.1 ln(factor) + 1 for GPT-OSS's factor 32: 1.34657). 1: none. Other
  // than 1, Megatron-Core's fused RoPE does not take it and applies RoPE unfused
  // (UnfusedRopeExtra, layer_dims.h).
  double rope_mscale = 1.0;
  // QK normalization: an RMSNorm over each head's head_dim on Q and on K after the QKV
  // projection, before RoPE (Qwen3: transformers' Qwen3Attention q_norm / k_norm;
  // Megatron-Core's qk_layernorm, a Transformer Engine norm each, which Megatron-Bridge's
  // Qwen3 bridges set). Two more norm kernels forward, their backward, their inputs stored
  // and head_dim weights each (AddQkNorm, transformer.cc).
  bool qk_norm = false;

  // Hybrid models: one character per layer (layers == its length), 'M' Mamba-2, '*'
  // attention, '-' dense MLP, 'E' MoE; empty: every layer is kTransformer.
  std::string layer_pattern;
  // Mamba-2 mixer (Dao & Gu 2024, arXiv 2405.21060; Megatron-LM megatron/core/ssm/
  // mamba_mixer.py): mamba_heads heads of mamba_head_dim channels (d_inner = their
  // product), an SSM state of mamba_state per head, B and C shared by the heads of each
  // of mamba_groups groups, a depthwise causal conv1d of mamba_conv_kernel taps, and the
  // chunked SSD scan over chunks of mamba_chunk tokens.
  int mamba_heads = 0;
  int64_t mamba_head_dim = 0;
  int64_t mamba_state = 0;
  int mamba_groups = 1;
  int mamba_conv_kernel = 4;
  int64_t mamba_chunk = 128;
  // Multi-token prediction (DeepSeek-V3, arXiv 2412.19437, Sec. 2.2): mtp_layers extra
  // modules after the last layer, each two RMSNorms, a 2*hidden -> hidden projection and
  // one transformer layer (attention + MoE block on a MoE model, else attention + MLP),
  // sharing the embedding and the output layer. Layer indices layers .. layers+mtp-1.
  int mtp_layers = 0;
  // The MTP modules apply one module's weights mtp_layers times (Megatron-Core's
  // mtp_use_repeated_layer, "a single MTP layer repeatedly instead of multiple separate
  // layers", as Megatron-Bridge's Nemotron 3 Super recipe trains it): each pass computes as
  // a module does, but only the first MTP layer holds parameters, gradients and states.
  bool mtp_repeated_layer = false;

  bool IsMoe() const { return experts > 0; }
  // The router's choices, as the expert-parallel dispatch sees them.
  ExpertRouting Routing() const {
    if (moe_router_num_groups <= 1) return {experts, top_k, 1, 1};
    return {experts, top_k, moe_router_num_groups, moe_router_group_topk};
  }
  bool IsHybrid() const { return !layer_pattern.empty(); }
  // The kind of layer `layer` (0-based; MTP layers, index >= layers, are kTransformer).
  LayerKind KindOf(int layer) const {
    if (layer_pattern.empty() || layer >= static_cast<int>(layer_pattern.size())) {
      return LayerKind::kTransformer;
    }
    switch (layer_pattern[layer]) {
      case 'M':
        return LayerKind::kMamba;
      case '*':
        return LayerKind::kAttention;
      case 'E':
        return LayerKind::kMoe;
      default:
        return LayerKind::kMlp;
    }
  }
  bool HasAttention(int layer) const {
    const LayerKind k = KindOf(layer);
    return k == LayerKind::kTransformer || k == LayerKind::kAttention;
  }
  bool IsMambaLayer(int layer) const { return KindOf(layer) == LayerKind::kMamba; }
  // A dense MLP: a kMlp layer, or a kTransformer layer that is not MoE.
  bool HasDenseMlp(int layer) const {
    const LayerKind k = KindOf(layer);
    return k == LayerKind::kMlp || (k == LayerKind::kTransformer && !IsMoeLayer(layer));
  }
  int64_t MambaInner() const { return int64_t{mamba_heads} * mamba_head_dim; }
  // Channels of the conv1d: x, B and C.
  int64_t MambaConvDim() const { return MambaInner() + 2 * mamba_groups * mamba_state; }
  // Output width of in_proj: z, x, B, C and one dt per head.
  int64_t MambaInProjDim() const {
    return 2 * MambaInner() + 2 * mamba_groups * mamba_state + mamba_heads;
  }
  // One expert's intermediate size: moe_ffn_hidden, or ffn_hidden when 0 (Megatron's default).
  int64_t ExpertFfnHidden() const { return moe_ffn_hidden > 0 ? moe_ffn_hidden : ffn_hidden; }
  // The width routed experts read and write: moe_latent_size, or hidden.
  int64_t ExpertDim() const { return moe_latent_size > 0 ? moe_latent_size : hidden; }
  bool IsMoeLayer(int layer) const {
    const LayerKind k = KindOf(layer);
    if (k != LayerKind::kTransformer) return k == LayerKind::kMoe;
    if (IsHybrid()) return IsMoe();  // an MTP layer of a hybrid MoE model
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
  // Layers including the MTP layers (which the last pipeline stage holds).
  int AllLayers() const { return layers + mtp_layers; }
  // Whether MTP layer `layer` (index >= layers) reuses the first MTP layer's weights.
  bool SharesMtpWeights(int layer) const { return mtp_repeated_layer && layer > layers; }
  // MTP modules that hold parameters: mtp_layers, or at most one with mtp_repeated_layer.
  int MtpWeightModules() const { return mtp_repeated_layer ? std::min(mtp_layers, 1) : mtp_layers; }
};

enum class Optimizer { kAdam, kSgd };
enum class GradAccumDtype { kSame, kFp32 };
// Dtype of Adam's two moments (SGD's momentum): kFp32, or kBf16 as Megatron-Core's
// precision-aware optimizer keeps them (--use-precision-aware-optimizer with
// --exp-avg-dtype bf16 --exp-avg-sq-dtype bf16); the fp32 master weights stay fp32.
enum class MomentsDtype { kFp32, kBf16 };

}  // namespace meshsim

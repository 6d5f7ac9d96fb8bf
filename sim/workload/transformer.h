// Per-layer costs of a dense transformer, per rank and per micro-batch.
//
// FLOPs follow Narayanan et al. 2021 (2 FLOPs per multiply-add); activation bytes follow
// Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large Transformer
// Models", Section 4), generalised to grouped-query attention (K and V of kv_heads) and
// SwiGLU (gate and up projections). With heads == kv_heads, ffn = 4h and GeLU the
// numbers reduce exactly to the paper's: s*b*h*(34 + 5*a*s/h) bytes per layer in 16-bit.
//
// A layer is two blocks, attention and MLP, each ending in a tensor-parallel collective.
#pragma once

#include <cstdint>

#include "sim/core/dtype.h"
#include "sim/workload/model_spec.h"

namespace meshsim {

// kNone keeps every activation Korthikanti et al. count; kSelective re-runs the attention
// core (Megatron's selective); kFull keeps only each layer's input and re-runs its forward;
// kProjections keeps the layer input and the outputs of the weight matmuls (Q, K, V, output
// projection, MLP input and output projections) and re-runs the attention core, as JAX's
// checkpoint_dots_with_no_batch_dims (MaxText's remat_policy minimal) does.
enum class Recompute { kNone, kSelective, kFull, kProjections };

// How a MoE layer's tokens reach the experts (Megatron-Core's --moe-token-dispatcher-type):
// kAllToAll, the all-to-all dispatcher, permutes the tokens in separate kernels around the
// all-to-alls (AlltoAllPermutation); kFlex, DeepEP's or HybridEP's dispatcher, fuses the
// permutations into its dispatch and combine kernels (FlexPermutation).
enum class MoeDispatcher { kAllToAll, kFlex };

// The library behind kFlex: MoeFlexBackend (core/expert_routing.h, shared with net/).

// The library that runs the routed experts' GEMMs (NeMo-Automodel's `backend.experts`):
//  - kTe: Transformer Engine's GroupedLinear, one cuBLAS GEMM per local expert on TE's 4
//    compute streams (Megatron-Core's TEGroupedMLP; Automodel `te`).
//  - kGmm: the grouped_gemm library (nv-grouped-gemm 1.1.4.post8, github.com/fanshiqing/
//    grouped_gemm csrc/grouped_gemm.cu; Automodel `gmm`). Built for any GPU but exactly SM80
//    (setup.py defines GROUPED_GEMM_DEVICE_CAPABILITY from the build GPU, none under
//    TORCH_CUDA_ARCH_LIST), GroupedGemm runs CublasGroupedGemm: one cublasGemmEx per
//    expert, round-robin on the library's NUM_STREAM = 4 streams, forward, dgrad and wgrad
//    alike; its CUTLASS grouped kernel is the SM80 build's forward only ("Use cuBLAS for
//    SM90 until CUTLASS supports SM90-optimized grouped-gemm"). BF16 only.
//  - kTorchMm: PyTorch's torch._grouped_mm (Automodel `torch_mm`, its default on CUDA):
//    one grouped kernel per GEMM over all local experts, the offsets on the device; in
//    BF16 at training sizes about as fast as a loop of cuBLAS GEMMs (pytorch/pytorch#163425,
//    H200), so timed at the grouped_gemm library's rate (GemmShape::gmm_rate).
enum class MoeGroupedGemm { kTe, kGmm, kTorchMm };

// The modules Recompute::kSelective re-runs before their backward: Megatron-Core's
// --recompute-modules (TransformerConfig.recompute_modules, megatron/core/transformer/
// transformer_config.py; the layer and expert code that reads it: transformer_layer.py,
// moe/experts.py @ NVIDIA/Megatron-LM main, 2026). Each drops what it would have stored
// and re-materialises it, as working memory of its layer's backward, just before the
// backward that reads it:
//  - core_attn (Megatron's default): the attention core; drops its softmax, dropout mask
//    and output (flash attention: the softmax statistics).
//  - layernorm: the norms that are their own kernel (CheckpointWithoutOutput): with
//    Transformer Engine's layer specs only a MoE layer's pre-MLP norm; the attention's and
//    a dense MLP's norms are fused into the next GEMM (TELayerNormColumnParallelLinear,
//    their norm module an IdentityOp, which Megatron skips). Drops the norm's output (the
//    router's and dispatcher's input), keeps its input; re-runs one norm kernel.
//  - moe_act: the routed experts' activation (SwiGLU / GeLU); drops its output, FC2's
//    input (under FP8 Megatron makes FC2 save that original input, set_save_original_input,
//    and drops it too), keeps FC1's output; re-runs the activation kernel before FC2's
//    backward.
//  - mlp: a dense MLP block whole (not a MoE layer's: Megatron's `moe`); keeps the block's
//    input (and the dropout mask of the residual add after it), re-runs its forward,
//    its TP collectives included, before its backward.
//  - mla_up_proj (Multi-head Latent Attention only): the up-projections and RoPE
//    (multi_latent_attention.py `qkv_up_proj_and_rope_apply` under CheckpointWithoutOutput):
//    drops Q, K and V, the attention core's inputs (their storage freed once the core's
//    output exists), keeps the latents they came from; re-runs the Q and KV up-projection
//    GEMMs and the fused RoPE / concatenation kernels before the attention's backward.
// Not modelled (config/import report them): moe (the whole MoE block), shared_experts.
struct RecomputeModules {
  bool core_attn = true;
  bool layernorm = false;
  bool moe_act = false;
  bool mlp = false;
  bool mla_up_proj = false;
  bool operator==(const RecomputeModules&) const = default;
};

// Whether backward re-runs the attention core (selective with core_attn, and projections).
inline bool RecomputesAttentionCore(Recompute r, const RecomputeModules& m) {
  return (r == Recompute::kSelective && m.core_attn) || r == Recompute::kProjections;
}

// Whether backward re-runs MLA's up-projections (selective with mla_up_proj on an MLA model).
inline bool RecomputesMlaUpProjections(Recompute r, const RecomputeModules& m, bool mla) {
  return r == Recompute::kSelective && m.mla_up_proj && mla;
}

// Whether a layer's attention backward starts with a recompute op: the attention core, or
// MLA's up-projections, or both in one op.
inline bool RecomputesInAttentionBackward(Recompute r, const RecomputeModules& m, bool mla) {
  return RecomputesAttentionCore(r, m) || RecomputesMlaUpProjections(r, m, mla);
}

// What one rank computes: the local slice of one micro-batch.
struct LayerShape {
  int64_t seq = 0;          // tokens of one sequence held by this rank (seq_len / cp)
  int64_t micro_batch = 1;  // sequences per micro-batch
  int tp = 1;
  bool sequence_parallel = false;
  Recompute recompute = Recompute::kNone;
  RecomputeModules recompute_modules;  // under Recompute::kSelective
  Dtype dtype = Dtype::kBf16;
  int64_t kv_seq = 0;  // keys each query attends to (seq_len); 0: same as seq
  // Sliding-window layer: each query attends to this many keys (counted as a full band,
  // as full attention counts the full square); 0: full causal attention over KvSeq().
  int64_t window = 0;
  // Fused attention (FlashAttention): the a*s*s score tensors are never stored, only the
  // softmax statistics; backward recomputes the scores inside the kernel.
  bool flash_attention = false;
  bool fp8_attention = false;  // FP8 fused attention (TrainingSpec::fp8_attention)
  // A squared-ReLU MLP's activation is one fused kernel per pass; false: relu then pow,
  // two (TrainingSpec::squared_relu_fusion; ActivationKernelsOf, layer_dims.h).
  bool squared_relu_fused = true;
  // The recomputation is XLA's (a JAX-style plan): jax.checkpoint re-runs the layer's
  // forward inside the backward loop body, where XLA's dead-code elimination drops what
  // the backward does not read. Under Recompute::kFull each block's last GEMM (the output
  // projection, the MLP's FC2) and the reduction after it feed only the residual sum, so
  // they are not re-run; the recomputed all-gather of the block's input (sequence
  // parallelism) gives the weight gradients their gathered input, so the backward does not
  // gather it again. PyTorch's checkpoint re-runs the whole function (false).
  bool xla_remat = false;
  MoeDispatcher moe_dispatcher = MoeDispatcher::kAllToAll;
  // The routed experts run as Transformer Engine's fused grouped MLP
  // (FrameworkOptions::fused_grouped_mlp): each of FC1 (with the activation fused into
  // its epilogue) and FC2 one grouped kernel over the local experts; false: one GEMM
  // launch per local expert (GroupedLinear) and a separate activation kernel.
  bool fused_grouped_mlp = false;
  // Megatron-Core's paged stash of the fused grouped MLP's saved tensors
  // (FrameworkOptions::moe_paged_stash): copied out after the experts' forward and back
  // before their backward, on a side stream (MoeCost::stash_*).
  bool moe_paged_stash = false;
  // The library of the experts' GEMMs (MoeGroupedGemm); fused_grouped_mlp is TE's.
  MoeGroupedGemm grouped_gemm = MoeGroupedGemm::kTe;
  // The layers are Megatron-Core's modules (plan.framework megatron): the routed experts
  // are its TEGroupedMLP, whose expert biases and clamped GLU add element-wise kernels
  // (MoeCost::extra_*).
  bool megatron = false;

  // Each of the experts' GEMMs (FC1, FC2 and their backward) is one kernel over all local
  // experts: TE's fused grouped MLP or torch._grouped_mm. Otherwise one GEMM per expert.
  bool OneKernelPerExpertGemm() const {
    return fused_grouped_mlp || grouped_gemm == MoeGroupedGemm::kTorchMm;
  }

  // Selective recomputation of one module (RecomputeModules).
  bool RecomputesLayernorm() const {
    return recompute == Recompute::kSelective && recompute_modules.layernorm;
  }
  bool RecomputesMoeAct() const {
    return recompute == Recompute::kSelective && recompute_modules.moe_act;
  }
  bool RecomputesMlp() const { return recompute == Recompute::kSelective && recompute_modules.mlp; }

  int64_t KvSeq() const { return kv_seq > 0 ? kv_seq : seq; }
  int64_t KeysPerQuery() const { return window > 0 && window < KvSeq() ? window : KvSeq(); }
};

// One block (attention or MLP) of one layer, for one rank and one micro-batch.
struct BlockCost {
  int fwd_kernels = 0;         // kernels launched by the forward pass
  int weight_kernels = 0;      // GEMMs with weights (each has a weight-gradient GEMM)
  int recompute_kernels = 0;   // kernels re-run in backward
  double fwd_flops = 0;        // matmul FLOPs of the forward pass
  double fwd_bytes = 0;        // HBM traffic of the element-wise kernels of the forward pass
  double recompute_flops = 0;  // FLOPs re-run in backward (selective: its modules; full: all)
  double recompute_bytes = 0;
  double stored_act_bytes = 0;     // kept from forward until this block's backward
  double transient_act_bytes = 0;  // re-materialised during backward, freed at its end
  double tp_comm_bytes = 0;        // payload of the block's TP collective (full tensor)
  double core_flops = 0;           // attention only: the part that is the attention core
  double core_bytes = 0;           //   (scores, softmax, context), split by ring attention
  // Element-wise HBM traffic and kernels the backward has beyond the fwd_bytes and
  // fwd_kernels that its dgrad and its wgrad op each charge, in the dgrad op (the unfused
  // squared ReLU's backward: ActivationKernelsOf, layer_dims.h). Negative where forward
  // work has less backward than that convention mirrors (unfused RoPE: UnfusedRopeExtra);
  // the dgrad op's total stays positive.
  double bwd_extra_bytes = 0;
  int bwd_extra_kernels = 0;
};

struct LayerCost {
  BlockCost attention;
  BlockCost mlp;
  double params = 0;  // parameters of one layer held by one TP rank
};

// Costs of one dense transformer layer. Precondition: tp divides heads and kv_heads.
// Attention: Q, K and V projections of heads x QkHeadDim(), kv_heads x QkHeadDim() and
// kv_heads x VHeadDim(), the core (scores over QkHeadDim(), context over VHeadDim(), each
// query against shape.KeysPerQuery() keys) and the output projection from heads x
// VHeadDim(). Multi-head Latent Attention (m.IsMla()): the down-projections to the
// latents run whole on every TP rank (as Megatron-Core's MLA), the up-projections and the
// output projection are split over heads; the latents are stored for backward.
LayerCost TransformerLayerCost(const ModelSpec& m, const LayerShape& shape);

// The MoE block that replaces the MLP of a MoE layer, for one rank and one micro-batch,
// with experts spread over `ep` ranks (not split by TP) and tokens split by TP. LatentMoE
// (moe_latent_size > 0): the routed experts and the dispatched tokens are ExpertDim()
// wide, and the router block also runs the hidden <-> latent projections.
struct MoeCost {
  double tokens = 0;  // tokens this rank routes (s*b, split by TP)
  BlockCost router;   // LayerNorm + router GEMM, split by sequence parallelism
  BlockCost experts;  // routed experts' FFN for the tokens this rank receives
  // HBM traffic of the token permutations around the all-to-alls (AlltoAllPermutation),
  // forward; backward runs their inverses, as much again. Its kernels are in
  // experts.fwd_kernels.
  double permute_bytes = 0;
  // HBM traffic of the routed experts' activation backward (ActivationKernelsOf,
  // layer_dims.h; SwiGLU: its saved 2f-wide input and the f-wide output gradient read, the
  // 2f-wide input gradient written, 5f elements per received token), in the input-gradient
  // op only: the weight-gradient op runs GEMMs and no element-wise kernel. 0 with the fused
  // grouped MLP, whose dGLU kernel computes it. Its launches beyond the forward's:
  // experts.bwd_extra_kernels.
  double act_bwd_bytes = 0;
  BlockCost shared;           // shared experts (TP-split like a dense MLP); may be empty
  double dispatch_bytes = 0;  // all-to-all send buffer: tokens * top_k * hidden
  double token_bytes = 0;     // the rank's tokens once: tokens * hidden (DeepEP's input)
  double expert_params = 0;   // routed-expert parameters held by this rank
  // The routed experts' element-wise kernels for expert biases and a clamped GLU
  // (ExpertElementwise in moe_layer_cost.cc; 0 without them): HBM bytes and kernels of the
  // forward, and of their autograd backward, which runs in the input-gradient op.
  double extra_fwd_bytes = 0, extra_bwd_bytes = 0;
  int extra_fwd_kernels = 0, extra_bwd_kernels = 0;
  // Of extra_fwd_kernels, those launched after FC2's GEMMs (FC2's bias): the forward's
  // trailing host launches (HostThread::Issue).
  int extra_fwd_trailing = 0;
  // The paged stash (LayerShape::moe_paged_stash with fused_grouped_mlp; 0 without it):
  // the HBM bytes and kernels of copying the experts' saved tensors out after their
  // forward, and as much again of copying them back before their backward. Megatron-Core
  // runs both on a side stream (moe_blocks.cc MoeStash).
  double stash_bytes = 0;
  int stash_kernels = 0;
  double dense_params = 0;  // router + shared experts + norm, per TP rank
};
// `load` scales the routed tokens this rank's experts process (1 = balanced).
MoeCost MoeLayerCost(const ModelSpec& m, const LayerShape& shape, int ep, double load = 1.0);

// Kernels of a MoE router's forward, as Megatron-Core's TopKRouter launches them with
// moe_router_fusion (router.py @ d98e8a6): the pre-MLP LayerNorm, the gating GEMM, the
// fused top-k with its score function, the auxiliary load-balancing loss (fused routing
// scores, tokens per expert, fused loss, its autograd scaler) and the benchmarks'
// force-balanced random logits (apply_random_logits: generate, copy).
inline constexpr int kMoeRouterKernels = 9;

// The token permutations of Megatron-Core's all-to-all token dispatcher for one rank and
// one micro-batch: `sent` token copies leave the rank (tokens x top_k), `received` arrive
// for its `local_experts` experts, `tokens` rows come back out. `rows`: hidden-wide rows
// read plus rows written, forward; `kernels`: the kernels of its permutations and of its
// token-count bookkeeping.
struct MoePermutation {
  double rows = 0;
  int kernels = 0;
};
MoePermutation AlltoAllPermutation(double sent, double received, double tokens,
                                   double local_experts);
// The same for DeepEP's and HybridEP's fused dispatchers: the dispatch kernel writes the
// `received` copies in local-expert order and the combine kernel reads them back (2 x
// received rows: what the communication kernels' own permutation adds to their traffic),
// in one permute and one unpermute kernel.
MoePermutation FlexPermutation(double received);

// Bytes of K and V of this rank's sequence chunk (what ring attention passes on per step):
// kv_heads x (QkHeadDim() + VHeadDim()) elements per token, split by TP.
double KvBlockBytes(const ModelSpec& m, const LayerShape& shape);

// HBM bytes with which one ring-attention block merges its partial result into the rank's
// running one (Transformer Engine's AttnFuncWithCPAndKVP2P, transformer_engine/pytorch/
// attention/dot_product_attention/context_parallel.py @ NVIDIA/TransformerEngine 015d225):
//  - forward: flash_attn_fwd_out_correction rescales the block's output by its softmax
//    statistics and adds it to the output: reads both, writes the output, 3 x 2 bytes per
//    output element (heads x VHeadDim() per token);
//  - backward (`backward` true): the block's dQ added to dQ (bwd_dq_update) and its dK/dV
//    to dK/dV (bwd_dkv_update): 3 x 2 bytes per element of each (heads x QkHeadDim(), and
//    kv_heads x (QkHeadDim() + VHeadDim()) per token).
// Per block of the rank's chunk, split by TP. An upper bound: under the causal split the
// blocks of later steps touch half of it (the mean over ranks is (3 cp + 1) / (4 cp)), and a
// step's first touch copies (2 x 2 bytes) rather than adds.
double RingMergeBytes(const ModelSpec& m, const LayerShape& shape, bool backward);

// Korthikanti Table 2: activation bytes of one layer for this shape, all blocks together,
// as stored between forward and backward (16-bit).
double StoredActivationBytesPerLayer(const ModelSpec& m, const LayerShape& shape);

// Parameters of the whole model (embedding, layers, final norm, untied output layer, MTP
// modules), and those a token uses (MoE: top_k routed experts and the shared ones).
double TotalParams(const ModelSpec& m);
double ActiveParams(const ModelSpec& m);
// Parameters of one dense transformer layer (all TP ranks together).
double LayerParams(const ModelSpec& m);
// Parameters of attention and norms of one layer; of one routed expert; of a MoE layer.
double AttentionParams(const ModelSpec& m);
// Attention parameters one TP rank holds (MLA's down-projections on every rank).
double AttentionParamsPerRank(const ModelSpec& m, int tp);
double ExpertParams(const ModelSpec& m);
double MoeLayerParams(const ModelSpec& m, bool active_only);
// Parameters of layer `layer` (0-based, MTP layers included), all TP ranks together, by
// its kind (ModelSpec::KindOf): a transformer layer (LayerParams or MoeLayerParams), or a
// hybrid model's one-block layer with its one norm: Mamba-2 (MambaLayerParams, mamba.h),
// attention, dense MLP or MoE block. `active_only`: top_k routed experts.
double LayerParamsOf(const ModelSpec& m, int layer, bool active_only);
// An MTP module's parameters besides its transformer layer: the norms of the hidden state
// and of the embedding, the module's final norm (3 x hidden) and the 2*hidden x hidden
// projection (DeepSeek-V3's enorm, hnorm, shared_head.norm and eh_proj); the embedding
// and output layer are shared with the main model.
double MtpExtraParams(const ModelSpec& m);
// FLOPs of an MTP module's projection's forward for one rank's micro-batch: 2*s*b*2h*h.
double MtpProjectionFlops(const ModelSpec& m, const LayerShape& shape);
// Parameters of the input embedding (vocab x hidden).
double EmbeddingParams(const ModelSpec& m);

// Model FLOPs of one training step (forward + backward, no recomputation) for
// `sequences` sequences of the model's seq_len: 3 x forward (MoE: active experts only;
// windowed layers: sliding_window keys per query; Mamba-2 layers: projections and SSD
// scan; each MTP module: its projection, its layer and one more output layer).
double ModelFlopsPerStep(const ModelSpec& m, double sequences);

// FLOPs of the output layer's forward for one rank: 2*s*b*h*V/tp.
double LogitFlops(const ModelSpec& m, const LayerShape& shape);

}  // namespace meshsim

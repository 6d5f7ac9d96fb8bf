#include "sim/workload/layer_kernels.h"

#include <algorithm>
#include <cassert>
#include <vector>

namespace meshsim {

double TeGroupedGemmStreams() {
  // transformer_engine/common/util/multi_stream.cpp: get_num_compute_streams() returns 4;
  // gemm/cublaslt_gemm.cu: nvte_multi_tensor_gemm (GroupedLinear's general_grouped_gemm)
  // runs multi_stream_cublas_gemm, GEMM i on compute stream i % 4, unless Hopper with
  // NVTE_USE_CUTLASS_GROUPED_GEMM (TransformerEngine @ d0067d0).
  return 4;
}

namespace {

// A weight GEMM of the forward, Y[T x out] = X[T x in] W[in x out], and its backward.
// `fp8`: one of Transformer Engine's linear layers, FP8 under FP8 training (GemmShape).
// `norm_fed`: X is the output of the TE normalization fused into the module
// (LayerNormLinear), so its cast's amax comes with it (GemmShape::amax_fused).
struct Linear {
  double tokens, in, out;
  bool fp8 = true;
  bool norm_fed = false;
  GemmShape Fwd() const {
    GemmShape g{tokens, out, in, 1, fp8, fp8};
    g.amax_fused = norm_fed && fp8;
    return g;
  }
  GemmShape Dgrad() const { return {tokens, in, out, 1, fp8, fp8}; }
  GemmShape Wgrad() const { return {in, out, tokens, 1, fp8, false}; }
};

// The attention core of one rank: batch_heads heads of seq_q queries against seq_kv keys,
// scores over qk_dim and context over v_dim elements per head; causal unless the keys are
// a sliding window (a band, computed whole). band_seq > 0: the fused kernel is such a
// band, within a causal sequence of band_seq keys (AttentionShape::band).
struct Core {
  double batch_heads, seq_q, seq_kv, qk_dim, v_dim;
  bool flash, causal;
  double band_seq = 0;
  bool fp8 = false;

  // The fused kernel counts 4 x head_dim FLOPs per score: the mean of qk_dim and v_dim.
  AttentionShape Fused(bool backward, double passes) const {
    AttentionShape a{batch_heads, seq_q, seq_kv, (qk_dim + v_dim) / 2, causal, backward, passes};
    a.band = band_seq > 0;
    a.band_seq = band_seq;
    a.fp8 = fp8;
    return a;
  }
  // Forward: scores S = Q K^T, context O = P V.
  void Fwd(KernelShapes* k) const {
    if (flash) {
      k->attention.push_back(Fused(false, 1));
      return;
    }
    k->gemms.push_back({seq_q, seq_kv, qk_dim, batch_heads});
    k->gemms.push_back({seq_q, v_dim, seq_kv, batch_heads});
  }
  // Backward, first half: dP = dO V^T, dQ = dS K.
  void BwdFirst(KernelShapes* k) const {
    if (flash) {
      k->attention.push_back(Fused(true, 1));
      return;
    }
    k->gemms.push_back({seq_q, seq_kv, v_dim, batch_heads});
    k->gemms.push_back({seq_q, qk_dim, seq_kv, batch_heads});
  }
  // Backward, second half: dV = P^T dO, dK = dS^T Q.
  void BwdSecond(KernelShapes* k) const {
    if (flash) {
      k->attention.push_back(Fused(true, 1));
      return;
    }
    k->gemms.push_back({seq_kv, v_dim, seq_q, batch_heads});
    k->gemms.push_back({seq_kv, qk_dim, seq_q, batch_heads});
  }
  void Bwd(KernelShapes* k) const {
    if (flash) {
      k->attention.push_back(Fused(true, 2));
      return;
    }
    BwdFirst(k);
    BwdSecond(k);
  }
};

void AddFwd(KernelShapes* k, const Linear& l) { k->gemms.push_back(l.Fwd()); }
void AddDgrad(KernelShapes* k, const Linear& l) { k->gemms.push_back(l.Dgrad()); }
void AddWgrad(KernelShapes* k, const Linear& l) { k->gemms.push_back(l.Wgrad()); }

// An MLP of `mats` matrices (GeLU: FC1, FC2; SwiGLU: gate and up as one GEMM, then down),
// `ffn` wide, TP-split, over `tokens` tokens, `groups` times (grouped experts).
// `whole`: backward re-runs the forward (full recomputation; selective with mlp).
// `norm_fed`: FC1 is a LayerNormLinear (Linear::norm_fed).
PassKernels Mlp(double tokens, double hidden, double ffn, int mats, double t, double groups,
                bool whole, bool xla_remat, bool norm_fed = false) {
  Linear fc1{tokens, hidden, ffn * (mats - 1) / t};
  fc1.norm_fed = norm_fed;
  const Linear fc2{tokens, ffn / t, hidden};
  PassKernels p;
  for (const Linear& l : {fc1, fc2}) {
    GemmShape g = l.Fwd(), d = l.Dgrad(), w = l.Wgrad();
    g.batch = d.batch = w.batch = groups;
    p.fwd.gemms.push_back(g);
    p.dgrad.gemms.insert(p.dgrad.gemms.begin(), d);  // backward runs FC2's first
    p.wgrad.gemms.insert(p.wgrad.gemms.begin(), w);
  }
  if (whole) p.recompute = p.fwd;
  if (whole && xla_remat) p.recompute.gemms.pop_back();  // FC2
  return p;
}

// The experts' GEMMs as Transformer Engine's GroupedLinear (or the grouped_gemm library:
// `gmm`) runs them: each batch of `groups` GEMMs as one launch per group on
// TeGroupedGemmStreams() streams (the library's NUM_STREAM is 4 too).
void AsPerExpertGemms(PassKernels* p, double groups) {
  if (groups <= 1) return;
  for (KernelShapes* k : {&p->fwd, &p->dgrad, &p->wgrad, &p->recompute}) {
    for (GemmShape& g : k->gemms) {
      g.launches_per_batch = true;
      g.streams = std::min(groups, TeGroupedGemmStreams());
    }
  }
}

// The experts' GEMMs at NeMo-Automodel's BF16 libraries' rate (GemmShape::gmm_rate).
void AtGmmRate(PassKernels* p) {
  for (KernelShapes* k : {&p->fwd, &p->dgrad, &p->wgrad, &p->recompute}) {
    for (GemmShape& g : k->gemms) g.gmm_rate = true;
  }
}

// The experts' GEMMs of TE's fused grouped MLP at its own share of the GEMM rate
// (GemmShape::grouped_rate, cluster.efficiency.fused_grouped_gemm), each marked as the
// fused kernel it is (GemmShape::fused_kernel; Mlp's order: the forward and its
// recomputation FC1, FC2, the backward FC2, FC1). FC2's input (the SwiGLU's output) and
// FC1's output gradient leave the epilogue of the kernel before them quantised to MXFP8,
// so they are not cast (TransformerEngine transformer_engine/pytorch/ops/fused/
// grouped_mlp.py @ d0067d0: cuDNN frontend's grouped_gemm_glu_wrapper_sm100 for FC1,
// grouped_gemm_dglu_wrapper_sm100 for FC2's input gradient, grouped_gemm_quant_wrapper_sm100
// on their quantised outputs, d_row_tensor and sfd_row_tensor, for FC2 and FC1's input
// gradient, grouped_gemm_wgrad_wrapper_sm100 for the weight gradients).
// With expert biases (`dbias`) the dGLU kernel also reduces FC1's bias gradient
// (grouped_mlp.py: `generate_dbias: fc1_op.has_bias` @ release_v2.18_nemo_26.08).
void AtGroupedRate(PassKernels* p, bool dbias) {
  for (KernelShapes* k : {&p->fwd, &p->dgrad, &p->wgrad, &p->recompute}) {
    for (GemmShape& g : k->gemms) g.grouped_rate = true;
  }
  const auto mark = [](KernelShapes* k, FusedMlpKernel first, FusedMlpKernel second) {
    if (k->gemms.size() != 2) return;
    k->gemms[0].fused_kernel = first;
    k->gemms[1].fused_kernel = second;
  };
  mark(&p->fwd, kFusedFc1Fwd, kFusedFc2Fwd);
  mark(&p->recompute, kFusedFc1Fwd, kFusedFc2Fwd);
  mark(&p->dgrad, kFusedFc2Dgrad, kFusedFc1Dgrad);
  mark(&p->wgrad, kFusedFc2Wgrad, kFusedFc1Wgrad);
  if (dbias && p->dgrad.gemms.size() == 2) p->dgrad.gemms[0].fused_dbias = true;
  for (KernelShapes* k : {&p->fwd, &p->recompute, &p->dgrad}) {
    if (k->gemms.size() == 2) k->gemms[1].casts_a = false;
  }
}

// The projections before the core: one QKV GEMM, or MLA's down- and up-projections (the
// down-projections whole on every TP rank).
std::vector<Linear> InputProjections(const ModelSpec& m, double tokens, double t) {
  const double h = static_cast<double>(m.hidden), a = m.heads;
  const double qk = static_cast<double>(m.QkHeadDim()), v = static_cast<double>(m.VHeadDim());
  // Megatron-Core's TE layer spec: the QKV projection is a LayerNormLinear
  // (backend.column_parallel_layer_norm_linear(), gpt_layer_specs.py @ Megatron-LM fc965da);
  // MLA's down-projections are plain linears after a separate norm.
  if (!m.IsMla()) {
    Linear qkv{tokens, h, (a * qk + m.kv_heads * (qk + v)) / t};
    qkv.norm_fed = true;
    return {qkv};
  }
  const double q_lora = static_cast<double>(m.q_lora_rank);
  const double kv_lora = static_cast<double>(m.kv_lora_rank);
  const double nope = static_cast<double>(m.HeadDim());
  std::vector<Linear> pre;
  if (q_lora > 0) {
    pre.push_back({tokens, h, q_lora});
    pre.push_back({tokens, q_lora, a * qk / t});
  } else {
    pre.push_back({tokens, h, a * qk / t});
  }
  pre.push_back({tokens, h, kv_lora + static_cast<double>(m.qk_rope_head_dim)});
  pre.push_back({tokens, kv_lora, a * (nope + v) / t});
  return pre;
}

// MLA's GEMMs that produce Q, K and V from the latents (InputProjections' order): Q's
// up-projection (or its one projection without a Q latent) and the KV up-projection.
std::vector<Linear> MlaUpProjections([[maybe_unused]] const ModelSpec& m,
                                     const std::vector<Linear>& pre) {
  assert(m.IsMla() && pre.size() == (m.q_lora_rank > 0 ? 4u : 3u));
  return {pre[pre.size() - 3], pre.back()};
}

AttentionKernels Attention(const ModelSpec& m, const LayerShape& shape) {
  const double tokens = static_cast<double>(shape.seq) * shape.micro_batch;
  const double h = static_cast<double>(m.hidden), t = shape.tp;
  const std::vector<Linear> pre = InputProjections(m, tokens, t);
  const double qk = static_cast<double>(m.QkHeadDim()), v = static_cast<double>(m.VHeadDim());
  const Linear proj{tokens, m.heads * v / t, h};
  const double batch_heads = static_cast<double>(shape.micro_batch) * m.heads / t;
  const double s = static_cast<double>(shape.seq);
  const double keys = static_cast<double>(shape.KeysPerQuery());
  const bool causal = keys == static_cast<double>(shape.KvSeq());
  Core core{batch_heads, s, keys, qk, v, shape.flash_attention, causal};
  core.band_seq = causal ? 0 : static_cast<double>(shape.KvSeq());
  core.fp8 = shape.fp8_attention;
  // Ring attention: the rank's queries against one chunk of keys (KvSeq / cp = seq); a
  // windowed layer's blocks are timed by the curve (their per-block shapes approximate).
  Core ring{batch_heads, s, std::min(s, keys), qk, v, shape.flash_attention, causal};
  ring.fp8 = shape.fp8_attention;
  AttentionKernels a;
  PassKernels& b = a.block;
  for (const Linear& l : pre) AddFwd(&b.fwd, l);
  core.Fwd(&b.fwd);
  AddFwd(&b.fwd, proj);
  AddDgrad(&b.dgrad, proj);
  core.BwdFirst(&b.dgrad);
  for (auto l = pre.rbegin(); l != pre.rend(); ++l) AddDgrad(&b.dgrad, *l);
  AddWgrad(&b.wgrad, proj);
  core.BwdSecond(&b.wgrad);
  for (auto l = pre.rbegin(); l != pre.rend(); ++l) AddWgrad(&b.wgrad, *l);
  if (RecomputesMlaUpProjections(shape.recompute, shape.recompute_modules, m.IsMla())) {
    for (const Linear& l : MlaUpProjections(m, pre)) AddFwd(&b.recompute, l);
  }
  if (RecomputesAttentionCore(shape.recompute, shape.recompute_modules)) core.Fwd(&b.recompute);
  if (shape.recompute == Recompute::kFull) b.recompute = b.fwd;
  if (shape.recompute == Recompute::kFull && shape.xla_remat) b.recompute.gemms.pop_back();
  for (const Linear& l : pre) AddFwd(&a.edge_fwd, l);
  AddFwd(&a.edge_fwd, proj);
  a.edge_fwd.fraction = 0.5;
  AddDgrad(&a.edge_dgrad, proj);
  for (auto l = pre.rbegin(); l != pre.rend(); ++l) AddDgrad(&a.edge_dgrad, *l);
  AddWgrad(&a.edge_wgrad, proj);
  for (auto l = pre.rbegin(); l != pre.rend(); ++l) AddWgrad(&a.edge_wgrad, *l);
  ring.Fwd(&a.ring_fwd);
  ring.Bwd(&a.ring_bwd);
  return a;
}

}  // namespace

LayerKernels TransformerLayerKernels(const ModelSpec& m, const LayerShape& shape) {
  assert(m.heads % shape.tp == 0);
  LayerKernels k;
  k.attention = Attention(m, shape);
  const double tokens = static_cast<double>(shape.seq) * shape.micro_batch;
  // The dense MLP's FC1 is a LayerNormLinear (get_mlp_module_spec_for_backend:
  // column_parallel_layer_norm_linear() where the backend fuses them, as TE's does).
  k.mlp = Mlp(tokens, static_cast<double>(m.hidden), static_cast<double>(m.ffn_hidden),
              m.FfnMatrices(), shape.tp, 1,
              shape.recompute == Recompute::kFull || shape.RecomputesMlp(), shape.xla_remat,
              /*norm_fed=*/true);
  return k;
}

MoeKernels MoeLayerKernels(const ModelSpec& m, const LayerShape& shape, int ep, double load) {
  const double h = static_cast<double>(m.hidden);
  const double tokens = static_cast<double>(shape.seq) * shape.micro_batch / shape.tp;
  MoeKernels k;
  const Linear router{tokens, h, static_cast<double>(m.experts), false};  // BF16/FP32 in Megatron
  AddFwd(&k.router.fwd, router);
  AddDgrad(&k.router.dgrad, router);
  AddWgrad(&k.router.dgrad, router);
  const double dim = static_cast<double>(m.ExpertDim());
  if (m.moe_latent_size > 0) {  // LatentMoE's projections, with the router
    for (const Linear& l : {Linear{tokens, h, dim}, Linear{tokens, dim, h}}) {
      AddFwd(&k.router.fwd, l);
      AddDgrad(&k.router.dgrad, l);
      AddWgrad(&k.router.dgrad, l);
    }
  }
  const double local_experts = static_cast<double>(m.experts) / ep;
  const double received = tokens * m.top_k * load;
  k.experts = Mlp(received / local_experts, dim, static_cast<double>(m.ExpertFfnHidden()),
                  m.FfnMatrices(), 1, local_experts, shape.recompute == Recompute::kFull, false);
  // A JAX-style plan's experts run as one grouped-matmul kernel (megablox), as do those
  // of TE's fused grouped MLP and of torch._grouped_mm; otherwise one GEMM per expert.
  if (!shape.xla_remat && !shape.OneKernelPerExpertGemm())
    AsPerExpertGemms(&k.experts, local_experts);
  if (shape.grouped_gemm != MoeGroupedGemm::kTe) AtGmmRate(&k.experts);
  if (shape.fused_grouped_mlp) AtGroupedRate(&k.experts, m.expert_bias);
  if (m.shared_experts > 0) {
    ModelSpec dense = m;
    dense.ffn_hidden = m.shared_experts * m.ExpertFfnHidden();
    LayerShape shared = shape;
    shared.recompute_modules.mlp = false;  // as MoeLayerCost
    k.shared = TransformerLayerKernels(dense, shared).mlp;
    // The shared experts' FC1 is a plain linear: the pre-MLP norm runs before the router.
    for (KernelShapes* s : {&k.shared.fwd, &k.shared.recompute}) {
      for (GemmShape& g : s->gemms) g.amax_fused = false;
    }
  }
  return k;
}

namespace {

// The SSD scan's GEMMs of one rank's micro-batch: Q-token chunks, N state, P head dim.
std::vector<GemmShape> ScanGemms(const ModelSpec& m, const LayerShape& shape) {
  const double q = static_cast<double>(std::min(m.mamba_chunk, shape.seq));
  const double chunks = static_cast<double>(shape.seq) / q * static_cast<double>(shape.micro_batch);
  const double n = static_cast<double>(m.mamba_state), p = static_cast<double>(m.mamba_head_dim);
  const double heads = chunks * m.mamba_heads / shape.tp;
  const double groups = chunks * m.mamba_groups / shape.tp;
  return {{q, q, n, groups}, {q, p, q, heads}, {n, p, q, heads}, {q, p, n, heads}};
}

}  // namespace

PassKernels MambaLayerKernels(const ModelSpec& m, const LayerShape& shape) {
  const double tokens = static_cast<double>(shape.seq) * shape.micro_batch, t = shape.tp;
  const double h = static_cast<double>(m.hidden);
  const Linear in{tokens, h, static_cast<double>(m.MambaInProjDim()) / t};
  const Linear out{tokens, static_cast<double>(m.MambaInner()) / t, h};
  const std::vector<GemmShape> scan = ScanGemms(m, shape);
  PassKernels k;
  AddFwd(&k.fwd, in);
  k.fwd.gemms.insert(k.fwd.gemms.end(), scan.begin(), scan.end());
  AddFwd(&k.fwd, out);
  AddDgrad(&k.dgrad, out);
  k.dgrad.gemms.insert(k.dgrad.gemms.end(), scan.begin(), scan.end());
  AddDgrad(&k.dgrad, in);
  AddWgrad(&k.wgrad, out);
  k.wgrad.gemms.insert(k.wgrad.gemms.end(), scan.begin(), scan.end());
  AddWgrad(&k.wgrad, in);
  if (shape.recompute == Recompute::kFull) k.recompute = k.fwd;
  return k;
}

LogitKernels LogitLayerKernels(const ModelSpec& m, const LayerShape& shape) {
  const double tokens = static_cast<double>(shape.seq) * shape.micro_batch;
  // Megatron's output layer is its own ColumnParallelLinear, not TE's: BF16 under FP8.
  const Linear logits{tokens, static_cast<double>(m.hidden),
                      static_cast<double>(m.vocab) / shape.tp, false};
  LogitKernels k;
  AddFwd(&k.fwd, logits);
  AddDgrad(&k.bwd, logits);
  AddWgrad(&k.bwd, logits);
  return k;
}

}  // namespace meshsim

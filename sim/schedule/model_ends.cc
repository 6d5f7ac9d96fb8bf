// The model's two ends as the step builder emits them: the embedding (its forward on the
// first virtual stage; its backward, dense gradient and reduction there), the output layer
// and the loss (LogitsWork) on the last virtual stage, and the multi-token-prediction
// modules that Megatron-LM runs there after the output layer.
#include "sim/schedule/model_states.h"
#include "sim/schedule/step_builder_impl.h"

namespace meshsim::schedule_internal {

double StepBuilder::LogitActBytes() const { return stages_.LogitBytes(); }

// The output layer and the loss over its fp32 logits (LogitActBytes: 4 bytes per logit),
// as Megatron-Core's fused vocab-parallel cross entropy runs it
// (megatron/core/fusions/fused_cross_entropy.py with tensor_parallel/cross_entropy.py @
// NVIDIA/Megatron-LM 86d5aa5d, July 2024): forward, the bf16 logits cast to fp32 (2 bytes
// read, 4 written), their max (4 read), the shifted exp and its sum (4 read, 4 written) and
// the softmax kept for backward (4 read, 4 written): 26 bytes per logit; backward, the
// gradient (4 read, 4 written) and its cast to bf16 for the output layer's GEMMs (4 read,
// 2 written): 14. Unfused (training.cross_entropy_fusion false, Megatron-LM's default: its
// --cross-entropy-loss-fusion is opt-in), tensor_parallel/cross_entropy.py @ core_r0.8.0 runs
// forward as separate in-place passes: the cast (2 read, 4 written), the max (4 read), the
// subtraction of the max (4 read, 4 written), exp (4 read, 4 written), the sum (4 read)
// and the division by it (4 read, 4 written): 38 bytes per logit; backward as fused.
// Transformer Engine's cross entropy (training.cross_entropy_fusion_impl te, Megatron-Core
// --cross-entropy-fusion-impl te; transformer_engine/pytorch/triton/cross_entropy.py and
// common/triton/cross_entropy.py @ NVIDIA/TransformerEngine e6d97ffc, 2026-03, as in the
// 25.11-26.06 containers) reads the bf16 logits twice, an online max and sum, then the
// softmax written over them in place as the gradient: 6 bytes per logit; backward scales
// that bf16 gradient by the per-token loss gradient in place (element_mul_kernel: 2 read,
// 2 written): 4, with no cast (TE 2026-07-09, 01bbe3ee, later writes an fp32 gradient).
// PyTorch's F.cross_entropy (training.cross_entropy_fusion_impl torch / torch_fp32,
// NeMo-Automodel's MaskedCrossEntropy with fp32_upcast false / true) is log_softmax and
// nll_loss (aten/src/ATen/native/LossNLL.cpp cross_entropy_loss). A vocabulary row is
// too long for the shared-memory softmax (can_use_smem: dim_size under sharedMemPerBlock,
// 48 KiB, over the element size), so log_softmax runs cunn_SoftMaxForward, which reads the
// row three times (its max, the sum of the shifted exponentials, and the pass that writes
// the result) and writes it once, and its backward cunn_SoftMaxBackward, which reads the
// incoming gradient for its sum, then it again with the saved output, and writes the
// input's gradient (aten/src/ATen/native/cuda/SoftMax.cu @ pytorch/pytorch 000cace5);
// nll_loss reads one logit per token, and its backward zero-fills a gradient the size of
// the logits before scattering the tokens' entries into it (nll_loss_backward). With e the
// element size (2 for the bf16 logits, 4 cast to fp32): forward 4e bytes per logit,
// backward e + 4e; the fp32 cast adds 2 read and 4 written forward, and its backward casts
// the gradient back to bf16 (4 read, 2 written): torch 8 and 10, torch_fp32 22 and 26.
KernelWork StepBuilder::LogitsWork(bool backward) const {
  constexpr double kFusedForwardBytesPerLogit = 26, kUnfusedForwardBytesPerLogit = 38;
  constexpr double kBackwardBytesPerLogit = 14;
  constexpr double kTeForwardBytesPerLogit = 6, kTeBackwardBytesPerLogit = 4;
  constexpr double kTorchCastForwardBytesPerLogit = 6, kTorchCastBackwardBytesPerLogit = 6;
  const double logits = stages_.Logits();
  const double flops = LogitFlops(m_, shape_) * (backward ? 2 : 1);
  double bytes =
      t_.cross_entropy_fusion ? kFusedForwardBytesPerLogit : kUnfusedForwardBytesPerLogit;
  if (backward) bytes = kBackwardBytesPerLogit;
  if (t_.cross_entropy_fusion) {
    switch (t_.cross_entropy_impl) {
      case CrossEntropyImpl::kTe:
        bytes = backward ? kTeBackwardBytesPerLogit : kTeForwardBytesPerLogit;
        break;
      case CrossEntropyImpl::kTorch:
      case CrossEntropyImpl::kTorchFp32: {
        const bool fp32 = t_.cross_entropy_impl == CrossEntropyImpl::kTorchFp32;
        const double e = fp32 ? 4 : 2;  // log_softmax's element size
        bytes = backward ? e + 4 * e : 4 * e;
        if (fp32)
          bytes += backward ? kTorchCastBackwardBytesPerLogit : kTorchCastForwardBytesPerLogit;
        break;
      }
      case CrossEntropyImpl::kNative:
        break;
    }
  }
  return KernelWork{flops, logits * bytes, 1, backward ? logits_bwd_id_ : logits_fwd_id_};
}

// The embedding, on the first virtual stage.
void StepBuilder::ForwardHead(RankState& st, int vs, int mb) {
  if (!IsFirst(vs)) return;
  AwaitParamBucket(st, -1);
  GatherParams(st, EmbeddingParamsLocal(), -1, mb, false);
  Compute(st, Tag::kEmbeddingFwd, KernelWork{0, 2 * ActBytes(Sbh())}, -1, mb);
  ReleaseParams(st, EmbeddingParamsLocal(), -1, false);
}

// The output layer, the loss and the MTP modules, on the last virtual stage.
void StepBuilder::ForwardTail(RankState& st, int vs, int mb) {
  if (!IsLast(vs)) return;
  AwaitParamBucket(st, m_.AllLayers());  // the output layer's slot
  GatherParams(st, EmbeddingParamsLocal(), -1, mb, false);
  Memory(st, MemCategory::kActivations, LogitActBytes());
  Compute(st, Tag::kLogitsFwd, LogitsWork(), -1, mb);
  ReleaseParams(st, EmbeddingParamsLocal(), -1, false);
  MtpForward(st, mb);
  // Megatron-LM's loss_func (pretrain_gpt.py @ core_r0.8.0): `assert not loss[0].isnan()`
  // under --check-for-nan-in-loss-and-grad, a host-device synchronisation per micro-batch.
  if (policy_.check_for_nan && st.last_compute) st.host.Sync(prog_, {*st.last_compute}, -1, mb);
}

// The MTP modules', the loss's and the output layer's backward, on the last virtual stage.
void StepBuilder::BackwardHead(RankState& st, int vs, int mb) {
  if (!IsLast(vs)) return;
  MtpBackward(st, mb);
  const KernelWork w = LogitsWork(/*backward=*/true);
  GatherParams(st, EmbeddingParamsLocal(), -1, mb, true);
  Compute(st, Tag::kLogitsBwd, w, -1, mb);
  Memory(st, MemCategory::kActivations, -LogitActBytes());
  ReleaseParams(st, EmbeddingParamsLocal(), -1, true, 0, mb);
  if (stages_.HoldsOutput(st.stage)) {
    UnshardedGrads(st, EmbeddingParamsLocal(), 0, mb, true);
    ReduceGradients(st, EmbeddingParamsLocal(), mb == micro_batches_ - 1, false);
    UnshardedGrads(st, EmbeddingParamsLocal(), 0, mb, false);
  }
}

// Megatron-Core's word embedding (VocabParallelEmbedding: F.embedding, layers.py @
// core_r0.8.0) gets a dense gradient every backward: PyTorch's embedding_dense_backward_cuda
// zero-fills a [vocab/tp, hidden] gradient (aten/src/ATen/native/cuda/Embedding.cu,
// `at::zeros({num_weights, stride})`) and scatters the tokens' rows into it; the DDP's
// gradient hook then adds it to the main gradient (`param.main_grad.add_(param.grad.data)`,
// distributed_data_parallel.py: the linear layers' weight-gradient GEMMs accumulate there
// themselves). Bytes per embedding parameter: 2 written by the fill, 2 read by the add, and
// the main gradient read and written. Other frameworks and JAX-style plans: 0 (not modelled).
double StepBuilder::EmbeddingGradBytes() const {
  if (policy_.framework != Framework::kMegatron || !p_.jax.Empty()) return 0;
  return EmbeddingParamsLocal() * (2 * kWeightBytesPerParam + 2 * GradientBytesPerParam(t_));
}

// The embedding's backward and its gradients' reduction, on the first virtual stage.
void StepBuilder::BackwardTail(RankState& st, int vs, int mb) {
  if (!IsFirst(vs)) return;
  GatherParams(st, EmbeddingParamsLocal(), -1, mb, true);
  const double grad = EmbeddingGradBytes();  // + the fill and the add: two more kernels
  Compute(st, Tag::kEmbeddingBwd, KernelWork{0, 4 * ActBytes(Sbh()) + grad, grad > 0 ? 3 : 1}, -1,
          mb);
  ReleaseParams(st, EmbeddingParamsLocal(), -1, true, 0, mb);
  UnshardedGrads(st, EmbeddingParamsLocal(), 0, mb, true);
  ReduceGradients(st, EmbeddingParamsLocal(), mb == micro_batches_ - 1, true);
  UnshardedGrads(st, EmbeddingParamsLocal(), 0, mb, false);
}

// The projection of an MTP module (norms of the hidden state and of the next token's
// embedding, concatenated, 2h -> h), split by TP; the norms' traffic as element-wise bytes.
KernelWork StepBuilder::MtpProjectionWork() const {
  return KernelWork{MtpProjectionFlops(m_, shape_) / p_.tp, 6 * ActBytes(Sbh()), 3,
                    mtp_projection_id_};
}

// Each MTP module (DeepSeek-V3, arXiv 2412.19437, Sec. 2.2): projection, its layer
// (indices model layers ..), and its own logits over the shared output layer, whose
// fp32 logits stay allocated until its backward.
void StepBuilder::MtpForward(RankState& st, int mb) {
  for (int layer = stages_.MtpBegin(); layer < stages_.MtpEnd(); ++layer) {
    const LocalParams& params = stages_.LayerParams(layer);
    AwaitParamBucket(st, layer);
    GatherParams(st, params.dense, layer, mb, false, params.expert);
    Compute(st, Tag::kMlpFwd, MtpProjectionWork(), layer, mb);
    LayerForward(st, layer, mb, false);
    ReleaseParams(st, params.dense, layer, false, params.expert);
    Memory(st, MemCategory::kActivations, LogitActBytes());
    Compute(st, Tag::kLogitsFwd, LogitsWork(), layer, mb);
  }
}

void StepBuilder::MtpBackward(RankState& st, int mb) {
  for (int layer = stages_.MtpEnd() - 1; layer >= stages_.MtpBegin(); --layer) {
    Compute(st, Tag::kLogitsBwd, LogitsWork(/*backward=*/true), layer, mb);
    Memory(st, MemCategory::kActivations, -LogitActBytes());
    LayerBackward(st, layer, mb, /*flush=*/false);
    KernelWork projection = MtpProjectionWork();
    projection.flops *= 2;
    projection.shapes = mtp_projection_bwd_id_;
    Compute(st, Tag::kMlpBwd, projection, layer, mb);
  }
}

}  // namespace meshsim::schedule_internal

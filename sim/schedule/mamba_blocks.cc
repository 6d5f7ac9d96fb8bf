// A hybrid model's Mamba-2 mixer (one block, TP-split like attention and ending in the
// same TP collective; its ops carry the attention tags: it is the layer's sequence
// mixer), and the multi-token-prediction modules that Megatron-LM runs on the last
// pipeline stage after the output layer.
#include "sim/schedule/step_builder_impl.h"

namespace meshsim::schedule_internal {

void StepBuilder::MambaForward(RankState& st, int layer, int mb, bool recompute) {
  BlockForward(st, stages_.Mamba(), mamba_ids_,
               recompute ? Tag::kAttentionRecompute : Tag::kAttentionFwd, layer, mb, recompute);
}

void StepBuilder::MambaBackward(RankState& st, int layer, int mb) {
  BlockBackward(st, stages_.Mamba(), mamba_ids_, Tag::kAttentionBwd, Tag::kAttentionWgrad, layer,
                mb);
  Memory(st, MemCategory::kActivations, -stages_.Mamba().stored_act_bytes);
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

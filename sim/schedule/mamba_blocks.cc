// A hybrid model's Mamba-2 mixer (one block, TP-split like attention and ending in the
// same TP collective; its ops carry the attention tags: it is the layer's sequence
// mixer).
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

}  // namespace meshsim::schedule_internal

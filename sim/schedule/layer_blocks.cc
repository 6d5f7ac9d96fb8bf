// Attention (with ring attention under context parallelism) and MLP blocks of a layer,
// with their tensor-parallel collectives.
#include <optional>

#include "sim/schedule/step_builder_impl.h"

namespace meshsim::schedule_internal {

void StepBuilder::TpCollective(RankState& st, CommOp op, int layer, int mb) {
  if (p_.tp == 1) return;
  Collective(st, Stream::kTp, Channel::kTp, Tag::kTpComm, op, st.tp_group,
             layer_.attention.tp_comm_bytes, layer, mb);
}

// One block's forward (or its recomputation): [all-gather] compute [reduce].
void StepBuilder::BlockForward(RankState& st, const BlockCost& b, const PassShapeIds& ids, Tag tag,
                               int layer, int mb, bool recompute, BlockEdges e) {
  if (ids.overlap >= 0) {
    OverlappedBlockForward(st, b, ids, tag, layer, mb, recompute, e);
    return;
  }
  const bool sp = shape_.sequence_parallel;
  if (sp && e.gather) TpCollective(st, CommOp::kAllGather, layer, mb);
  if (!recompute) Memory(st, MemCategory::kActivations, b.stored_act_bytes);
  const KernelWork w = recompute ? KernelWork{b.recompute_flops, b.recompute_bytes,
                                              b.recompute_kernels, ids.recompute}
                                 : KernelWork{b.fwd_flops, b.fwd_bytes, b.fwd_kernels, ids.fwd};
  Compute(st, tag, w, layer, mb, recompute ? b.recompute_flops : 0);
  if (recompute && shape_.xla_remat) return;  // dead code under XLA (LayerShape::xla_remat)
  if (e.reduce) TpCollective(st, sp ? CommOp::kReduceScatter : CommOp::kAllReduce, layer, mb);
}

// One block's backward as Megatron-LM runs it: the input-gradient GEMMs (dgrad), then
// the weight-gradient GEMMs (wgrad) while the input gradient's TP reduction runs
// (--async-tensor-model-parallel-allreduce; with sequence parallelism a reduce-scatter,
// and the stored, sequence-split input is re-all-gathered for wgrad during dgrad).
// Backward FLOPs are twice the forward's, split evenly between dgrad and wgrad.
void StepBuilder::BlockBackward(RankState& st, const BlockCost& b, const PassShapeIds& ids,
                                Tag dgrad_tag, Tag wgrad_tag, int layer, int mb, BlockEdges e) {
  if (ids.overlap >= 0) {
    OverlappedBlockBackward(st, b, ids, dgrad_tag, wgrad_tag, layer, mb, e);
    return;
  }
  const bool sp = shape_.sequence_parallel && e.gather;
  if (sp) TpCollective(st, CommOp::kAllGather, layer, mb);  // output gradient
  std::optional<OpId> input_gather;
  if (sp && !RecomputedInputGathered()) {
    input_gather = Collective(st, Stream::kTp, Channel::kTp, Tag::kTpComm, CommOp::kAllGather,
                              st.tp_group, layer_.attention.tp_comm_bytes, layer, mb, false);
  }
  Compute(st, dgrad_tag,
          KernelWork{b.fwd_flops, b.fwd_bytes + b.bwd_extra_bytes,
                     b.fwd_kernels + b.bwd_extra_kernels, ids.dgrad},
          layer, mb);
  std::optional<OpId> reduce;
  if (p_.tp > 1 && e.reduce) {
    reduce = Collective(st, Stream::kTp, Channel::kTp, Tag::kTpComm,
                        shape_.sequence_parallel ? CommOp::kReduceScatter : CommOp::kAllReduce,
                        st.tp_group, layer_.attention.tp_comm_bytes, layer, mb, false);
  }
  MarkInputGradient(st, reduce);
  if (input_gather) st.wait.push_back(*input_gather);
  Compute(st, wgrad_tag, KernelWork{b.fwd_flops, b.fwd_bytes, b.weight_kernels, ids.wgrad}, layer,
          mb);
  if (reduce) st.wait.push_back(*reduce);
}

void StepBuilder::MarkInputGradient(RankState& st, const std::optional<OpId>& reduce) {
  st.input_grad = reduce ? reduce : st.last_compute;
}

// Ring attention (Megatron-Core's context parallelism, run by Transformer Engine's
// AttnFuncWithCPAndKVP2P): the attention core runs in cp blocks, one per K/V chunk; before
// computing on the chunk it holds, a rank passes it on to the next rank of the ring (a ring
// shift on the CP stream: K/V forward, K/V and their gradients backward) and computes the
// next block once the previous shift has delivered, so transfers overlap the blocks. Each
// block then merges its partial result into the running one (RingMergeBytes: one fused
// element-wise kernel forward, the dQ and the dK/dV updates backward), in the block's op.
void StepBuilder::RingAttention(RankState& st, Tag tag, double flops, double bytes, bool backward,
                                int layer, int mb, double recompute_flops, int32_t shapes) {
  const int n = p_.cp;
  const double kv_bytes = (backward ? 2 : 1) * KvBlockBytes(m_, shape_);
  const double merge_bytes = RingMergeBytes(m_, shape_, backward);
  const int kernels = backward ? 3 : 2;  // the attention kernel and the merges
  std::optional<OpId> delivered;
  for (int i = 0; i < n; ++i) {
    std::optional<OpId> shift;
    if (i + 1 < n) {
      shift = Collective(st, Stream::kCp, Channel::kCp, Tag::kCpComm, CommOp::kRingShift,
                         st.cp_group, kv_bytes, layer, mb, /*blocking=*/false);
    }
    if (delivered) st.wait.push_back(*delivered);
    Compute(st, tag, KernelWork{flops / n, bytes / n + merge_bytes, kernels, shapes}, layer, mb,
            recompute_flops / n);
    delivered = shift;
  }
}

void StepBuilder::AttentionForward(RankState& st, int layer, int mb, bool recompute, BlockEdges e) {
  const BlockCost& b = stages_.Attention(layer);
  const bool windowed = m_.IsWindowedLayer(layer);
  const PassShapeIds& ids = windowed ? windowed_attention_ids_ : attention_ids_;
  const Tag tag = recompute ? Tag::kAttentionRecompute : Tag::kAttentionFwd;
  if (p_.cp == 1) {
    BlockForward(st, b, ids, tag, layer, mb, recompute, e);
    return;
  }
  const int32_t ring = windowed ? windowed_ring_fwd_id_ : ring_fwd_id_;
  if (ids.overlap >= 0) {
    OverlappedRingAttentionForward(st, b, ids.overlap, tag, layer, mb, recompute, ring);
    return;
  }
  const bool sp = shape_.sequence_parallel;
  if (sp) TpCollective(st, CommOp::kAllGather, layer, mb);
  if (!recompute) Memory(st, MemCategory::kActivations, b.stored_act_bytes);
  // Projections before and after the core; the core in ring blocks.
  const KernelWork edge{(b.fwd_flops - b.core_flops) / 2, (b.fwd_bytes - b.core_bytes) / 2,
                        b.fwd_kernels / 2, edge_fwd_id_};
  const double edge_recompute = recompute ? edge.flops : 0;
  Compute(st, tag, edge, layer, mb, edge_recompute);
  RingAttention(st, tag, b.core_flops, b.core_bytes, /*backward=*/false, layer, mb,
                recompute ? b.core_flops : 0, ring);
  Compute(st, tag, edge, layer, mb, edge_recompute);
  TpCollective(st, sp ? CommOp::kReduceScatter : CommOp::kAllReduce, layer, mb);
}

void StepBuilder::AttentionBackward(RankState& st, int layer, int mb, BlockEdges e) {
  const BlockCost& b = stages_.Attention(layer);
  const bool windowed = m_.IsWindowedLayer(layer);
  const PassShapeIds& ids = windowed ? windowed_attention_ids_ : attention_ids_;
  if (RecomputesInAttentionBackward(p_.recompute, p_.recompute_modules, m_.IsMla())) {
    Compute(st, Tag::kAttentionRecompute,
            KernelWork{b.recompute_flops, b.recompute_bytes, b.recompute_kernels, ids.recompute},
            layer, mb, b.recompute_flops);
  }
  if (p_.cp == 1) {
    BlockBackward(st, b, ids, Tag::kAttentionBwd, Tag::kAttentionWgrad, layer, mb, e);
  } else if (ids.overlap >= 0) {
    OverlappedRingAttentionBackward(st, b, ids.overlap, layer, mb,
                                    windowed ? windowed_ring_bwd_id_ : ring_bwd_id_);
  } else {
    // dgrad of the projections, the core's backward in ring blocks (K/V and their
    // gradients travel: twice the bytes), then wgrad while the TP reduction runs.
    const bool sp = shape_.sequence_parallel;
    if (sp) TpCollective(st, CommOp::kAllGather, layer, mb);
    std::optional<OpId> input_gather;
    if (sp) {
      input_gather = Collective(st, Stream::kTp, Channel::kTp, Tag::kTpComm, CommOp::kAllGather,
                                st.tp_group, b.tp_comm_bytes, layer, mb, false);
    }
    const double edge_flops = b.fwd_flops - b.core_flops, edge_bytes = b.fwd_bytes - b.core_bytes;
    Compute(st, Tag::kAttentionBwd,
            KernelWork{edge_flops, edge_bytes, b.fwd_kernels / 2, edge_dgrad_id_}, layer, mb);
    RingAttention(st, Tag::kAttentionBwd, 2 * b.core_flops, 2 * b.core_bytes,
                  /*backward=*/true, layer, mb, 0, windowed ? windowed_ring_bwd_id_ : ring_bwd_id_);
    std::optional<OpId> reduce;
    if (p_.tp > 1) {
      reduce = Collective(st, Stream::kTp, Channel::kTp, Tag::kTpComm,
                          sp ? CommOp::kReduceScatter : CommOp::kAllReduce, st.tp_group,
                          b.tp_comm_bytes, layer, mb, false);
    }
    MarkInputGradient(st, reduce);
    if (input_gather) st.wait.push_back(*input_gather);
    Compute(st, Tag::kAttentionWgrad,
            KernelWork{edge_flops, edge_bytes, b.weight_kernels, edge_wgrad_id_}, layer, mb);
    if (reduce) st.wait.push_back(*reduce);
  }
  Memory(st, MemCategory::kActivations, -b.stored_act_bytes);
}

}  // namespace meshsim::schedule_internal

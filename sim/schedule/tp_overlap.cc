// Transformer Engine's tensor-parallel communication overlap (Megatron-LM
// --tp-comm-overlap, TE "userbuffers"), as real ops of the step program.
//
// With sequence parallelism, each dense block (attention, MLP) of a layer
//   forward:  all-gather(X) -> first GEMM (QKV, FC1) -> ... -> last GEMM (proj, FC2)
//             -> reduce-scatter(Y)
//   backward: all-gather(dY) -> dgrad of the last GEMM -> ... ; the input's re-gather for
//             wgrad and the input gradient's reduce-scatter (bulk overlap, as without it)
// runs the all-gather as a ring exchange: the GEMM is cut into tp chunks of T/tp tokens;
// chunk 0 computes on the rank's own slice while the slice it holds is passed to the next
// rank (a ring shift of 1/tp of the tensor on the TP stream), and chunk i+1 starts once
// shift i has delivered (TE synchronises each step). The reduce-scatter runs the other
// way: after GEMM chunk i its partial sum is passed on (shift i), accumulated by the
// receiver, and the block ends when the last shift has delivered; the GEMM chunks do not
// wait for the shifts. The exposed time is what the replay leaves: about
// (tp - 1) * max(0, shift - chunk) per exchange instead of the whole collective, and the
// interference model slows the chunks that run beside a shift.
//
// XLA's collective matmul (a JAX-style plan's plan.xla.collective_matmul) is the same
// decomposition, run bidirectionally: "to permute bidirectionally, we just split the
// blocks in half and send each half in each direction" (JAX's shard_map notebook,
// "Collective matmul"), so that both directions of the ring's links carry data. Each step
// is then two ring shifts of half the slice at once, the second over the TP group in
// reverse order on its own stream (Stream::kTpBack): half the time of a one-way shift
// where the links run full duplex (a torus), with the same chunks.
#include <algorithm>
#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

#include "sim/schedule/step_builder_impl.h"

namespace meshsim::schedule_internal {
namespace {

// Transformer Engine issues the chunk GEMMs of a comm-GEMM overlap round-robin on
// min(NVTE_COMM_OVERLAP_MAX_STREAMS = 3, chunks) compute streams (`_stream_compute[i %
// _stream_compute.size()]` in split_overlap_ag / split_overlap_rs of
// transformer_engine/pytorch/csrc/comm_gemm_overlap.h, TE 1.x, NVIDIA/TransformerEngine @
// 00671635): a chunk starts once its slice has arrived, beside the previous ones, so the
// partial last wave of one chunk is filled by the next. XLA's collective matmul runs its
// steps one after the other.
constexpr int kTeComputeStreams = 3;

// Host launches of chunk `i` of a chunked GEMM and of the exchanges beside it. TE runs the
// whole overlap (every chunk GEMM, the userbuffers send/recv and the events between them)
// in one C++ loop (`for (int i = 0; i < _tp_size; i++)` around te_gemm and
// userbuffers_send / userbuffers_recv in split_overlap_ag and split_overlap_rs,
// transformer_engine/pytorch/csrc/comm_gemm_overlap.h) behind one Python-level call per
// GEMM (`fn = ub.split_overlap_ag_p2p` ... `fn(*args)`, cpp_extensions/gemm.py; both at
// TE v1.8, July 2024, of the time of Megatron-Core r0.8.0). The host pays one eager
// op's launch (cluster.host.launch_us, the PyTorch op's whole CPU path) for the call,
// charged to chunk 0; the loop issues the later chunks and the ring shifts at
// cudaLaunchKernel's 1-3 us each (cluster_spec.h's source), which meshsim does not count.
// XLA's collective matmul is one compiled program: the same.
int ChunkLaunches(int i) { return i == 0 ? -1 : 0; }
constexpr int kShiftLaunches = 0;

// `s` with every GEMM cut to `tokens / chunks` rows (m is the token dimension of forward
// and dgrad GEMMs, see layer_kernels.h), run on `streams` streams (GemmShape::streams).
KernelShapes Chunked(KernelShapes s, int chunks, int streams) {
  for (GemmShape& g : s.gemms) {
    g.m /= chunks;
    g.streams = std::min(streams, chunks);
  }
  return s;
}

KernelShapes Slice(const KernelShapes& s, size_t begin, size_t end) {
  KernelShapes out;
  out.gemms.assign(s.gemms.begin() + static_cast<std::ptrdiff_t>(begin),
                   s.gemms.begin() + static_cast<std::ptrdiff_t>(end));
  out.fraction = s.fraction;
  return out;
}

}  // namespace

void StepBuilder::AddOverlapShapes(const LayerKernels& k) {
  attention_ids_.overlap = AddOverlapShapes(k.attention.block);
  if (p_.cp > 1) AddRingOverlapShapes(k.attention, attention_ids_.overlap);
  mlp_ids_.overlap = AddOverlapShapes(k.mlp);
  windowed_attention_ids_.overlap = attention_ids_.overlap;
  if (m_.sliding_window > 0) {
    const LayerKernels w = TransformerLayerKernels(m_, stages_.windowed_shape());
    windowed_attention_ids_.overlap = AddOverlapShapes(w.attention.block);
    if (p_.cp > 1) AddRingOverlapShapes(w.attention, windowed_attention_ids_.overlap);
  }
}

// Under context parallelism: the projections' GEMMs between the chunked ones (MLA's), and
// the dgrad GEMMs after the chunked one, without the core (which runs in ring blocks, its
// GEMMs too when the attention is unfused): from the ring path's edge kernels, whole.
void StepBuilder::AddRingOverlapShapes(const AttentionKernels& a, int32_t overlap) {
  OverlapShapes& o = overlap_[overlap];
  KernelShapes gemms = Slice(a.edge_fwd, 1, a.edge_fwd.gemms.size() - 1);
  gemms.fraction = 1;
  o.body_gemms_flops = gemms.Flops();
  if (!gemms.Empty()) o.body_gemms = prog_.AddShapes(std::move(gemms));
  KernelShapes rest = Slice(a.edge_dgrad, 1, a.edge_dgrad.gemms.size());
  rest.fraction = 1;
  o.dgrad_rest_gemms_flops = rest.Flops();
  if (!rest.Empty()) o.dgrad_rest_gemms = prog_.AddShapes(std::move(rest));
}

// The first forward GEMM (head), the last (tail), and the rest (body: GEMMs between and
// the attention core); the first dgrad GEMM and the rest. Precondition: the forward has
// at least two GEMMs (every dense block does), the dgrad at least one.
int32_t StepBuilder::AddOverlapShapes(const PassKernels& k) {
  const int n = p_.tp;
  const int streams = p_.jax.Empty() ? kTeComputeStreams : 1;
  const size_t g = k.fwd.gemms.size();
  OverlapShapes o;
  KernelShapes head = Chunked(Slice(k.fwd, 0, 1), n, streams);
  KernelShapes tail = Chunked(Slice(k.fwd, g - 1, g), n, streams);
  KernelShapes body = Slice(k.fwd, 1, g - 1);
  body.attention = k.fwd.attention;
  o.head_chunk_flops = head.Flops();
  o.tail_chunk_flops = tail.Flops();
  o.body_flops = body.Flops();
  o.head_chunk = prog_.AddShapes(std::move(head));
  o.tail_chunk = prog_.AddShapes(std::move(tail));
  if (!body.Empty()) o.body = prog_.AddShapes(std::move(body));
  KernelShapes dgrad_chunk = Chunked(Slice(k.dgrad, 0, 1), n, streams);
  KernelShapes rest = Slice(k.dgrad, 1, k.dgrad.gemms.size());
  rest.attention = k.dgrad.attention;
  o.dgrad_chunk_flops = dgrad_chunk.Flops();
  o.dgrad_rest_flops = rest.Flops();
  o.dgrad_chunk = prog_.AddShapes(std::move(dgrad_chunk));
  if (!rest.Empty()) o.dgrad_rest = prog_.AddShapes(std::move(rest));
  overlap_.push_back(o);
  return static_cast<int32_t>(overlap_.size() - 1);
}

// One step of a ring exchange: the shift of `bytes` to the next rank of the TP group;
// bidirectional (tp_group_back set), two shifts of half of it at once, one each way round
// the ring, both of which the next step waits for.
std::vector<OpId> StepBuilder::ShiftStep(RankState& st, double bytes, int layer, int mb) {
  std::vector<OpId> shifts;
  const bool both = !st.tp_group_back.empty();
  const double each = both ? bytes / 2 : bytes;
  shifts.push_back(Collective(st, Stream::kTp, Channel::kTp, Tag::kTpComm, CommOp::kRingShift,
                              GroupId(st, st.tp_group), each, layer, mb, /*blocking=*/false,
                              kShiftLaunches));
  if (both) {
    shifts.push_back(Collective(st, Stream::kTpBack, Channel::kTp, Tag::kTpComm, CommOp::kRingShift,
                                GroupId(st, st.tp_group_back), each, layer, mb, false,
                                kShiftLaunches));
  }
  return shifts;
}

// The all-gather as a ring exchange under tp chunks of a GEMM: before chunk i the slice
// held is passed on; chunk i + 1 waits for it.
void StepBuilder::GatherUnderChunks(RankState& st, Tag tag, KernelWork chunk, int layer, int mb,
                                    bool recompute) {
  const int n = p_.tp;
  const double bytes = layer_.attention.tp_comm_bytes / n;
  std::vector<OpId> delivered;
  for (int i = 0; i < n; ++i) {
    std::vector<OpId> shift;
    if (i + 1 < n) shift = ShiftStep(st, bytes, layer, mb);
    st.wait.insert(st.wait.end(), delivered.begin(), delivered.end());
    Compute(st, tag, chunk, layer, mb, recompute ? chunk.flops : 0, ChunkLaunches(i));
    delivered = std::move(shift);
  }
}

// The reduce-scatter as a ring exchange under tp chunks of a GEMM: after chunk i < tp - 1
// its partial sum is passed on; the next compute waits for the last shift.
void StepBuilder::ReduceUnderChunks(RankState& st, Tag tag, KernelWork chunk, int layer, int mb,
                                    bool recompute) {
  const int n = p_.tp;
  const double bytes = layer_.attention.tp_comm_bytes / n;
  std::vector<OpId> last;
  for (int i = 0; i < n; ++i) {
    Compute(st, tag, chunk, layer, mb, recompute ? chunk.flops : 0, ChunkLaunches(i));
    if (i + 1 < n) last = ShiftStep(st, bytes, layer, mb);
  }
  st.wait.insert(st.wait.end(), last.begin(), last.end());
}

// The tp chunks of a GEMM with no exchange under them (a parallel block's edge that
// another block's collective serves: BlockEdges).
void StepBuilder::ChunksAlone(RankState& st, Tag tag, KernelWork chunk, int layer, int mb,
                              bool recompute) {
  for (int i = 0; i < p_.tp; ++i) {
    Compute(st, tag, chunk, layer, mb, recompute ? chunk.flops : 0, ChunkLaunches(i));
  }
}

// BlockForward under overlap: kernels are one per GEMM chunk, the rest in the body; the
// element-wise traffic is the body's. Full recomputation re-runs the same ops (under XLA less
// the tail: LayerShape::xla_remat).
void StepBuilder::OverlappedBlockForward(RankState& st, const BlockCost& b, const PassShapeIds& ids,
                                         Tag tag, int layer, int mb, bool recompute, BlockEdges e) {
  const OverlapShapes& o = overlap_[ids.overlap];
  if (!recompute) Memory(st, MemCategory::kActivations, b.stored_act_bytes);
  const double bytes = recompute ? b.recompute_bytes : b.fwd_bytes;
  const int kernels = std::max(0, (recompute ? b.recompute_kernels : b.fwd_kernels) - 2);
  const KernelWork head{o.head_chunk_flops, 0, 1, o.head_chunk};
  if (e.gather) {
    GatherUnderChunks(st, tag, head, layer, mb, recompute);
  } else {
    ChunksAlone(st, tag, head, layer, mb, recompute);
  }
  if (o.body_flops > 0 || bytes > 0 || kernels > 0) {
    Compute(st, tag, KernelWork{o.body_flops, bytes, kernels, o.body}, layer, mb,
            recompute ? o.body_flops : 0);
  }
  if (recompute && shape_.xla_remat) return;  // the tail is dead code under XLA
  const KernelWork tail{o.tail_chunk_flops, 0, 1, o.tail_chunk};
  if (e.reduce) {
    ReduceUnderChunks(st, tag, tail, layer, mb, recompute);
  } else {
    ChunksAlone(st, tag, tail, layer, mb, recompute);
  }
}

// BlockBackward under overlap: the output gradient's all-gather under the first dgrad
// GEMM's chunks; the rest as BlockBackward (the input's re-gather beside the rest of
// dgrad, the input gradient's reduce-scatter beside wgrad: TE's bulk overlap).
void StepBuilder::OverlappedBlockBackward(RankState& st, const BlockCost& b,
                                          const PassShapeIds& ids, Tag dgrad_tag, Tag wgrad_tag,
                                          int layer, int mb, BlockEdges e) {
  const OverlapShapes& o = overlap_[ids.overlap];
  const KernelWork dgrad_chunk{o.dgrad_chunk_flops, 0, 1, o.dgrad_chunk};
  if (e.gather) {
    GatherUnderChunks(st, dgrad_tag, dgrad_chunk, layer, mb, false);
  } else {
    ChunksAlone(st, dgrad_tag, dgrad_chunk, layer, mb, false);
  }
  const double bytes = layer_.attention.tp_comm_bytes;
  std::optional<OpId> input_gather;
  if (e.gather && !RecomputedInputGathered()) {
    input_gather = Collective(st, Stream::kTp, Channel::kTp, Tag::kTpComm, CommOp::kAllGather,
                              st.tp_group, bytes, layer, mb, false);
  }
  Compute(st, dgrad_tag,
          KernelWork{o.dgrad_rest_flops, b.fwd_bytes + b.bwd_extra_bytes,
                     std::max(0, b.fwd_kernels - 1) + b.bwd_extra_kernels, o.dgrad_rest},
          layer, mb);
  std::optional<OpId> reduce;
  if (e.reduce) {
    reduce = Collective(st, Stream::kTp, Channel::kTp, Tag::kTpComm, CommOp::kReduceScatter,
                        st.tp_group, bytes, layer, mb, false);
  }
  MarkInputGradient(st, reduce);
  if (input_gather) st.wait.push_back(*input_gather);
  Compute(st, wgrad_tag, KernelWork{b.fwd_flops, b.fwd_bytes, b.weight_kernels, ids.wgrad}, layer,
          mb);
  if (reduce) st.wait.push_back(*reduce);
}

// The attention block under context parallelism with the overlap, as Megatron-Bridge's
// Llama 3.1 405B configurations run it (userbuffers_*_h16384_tp8_cp2 in
// megatron/bridge/training/comm_overlap.py: qkv_fprop and proj_dgrad ring-exchange, TE's
// linear layers overlapping whatever attention core runs between them): the input's
// all-gather under the QKV GEMM's chunks, the element-wise work (and MLA's projections
// between) as one op, the core in ring blocks, the reduce-scatter under the output
// projection's chunks.
void StepBuilder::OverlappedRingAttentionForward(RankState& st, const BlockCost& b, int32_t overlap,
                                                 Tag tag, int layer, int mb, bool recompute,
                                                 int32_t ring_shapes) {
  const OverlapShapes& o = overlap_[overlap];
  if (!recompute) Memory(st, MemCategory::kActivations, b.stored_act_bytes);
  GatherUnderChunks(st, tag, KernelWork{o.head_chunk_flops, 0, 1, o.head_chunk}, layer, mb,
                    recompute);
  const double bytes = b.fwd_bytes - b.core_bytes;
  const int kernels = std::max(0, b.fwd_kernels - 3);
  if (o.body_gemms_flops > 0 || bytes > 0 || kernels > 0) {
    Compute(st, tag, KernelWork{o.body_gemms_flops, bytes, kernels, o.body_gemms}, layer, mb,
            recompute ? o.body_gemms_flops : 0);
  }
  RingAttention(st, tag, b.core_flops, b.core_bytes, /*backward=*/false, layer, mb,
                recompute ? b.core_flops : 0, ring_shapes);
  ReduceUnderChunks(st, tag, KernelWork{o.tail_chunk_flops, 0, 1, o.tail_chunk}, layer, mb,
                    recompute);
}

// Its backward: the output gradient's all-gather under the output projection's dgrad
// chunks, the core's backward in ring blocks, the rest of dgrad beside the input's
// re-gather, then wgrad beside the input gradient's reduce-scatter (bulk overlap).
void StepBuilder::OverlappedRingAttentionBackward(RankState& st, const BlockCost& b,
                                                  int32_t overlap, int layer, int mb,
                                                  int32_t ring_shapes) {
  const OverlapShapes& o = overlap_[overlap];
  GatherUnderChunks(st, Tag::kAttentionBwd, KernelWork{o.dgrad_chunk_flops, 0, 1, o.dgrad_chunk},
                    layer, mb, false);
  std::optional<OpId> input_gather;
  if (!RecomputedInputGathered()) {
    input_gather = Collective(st, Stream::kTp, Channel::kTp, Tag::kTpComm, CommOp::kAllGather,
                              st.tp_group, b.tp_comm_bytes, layer, mb, false);
  }
  RingAttention(st, Tag::kAttentionBwd, 2 * b.core_flops, 2 * b.core_bytes,
                /*backward=*/true, layer, mb, 0, ring_shapes);
  const double edge_flops = b.fwd_flops - b.core_flops, edge_bytes = b.fwd_bytes - b.core_bytes;
  Compute(st, Tag::kAttentionBwd,
          KernelWork{o.dgrad_rest_gemms_flops, edge_bytes, std::max(0, b.fwd_kernels / 2 - 1),
                     o.dgrad_rest_gemms},
          layer, mb);
  const OpId reduce =
      Collective(st, Stream::kTp, Channel::kTp, Tag::kTpComm, CommOp::kReduceScatter, st.tp_group,
                 b.tp_comm_bytes, layer, mb, false);
  MarkInputGradient(st, reduce);
  if (input_gather) st.wait.push_back(*input_gather);
  Compute(st, Tag::kAttentionWgrad,
          KernelWork{edge_flops, edge_bytes, b.weight_kernels, edge_wgrad_id_}, layer, mb);
  st.wait.push_back(reduce);
}

}  // namespace meshsim::schedule_internal

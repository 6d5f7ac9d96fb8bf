#include "sim/schedule/step_builder.h"

#include <cassert>
#include <map>
#include <optional>
#include <tuple>

#include "sim/schedule/model_states.h"
#include "sim/schedule/pipeline_order.h"
#include "sim/workload/transformer.h"

namespace meshsim {
namespace {

// Kinds of collective sequence; the i-th collective of a kind on a group is the same
// instance on every member.
enum class Channel { kTp, kDp, kZeroGather, kPpActivation, kPpGradient, kTiedEmbedding };

class StepBuilder {
 public:
  StepBuilder(const ModelSpec& m, const PlanSpec& p, const TrainingSpec& t, const Mesh& mesh)
      : m_(m), p_(p), t_(t), mesh_(mesh), prog_(mesh.Size()) {
    shape_.seq = m.seq_len / p.cp;
    shape_.micro_batch = p.micro_batch;
    shape_.tp = p.tp;
    shape_.sequence_parallel = p.sequence_parallel && p.tp > 1;
    shape_.recompute = p.recompute;
    shape_.dtype = t.dtype;
    layer_ = TransformerLayerCost(m, shape_);
    layers_per_chunk_ = m.layers / (p.pp * p.virtual_stages);
    micro_batches_ = p.MicroBatches();
    nd_ = p.dp * p.cp;
  }

  Program Build(const std::vector<int>& ranks) {
    if (ranks.empty()) {
      for (int r = 0; r < mesh_.Size(); ++r) EmitRank(r);
    } else {
      for (int r : ranks) EmitRank(r);
    }
    prog_.Finalize();
    return std::move(prog_);
  }

 private:
  // State of the rank being emitted.
  struct RankState {
    int rank = 0;
    int stage = 0;
    std::vector<int> tp_group, grad_group;
    std::optional<OpId> last_compute;  // latest op on the compute stream
    std::vector<OpId> wait;            // deps for the next compute op
    std::optional<OpId> last_dp;       // latest gradient reduction
    double bucket_bytes = 0;           // gradient bytes not yet reduced
    std::map<std::tuple<int32_t, Channel>, int> seq;  // per-channel collective counter
    // ZeRO-3: the frees of the two most recent layer buffers; a gather waits for the older,
    // so at most two gathered layers (the one computing, the one prefetched) are live.
    std::optional<OpId> released[2];
  };

  int VirtualStage(int chunk, int stage) const { return chunk * p_.pp + stage; }
  bool IsFirst(int vs) const { return vs == 0; }
  bool IsLast(int vs) const { return vs == p_.pp * p_.virtual_stages - 1; }
  bool HoldsEmbedding(int stage) const { return stage == 0; }
  bool HoldsOutput(int stage) const {
    return stage == p_.pp - 1 && !(m_.tied_embeddings && p_.pp == 1);
  }
  double ActBytes(double elements) const { return elements * BytesPerElement(t_.dtype); }
  double EmbeddingParamsLocal() const { return EmbeddingParams(m_) / p_.tp; }
  double GradBytes(double params) const {
    return params * GradientBytesPerParam(t_);
  }

  // The collective instance shared by all members of `group` for this rank's next use.
  int32_t NextComm(RankState& st, Channel ch, CommOp op, const std::vector<int>& group,
                   double bytes) {
    const int32_t g = prog_.AddGroup(group);
    const auto key = std::make_tuple(g, ch);
    const int i = st.seq[key]++;
    auto& list = instances_[key];
    if (i == static_cast<int>(list.size())) list.push_back(prog_.AddComm(op, g, bytes));
    assert(prog_.comms()[list[i]].op == op && prog_.comms()[list[i]].bytes == bytes);
    return list[i];
  }

  OpId Compute(RankState& st, Tag tag, KernelWork w, int layer, int mb, double recompute = 0) {
    const OpId id = prog_.AddCompute(st.rank, tag, w, layer, mb, recompute);
    for (OpId d : st.wait) prog_.AddDep(d, id);
    st.wait.clear();
    st.last_compute = id;
    return id;
  }

  void Memory(RankState& st, MemCategory c, double bytes) {
    if (bytes == 0) return;
    const OpId id = prog_.AddMemory(st.rank, Stream::kCompute, c, bytes);
    st.last_compute = id;
  }

  // A collective on `stream` after the latest compute op; the next compute waits for it.
  OpId Collective(RankState& st, Stream stream, Channel ch, Tag tag, CommOp op,
                  const std::vector<int>& group, double bytes, int layer, int mb,
                  bool blocking = true) {
    const int32_t c = NextComm(st, ch, op, group, bytes);
    const OpId id = prog_.AddCommPart(st.rank, stream, c, tag, layer, mb);
    if (st.last_compute) prog_.AddDep(*st.last_compute, id);
    if (blocking) st.wait.push_back(id);
    return id;
  }

  void TpCollective(RankState& st, CommOp op, int layer, int mb) {
    if (p_.tp == 1) return;
    Collective(st, Stream::kTp, Channel::kTp, Tag::kTpComm, op, st.tp_group,
               layer_.attention.tp_comm_bytes, layer, mb);
  }

  // One block's forward (or its recomputation): [all-gather] compute [reduce].
  void BlockForward(RankState& st, const BlockCost& b, Tag tag, int layer, int mb, bool recompute) {
    const bool sp = shape_.sequence_parallel;
    if (sp) TpCollective(st, CommOp::kAllGather, layer, mb);
    if (!recompute) Memory(st, MemCategory::kActivations, b.stored_act_bytes);
    const KernelWork w = recompute
                             ? KernelWork{b.recompute_flops, b.recompute_bytes, b.recompute_kernels}
                             : KernelWork{b.fwd_flops, b.fwd_bytes, b.fwd_kernels};
    Compute(st, tag, w, layer, mb, recompute ? b.recompute_flops : 0);
    TpCollective(st, sp ? CommOp::kReduceScatter : CommOp::kAllReduce, layer, mb);
  }

  // One block's backward as Megatron-LM runs it: the input-gradient GEMMs (dgrad), then
  // the weight-gradient GEMMs (wgrad) while the input gradient's TP reduction runs
  // (--async-tensor-model-parallel-allreduce; with sequence parallelism a reduce-scatter,
  // and the stored, sequence-split input is re-all-gathered for wgrad during dgrad).
  // Backward FLOPs are twice the forward's, split evenly between dgrad and wgrad.
  void BlockBackward(RankState& st, const BlockCost& b, Tag dgrad_tag, Tag wgrad_tag, int layer,
                     int mb) {
    const bool sp = shape_.sequence_parallel;
    if (sp) TpCollective(st, CommOp::kAllGather, layer, mb);  // output gradient
    std::optional<OpId> input_gather;
    if (sp) {
      input_gather = Collective(st, Stream::kTp, Channel::kTp, Tag::kTpComm, CommOp::kAllGather,
                                st.tp_group, layer_.attention.tp_comm_bytes, layer, mb, false);
    }
    Compute(st, dgrad_tag, KernelWork{b.fwd_flops, b.fwd_bytes, b.fwd_kernels}, layer, mb);
    std::optional<OpId> reduce;
    if (p_.tp > 1) {
      reduce = Collective(st, Stream::kTp, Channel::kTp, Tag::kTpComm,
                          sp ? CommOp::kReduceScatter : CommOp::kAllReduce, st.tp_group,
                          layer_.attention.tp_comm_bytes, layer, mb, false);
    }
    if (input_gather) st.wait.push_back(*input_gather);
    Compute(st, wgrad_tag, KernelWork{b.fwd_flops, b.fwd_bytes, b.weight_kernels}, layer, mb);
    if (reduce) st.wait.push_back(*reduce);
  }

  // ZeRO-3: all-gather `params` (a layer's, or the embedding's) before their compute,
  // prefetched while the previous layer computes; the buffer is freed after their last
  // compute by ReleaseParams.
  void GatherParams(RankState& st, double params, int layer, int mb) {
    if (p_.zero < 3 || nd_ == 1) return;
    const double bytes = params * kWeightBytesPerParam;
    const OpId alloc = prog_.AddMemory(st.rank, Stream::kDpGather, MemCategory::kBuffers, bytes);
    if (st.released[0]) prog_.AddDep(*st.released[0], alloc);
    const int32_t c = NextComm(st, Channel::kZeroGather, CommOp::kAllGather, st.grad_group, bytes);
    const OpId id = prog_.AddCommPart(st.rank, Stream::kDpGather, c, Tag::kZeroGather, layer, mb);
    st.wait.push_back(id);
  }
  void ReleaseParams(RankState& st, double params) {
    if (p_.zero < 3 || nd_ == 1) return;
    Memory(st, MemCategory::kBuffers, -params * kWeightBytesPerParam);
    st.released[0] = st.released[1];
    st.released[1] = st.last_compute;
  }

  // Adds a block's gradients to the current bucket; reduces it once full (or `flush`).
  void ReduceGradients(RankState& st, double params, bool last_micro_batch, bool flush) {
    if (nd_ == 1) return;
    if (!last_micro_batch && p_.zero < 2) return;  // ZeRO-0/1 accumulate locally
    st.bucket_bytes += GradBytes(params);
    if (st.bucket_bytes < static_cast<double>(p_.dp_bucket_bytes) && !flush) return;
    if (st.bucket_bytes <= 0) return;
    const CommOp op = p_.zero == 0 ? CommOp::kAllReduce : CommOp::kReduceScatter;
    st.last_dp = Collective(st, Stream::kDp, Channel::kDp, Tag::kDpGradReduce, op, st.grad_group,
                            st.bucket_bytes, -1, -1, /*blocking=*/false);
    st.bucket_bytes = 0;
  }

  void PipelineRecv(RankState& st, bool forward, int chunk, int mb) {
    const int vs = VirtualStage(chunk, st.stage);
    if (forward ? IsFirst(vs) : IsLast(vs)) return;
    const int peer_stage = forward ? (st.stage + p_.pp - 1) % p_.pp : (st.stage + 1) % p_.pp;
    const Coords& c = mesh_.CoordsOf(st.rank);
    const int peer = mesh_.RankOf(c.tp, c.cp, c.dp, peer_stage);
    const std::vector<int> group{peer, st.rank};
    const Channel ch = forward ? Channel::kPpActivation : Channel::kPpGradient;
    const int32_t comm = NextComm(st, ch, CommOp::kSendRecv, group, PipelineBytes());
    const Stream s = forward ? Stream::kRecvPrev : Stream::kRecvNext;
    const OpId id = prog_.AddCommPart(st.rank, s, comm,
                                      forward ? Tag::kPpActivation : Tag::kPpGradient, -1, mb);
    if (p_.tp > 1 && !shape_.sequence_parallel) {
      // Scatter-gather: each TP rank received 1/t of the tensor; gather it over NVLink.
      const OpId gather = Collective(st, Stream::kTp, Channel::kTp, Tag::kTpComm,
                                     CommOp::kAllGather, st.tp_group, PipelineBytes() * p_.tp,
                                     -1, mb, /*blocking=*/true);
      prog_.AddDep(id, gather);
    } else {
      st.wait.push_back(id);
    }
  }

  void PipelineSend(RankState& st, bool forward, int chunk, int mb) {
    const int vs = VirtualStage(chunk, st.stage);
    if (forward ? IsLast(vs) : IsFirst(vs)) return;
    const int peer_stage = forward ? (st.stage + 1) % p_.pp : (st.stage + p_.pp - 1) % p_.pp;
    const Coords& c = mesh_.CoordsOf(st.rank);
    const int peer = mesh_.RankOf(c.tp, c.cp, c.dp, peer_stage);
    const std::vector<int> group{st.rank, peer};
    const Channel ch = forward ? Channel::kPpActivation : Channel::kPpGradient;
    Collective(st, forward ? Stream::kSendNext : Stream::kSendPrev, ch,
               forward ? Tag::kPpActivation : Tag::kPpGradient, CommOp::kSendRecv, group,
               PipelineBytes(), -1, mb, /*blocking=*/!p_.overlap_p2p);
  }

  // Activation (or gradient) tensor passed between stages by one rank: s*b*h / t. Under
  // sequence parallelism each TP rank holds 1/t of it; otherwise Megatron's scatter-gather
  // optimisation (Narayanan et al. 2021, Sec. 4.1) sends 1/t per rank and all-gathers it
  // over NVLink on arrival.
  double PipelineBytes() const {
    const double sbh = static_cast<double>(shape_.seq) * shape_.micro_batch * m_.hidden;
    return ActBytes(sbh) / p_.tp;
  }

  double LogitActBytes() const {
    // fp32 logits of the local vocabulary shard, kept for the cross-entropy backward.
    return 4.0 * shape_.seq * shape_.micro_batch * static_cast<double>(m_.vocab) / p_.tp;
  }
  KernelWork LogitsWork() const {
    const double flops = LogitFlops(m_, shape_);
    return KernelWork{flops, 2 * LogitActBytes()};
  }

  void Forward(RankState& st, int chunk, int mb) {
    const int vs = VirtualStage(chunk, st.stage);
    PipelineRecv(st, true, chunk, mb);
    if (IsFirst(vs)) {
      const double sbh = static_cast<double>(shape_.seq) * shape_.micro_batch * m_.hidden;
      GatherParams(st, EmbeddingParamsLocal(), -1, mb);
      Compute(st, Tag::kEmbeddingFwd, KernelWork{0, 2 * ActBytes(sbh)}, -1, mb);
      ReleaseParams(st, EmbeddingParamsLocal());
    }
    for (int i = 0; i < layers_per_chunk_; ++i) {
      const int layer = vs * layers_per_chunk_ + i;
      GatherParams(st, layer_.params, layer, mb);
      BlockForward(st, layer_.attention, Tag::kAttentionFwd, layer, mb, false);
      BlockForward(st, layer_.mlp, Tag::kMlpFwd, layer, mb, false);
      ReleaseParams(st, layer_.params);
    }
    if (IsLast(vs)) {
      GatherParams(st, EmbeddingParamsLocal(), -1, mb);
      Memory(st, MemCategory::kActivations, LogitActBytes());
      Compute(st, Tag::kLogitsFwd, LogitsWork(), -1, mb);
      ReleaseParams(st, EmbeddingParamsLocal());
    }
    PipelineSend(st, true, chunk, mb);
  }

  void Backward(RankState& st, int chunk, int mb) {
    const int vs = VirtualStage(chunk, st.stage);
    const bool last_mb = mb == micro_batches_ - 1;
    PipelineRecv(st, false, chunk, mb);
    if (IsLast(vs)) {
      KernelWork w = LogitsWork();
      w.flops *= 2;
      GatherParams(st, EmbeddingParamsLocal(), -1, mb);
      Compute(st, Tag::kLogitsBwd, w, -1, mb);
      Memory(st, MemCategory::kActivations, -LogitActBytes());
      ReleaseParams(st, EmbeddingParamsLocal());
      if (HoldsOutput(st.stage)) ReduceGradients(st, EmbeddingParamsLocal(), last_mb, false);
    }
    for (int i = layers_per_chunk_ - 1; i >= 0; --i) {
      const int layer = vs * layers_per_chunk_ + i;
      GatherParams(st, layer_.params, layer, mb);
      const double transient = layer_.attention.transient_act_bytes + layer_.mlp.transient_act_bytes;
      // Recomputed activations are working memory of this layer's backward only.
      Memory(st, MemCategory::kBuffers, transient);
      if (p_.recompute == Recompute::kFull) {
        BlockForward(st, layer_.attention, Tag::kAttentionRecompute, layer, mb, true);
        BlockForward(st, layer_.mlp, Tag::kMlpRecompute, layer, mb, true);
      }
      BlockBackward(st, layer_.mlp, Tag::kMlpBwd, Tag::kMlpWgrad, layer, mb);
      Memory(st, MemCategory::kActivations, -layer_.mlp.stored_act_bytes);
      if (p_.recompute == Recompute::kSelective) {
        Compute(st, Tag::kAttentionRecompute,
                KernelWork{layer_.attention.recompute_flops, layer_.attention.recompute_bytes,
                           layer_.attention.recompute_kernels},
                layer, mb, layer_.attention.recompute_flops);
      }
      BlockBackward(st, layer_.attention, Tag::kAttentionBwd, Tag::kAttentionWgrad, layer, mb);
      Memory(st, MemCategory::kActivations, -layer_.attention.stored_act_bytes);
      Memory(st, MemCategory::kBuffers, -transient);
      ReleaseParams(st, layer_.params);
      const bool flush = i == 0 && !IsFirst(vs);
      ReduceGradients(st, layer_.params, last_mb, flush);
    }
    if (IsFirst(vs)) {
      const double sbh = static_cast<double>(shape_.seq) * shape_.micro_batch * m_.hidden;
      GatherParams(st, EmbeddingParamsLocal(), -1, mb);
      Compute(st, Tag::kEmbeddingBwd, KernelWork{0, 4 * ActBytes(sbh)}, -1, mb);
      ReleaseParams(st, EmbeddingParamsLocal());
      ReduceGradients(st, EmbeddingParamsLocal(), last_mb, true);
    }
    PipelineSend(st, false, chunk, mb);
  }

  double LocalParams(int stage) const {
    double params = layers_per_chunk_ * p_.virtual_stages * layer_.params;
    if (HoldsEmbedding(stage)) params += EmbeddingParamsLocal();
    if (HoldsOutput(stage)) params += EmbeddingParamsLocal();
    return params;
  }

  void Optimizer(RankState& st) {
    const double params = LocalParams(st.stage);
    // Tied embeddings across stages: the first and last stage sum their copies' gradients.
    if (m_.tied_embeddings && p_.pp > 1 && (st.stage == 0 || st.stage == p_.pp - 1)) {
      const Coords& c = mesh_.CoordsOf(st.rank);
      const std::vector<int> group{mesh_.RankOf(c.tp, c.cp, c.dp, 0),
                                   mesh_.RankOf(c.tp, c.cp, c.dp, p_.pp - 1)};
      st.last_dp = Collective(st, Stream::kDp, Channel::kTiedEmbedding, Tag::kDpGradReduce,
                              CommOp::kAllReduce, group, GradBytes(EmbeddingParamsLocal()), -1,
                              -1, false);
    }
    if (st.last_dp) st.wait.push_back(*st.last_dp);
    const double owned = params / (p_.zero >= 1 ? nd_ : 1);
    Compute(st, Tag::kOptimizerStep, KernelWork{0, owned * OptimizerTrafficPerParam(t_)}, -1, -1);
    if ((p_.zero == 1 || p_.zero == 2) && nd_ > 1) {
      Collective(st, Stream::kDp, Channel::kDp, Tag::kZeroGather, CommOp::kAllGather,
                 st.grad_group, params * kWeightBytesPerParam, -1, -1, false);
    }
  }

  void EmitRank(int rank) {
    RankState st;
    st.rank = rank;
    st.stage = mesh_.CoordsOf(rank).pp;
    st.tp_group = mesh_.Group(rank, Axis::kTp);
    st.grad_group = mesh_.GradientGroup(rank);
    const ModelStateBytes states = ModelStates(LocalParams(st.stage), nd_, p_.zero, t_);
    Memory(st, MemCategory::kWeights, states.weights);
    Memory(st, MemCategory::kGradients, states.gradients);
    Memory(st, MemCategory::kOptimizer, states.optimizer);
    for (const PipelineStep& s :
         StageOrder(p_.schedule, p_.pp, p_.virtual_stages, micro_batches_, st.stage)) {
      if (s.forward) {
        Forward(st, s.chunk, s.micro_batch);
      } else {
        Backward(st, s.chunk, s.micro_batch);
      }
    }
    Optimizer(st);
  }

  const ModelSpec& m_;
  const PlanSpec& p_;
  const TrainingSpec& t_;
  const Mesh& mesh_;
  Program prog_;
  LayerShape shape_;
  LayerCost layer_;
  int layers_per_chunk_ = 0;
  int micro_batches_ = 0;
  int nd_ = 1;
  std::map<std::tuple<int32_t, Channel>, std::vector<int32_t>> instances_;
};

}  // namespace

Program BuildStepProgram(const ModelSpec& model, const PlanSpec& plan,
                         const TrainingSpec& training, const Mesh& mesh,
                         const std::vector<int>& ranks) {
  return StepBuilder(model, plan, training, mesh).Build(ranks);
}

}  // namespace meshsim

#include "sim/schedule/step_builder.h"

#include <algorithm>
#include <cassert>

#include "sim/plan/run_routing.h"
#include "sim/schedule/model_states.h"
#include "sim/schedule/pipeline_order.h"
#include "sim/schedule/step_builder_impl.h"

namespace meshsim {
namespace schedule_internal {

StepBuilder::StepBuilder(const ModelSpec& m, const PlanSpec& p, const TrainingSpec& t,
                         const Mesh& mesh, bool host_threads, bool clone_ranks)
    : host_threads_(host_threads),
      m_(m),
      p_(p),
      t_(t),
      mesh_(mesh),
      policy_(PolicyFor(p, t)),
      prog_(mesh.Size()),
      stages_(m, p, t),
      shape_(stages_.shape()),
      layer_(stages_.dense_layer()),
      clone_ranks_(clone_ranks) {
  prog_.SerializeCollectives(!p.async_collectives);
  AddLayerShapes();
  micro_batches_ = p.MicroBatches();
  nd_ = p.dp * p.cp;
  ned_ = m.IsMoe() ? p.ExpertDataDegree() : 1;
}

PassShapeIds StepBuilder::AddPassShapes(const PassKernels& k) {
  auto add = [this](const KernelShapes& s) { return s.Empty() ? -1 : prog_.AddShapes(s); };
  return PassShapeIds{add(k.fwd), add(k.dgrad), add(k.wgrad), add(k.recompute)};
}

void StepBuilder::AddLayerShapes() {
  const LayerKernels k = TransformerLayerKernels(m_, shape_);
  attention_ids_ = AddPassShapes(k.attention.block);
  mlp_ids_ = AddPassShapes(k.mlp);
  edge_fwd_id_ = prog_.AddShapes(k.attention.edge_fwd);
  edge_dgrad_id_ = prog_.AddShapes(k.attention.edge_dgrad);
  edge_wgrad_id_ = prog_.AddShapes(k.attention.edge_wgrad);
  ring_fwd_id_ = prog_.AddShapes(k.attention.ring_fwd);
  ring_bwd_id_ = prog_.AddShapes(k.attention.ring_bwd);
  windowed_attention_ids_ = attention_ids_;
  windowed_ring_fwd_id_ = ring_fwd_id_;
  windowed_ring_bwd_id_ = ring_bwd_id_;
  if (m_.sliding_window > 0) {
    const AttentionKernels w = TransformerLayerKernels(m_, stages_.windowed_shape()).attention;
    windowed_attention_ids_ = AddPassShapes(w.block);
    windowed_ring_fwd_id_ = prog_.AddShapes(w.ring_fwd);
    windowed_ring_bwd_id_ = prog_.AddShapes(w.ring_bwd);
  }
  if (m_.IsHybrid() && m_.mamba_heads > 0)
    mamba_ids_ = AddPassShapes(MambaLayerKernels(m_, shape_));
  if (m_.mtp_layers > 0) {
    // The MTP projection X[T x 2h] W[2h x h/tp]: forward; backward's dgrad and wgrad.
    const double tokens = static_cast<double>(shape_.seq) * shape_.micro_batch;
    const double h = static_cast<double>(m_.hidden), out = h / p_.tp;
    KernelShapes fwd, bwd;
    fwd.gemms.push_back({tokens, out, 2 * h});
    bwd.gemms.push_back({tokens, 2 * h, out});
    bwd.gemms.push_back({2 * h, out, tokens});
    mtp_projection_id_ = prog_.AddShapes(fwd);
    mtp_projection_bwd_id_ = prog_.AddShapes(bwd);
  }
  if (p_.tp_comm_overlap && p_.tp > 1 && shape_.sequence_parallel) AddOverlapShapes(k);
  const LogitKernels logits = LogitLayerKernels(m_, shape_);
  logits_fwd_id_ = prog_.AddShapes(logits.fwd);
  logits_bwd_id_ = prog_.AddShapes(logits.bwd);
}

Program StepBuilder::Build(const std::vector<int>& ranks) {
  std::vector<int> order = ranks;
  if (order.empty()) {
    order.resize(mesh_.Size());
    for (int r = 0; r < mesh_.Size(); ++r) order[r] = r;
  }
  if (m_.IsMoe()) prog_.SetExpertRouting(RunRouting(p_, m_));
  // A pipeline stage's ranks run alike at about the same time: their ops side by side, where
  // a stage's ops (~44 bytes each with their times) fit a last-level cache or so. Measured
  // (user CPU s, this shared VM): GPT-1T full replay alpha-beta at 16,384 GPUs (690 k ops a
  // stage) 15.4-21.4 -> 13.1, at 3,072 (129 k) 1.5-2.1 either way (within the noise);
  // public-b200-bridge-qwen3-235b-a22b (2.9 M ops a stage) 3.7 -> 13 if it were interleaved
  // while the step analysis walked each rank's ops, and still 3.3-3.5 -> 4.0 since it walks
  // the ops in id order (AnalyzeStep): past this size the renumbering and the replay lose.
  constexpr size_t kMaxInterleavedStageOps = size_t{1} << 20;
  const int stages = mesh_.Degree(Axis::kPp);
  auto stage_of = [&](size_t i) { return mesh_.CoordsOf(order[i]).pp; };
  // Where each stage's ranks come one after another, stages in order (full replay: the pp
  // axis outermost), each stage is interleaved as soon as its last rank is added, while its
  // ops are still in cache (Program::InterleaveAdded); else the whole program after it is
  // finalized (Program::InterleaveRanks), which gives the same layout.
  bool stage_runs = true;
  for (size_t i = 1; i < order.size(); ++i)
    stage_runs = stage_runs && stage_of(i - 1) <= stage_of(i);
  // The current stage's ranks emitted op by op, and those that copy theirs (CloneRank)
  // not yet added: a stage's copies are added as it is interleaved (InterleaveCopies).
  std::vector<EmittedRank> emitted;
  std::vector<RankCopy> copies;
  const bool cloning = clone_ranks_ && stage_runs && !m_.IsMoe() && p_.async_collectives;
  size_t stage_begin = 0, stage_first = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    if (!cloning || !CloneRank(emitted, order[i], copies)) {
      AddCopies(emitted, copies);  // a rank emitted after them comes after them
      EmittedRank e = EmitToCopy(order[i], cloning);
      if (cloning) emitted.push_back(std::move(e));
    }
    // Ranks emit about as many ops as the first: size the arrays once. Stages differ
    // more in dependencies than in ops (the first stage receives no activations): room for
    // half as many again (address space only: pages are taken as they are written).
    if (i == 0) {
      prog_.Reserve(prog_.OpCount() * order.size() * 9 / 8 + 1024,
                    prog_.DepCount() * order.size() * 3 / 2 + 1024);
    }
    if (stage_runs && (i + 1 == order.size() || stage_of(i + 1) != stage_of(i))) {
      size_t stage_ops = prog_.OpCount() - stage_begin;
      for (const RankCopy& c : copies) stage_ops += EmittedOf(emitted, c.from).Ops();
      const bool interleave = i > stage_first && stage_ops <= kMaxInterleavedStageOps;
      if (!interleave || !prog_.InterleaveCopies(static_cast<OpId>(stage_begin), copies)) {
        AddCopies(emitted, copies);
        if (interleave) prog_.InterleaveAdded(static_cast<OpId>(stage_begin));
      }
      copies.clear();
      emitted.clear();
      stage_begin = prog_.OpCount();
      stage_first = i + 1;
    }
  }
  prog_.Finalize();
  if (!stage_runs && prog_.OpCount() / stages <= kMaxInterleavedStageOps) {
    std::vector<std::vector<int>> stage_ranks(stages);
    for (int r : order) stage_ranks[mesh_.CoordsOf(r).pp].push_back(r);
    prog_.InterleaveRanks(stage_ranks);
  }
  return std::move(prog_);
}

int32_t StepBuilder::GroupId(RankState& st, const std::vector<int>& group) {
  // The TP group takes most collectives: look it up once per rank.
  if (&group == &st.tp_group) {
    if (st.tp_group_id < 0) st.tp_group_id = prog_.AddGroup(group);
    return st.tp_group_id;
  }
  return prog_.AddGroup(group);
}

int32_t StepBuilder::NextComm(RankState& st, Channel ch, CommOp op, const std::vector<int>& group,
                              double bytes) {
  return NextComm(st, ch, op, GroupId(st, group), bytes);
}

int32_t StepBuilder::NextComm(RankState& st, Channel ch, CommOp op, int32_t g, double bytes) {
  const uint32_t key = ChannelKey(g, ch);
  auto it =
      std::find_if(st.seq.begin(), st.seq.end(), [key](const auto& s) { return s.first == key; });
  if (it == st.seq.end()) it = st.seq.insert(st.seq.end(), {key, 0});
  const int i = it->second++;
  if (key >= instances_.size()) instances_.resize(key + 1);
  auto& list = instances_[key];
  if (i == static_cast<int>(list.size())) list.push_back(prog_.AddComm(op, g, bytes));
  if (slots_) slots_->emplace_back(key, i);
  assert(prog_.comms()[list[i]].op == op);
  return list[i];
}

OpId StepBuilder::Compute(RankState& st, Tag tag, KernelWork w, int layer, int mb, double recompute,
                          int launches, int trailing, int expert_units, int grouped_calls) {
  const OpId id = prog_.AddCompute(st.rank, tag, w, layer, mb, recompute);
  if (st.host.On()) {
    const KernelShapes* shapes = prog_.ShapesOf(w);
    const int casts = shapes && t_.dtype == Dtype::kFp8
                          ? Fp8CastLaunches(*shapes, t_.fp8_recipe, !t_.cudnn_norm)
                          : 0;
    st.host.Issue(prog_, id, (launches < 0 ? w.kernels : launches) + casts, layer, mb, trailing,
                  expert_units, expert_units > 0 ? grouped_calls : 0);
  }
  for (OpId d : st.wait) prog_.AddDep(d, id);
  st.wait.clear();
  st.last_compute = id;
  return id;
}

void StepBuilder::Memory(RankState& st, MemCategory c, double bytes) {
  if (bytes == 0) return;
  st.last_compute = prog_.AddMemory(st.rank, Stream::kCompute, c, bytes);
}

// A collective on `stream` after the latest compute op; with `blocking` the next compute
// waits for it.
OpId StepBuilder::Collective(RankState& st, Stream stream, Channel ch, Tag tag, CommOp op,
                             const std::vector<int>& group, double bytes, int layer, int mb,
                             bool blocking) {
  return Collective(st, stream, ch, tag, op, GroupId(st, group), bytes, layer, mb, blocking);
}

OpId StepBuilder::Collective(RankState& st, Stream stream, Channel ch, Tag tag, CommOp op,
                             int32_t group, double bytes, int layer, int mb, bool blocking,
                             int launches) {
  const int32_t c = NextComm(st, ch, op, group, bytes);
  const OpId id = prog_.AddCommPart(st.rank, stream, c, tag, layer, mb);
  st.host.Issue(prog_, id, launches, layer, mb);
  if (st.last_compute) prog_.AddDep(*st.last_compute, id);
  if (blocking) st.wait.push_back(id);
  return id;
}

// Adds gradients to the current bucket (dense, or experts') and reduces it once full (or
// on `flush`) over the group that replicates those parameters.
void StepBuilder::ReduceGradients(RankState& st, double params, bool last_micro_batch, bool flush,
                                  bool expert) {
  const int group_size = expert ? ned_ : nd_;
  double& bucket = expert ? st.expert_bucket_bytes : st.bucket_bytes;
  if (group_size == 1) return;
  if (!last_micro_batch && !policy_.reduce_each_micro_batch) return;  // accumulate locally
  bucket += params * GradientBytesPerParam(t_);
  if ((bucket < policy_.reduce_bucket_bytes && !flush) || bucket <= 0) return;
  if (policy_.copy_in_out) {
    Compute(st, Tag::kParamCopy, KernelWork{0, 2 * bucket, 1}, -1, -1);
  }
  PrepareBucket(st, bucket);
  const CommOp op = p_.zero == 0 ? CommOp::kAllReduce : CommOp::kReduceScatter;
  st.last_dp = Collective(st, Stream::kDp, expert ? Channel::kExpertDp : Channel::kDp,
                          Tag::kDpGradReduce, op, expert ? st.expert_grad_group : st.grad_group,
                          bucket, -1, -1, /*blocking=*/false);
  bucket = 0;
}

// Megatron-Core's start_grad_sync before a bucket's reduction (param_and_grad_buffer.py @
// core_r0.8.0): with check_for_nan_in_grad, `grad_data.norm(p=2)` (reads the bucket's
// `bytes` of gradients) and `assert not norm.isnan()`, on which the host waits for the GPU;
// then, unless the collective averages, `grad_data *= 1/dp` in place (reads and writes them).
void StepBuilder::PrepareBucket(RankState& st, double bytes) {
  if (policy_.check_for_nan) {
    const OpId norm = Compute(st, Tag::kGradPrepare, KernelWork{0, bytes, 1}, -1, -1);
    st.host.Sync(prog_, {norm});
  }
  if (policy_.scale_before_reduce) {
    Compute(st, Tag::kGradPrepare, KernelWork{0, 2 * bytes, 1}, -1, -1);
  }
}

void StepBuilder::PipelineRecv(RankState& st, bool forward, int chunk, int mb) {
  const int vs = VirtualStage(chunk, st.stage);
  if (forward ? IsFirst(vs) : IsLast(vs)) return;
  const Channel ch = forward ? Channel::kPpActivation : Channel::kPpGradient;
  const int32_t comm =
      NextComm(st, ch, CommOp::kSendRecv, PipelineGroup(st, false, forward), PipelineBytes());
  const OpId id = prog_.AddCommPart(st.rank, forward ? Stream::kRecvPrev : Stream::kRecvNext, comm,
                                    forward ? Tag::kPpActivation : Tag::kPpGradient, -1, mb);
  st.host.Issue(prog_, id, 1, -1, mb);
  if (p_.tp > 1 && !shape_.sequence_parallel) {
    // Scatter-gather: each TP rank received 1/t of the tensor; gather it over NVLink.
    const OpId gather = Collective(st, Stream::kTp, Channel::kTp, Tag::kTpComm, CommOp::kAllGather,
                                   st.tp_group, PipelineBytes() * p_.tp, -1, mb);
    prog_.AddDep(id, gather);
  } else {
    st.wait.push_back(id);
  }
}

// The send starts once the tensor is complete: after `ready`, or where that is empty after
// the latest compute and what the next compute would wait for (a last MoE layer's
// combine, the input gradient's TP reduction).
void StepBuilder::PipelineSend(RankState& st, bool forward, int chunk, int mb,
                               const std::vector<OpId>& ready) {
  const int vs = VirtualStage(chunk, st.stage);
  if (forward ? IsLast(vs) : IsFirst(vs)) return;
  const int32_t comm =
      NextComm(st, forward ? Channel::kPpActivation : Channel::kPpGradient, CommOp::kSendRecv,
               PipelineGroup(st, true, forward), PipelineBytes());
  const OpId id = prog_.AddCommPart(st.rank, forward ? Stream::kSendNext : Stream::kSendPrev, comm,
                                    forward ? Tag::kPpActivation : Tag::kPpGradient, -1, mb);
  st.host.Issue(prog_, id, 1, -1, mb);
  for (OpId r : ready.empty() ? PendingOutput(st) : ready) prog_.AddDep(r, id);
  if (!p_.overlap_p2p) st.wait.push_back(id);
}

std::vector<OpId> StepBuilder::PendingOutput(const RankState& st) {
  std::vector<OpId> ops = st.wait;
  if (st.last_compute) ops.push_back(*st.last_compute);
  return ops;
}

// Registered on first use (as each transfer did before): the same program indices, and no
// group built and hashed per transfer.
int32_t StepBuilder::PipelineGroup(RankState& st, bool send, bool forward) {
  int32_t& id = st.pp_group_id[(send ? 2 : 0) + (forward ? 1 : 0)];
  if (id < 0) {
    const bool next = send == forward;  // the peer is the next stage
    const int peer_stage = next ? (st.stage + 1) % p_.pp : (st.stage + p_.pp - 1) % p_.pp;
    const Coords& c = mesh_.CoordsOf(st.rank);
    const int peer = mesh_.RankOf(c.tp, c.cp, c.dp, peer_stage);
    id = prog_.AddGroup(send ? std::vector<int>{st.rank, peer} : std::vector<int>{peer, st.rank});
  }
  return id;
}

// Activation (or gradient) tensor passed between stages by one rank: s*b*h / t. Under
// sequence parallelism each TP rank holds 1/t of it; otherwise Megatron's scatter-gather
// optimisation (Narayanan et al. 2021, Sec. 4.1) sends 1/t per rank and all-gathers it
// over NVLink on arrival.
double StepBuilder::PipelineBytes() const { return ActBytes(Sbh()) / p_.tp; }

void StepBuilder::Forward(RankState& st, int chunk, int mb) {
  const int vs = VirtualStage(chunk, st.stage);
  PipelineRecv(st, true, chunk, mb);
  ForwardHead(st, vs, mb);
  const StageSplit& split = stages_.split();
  for (int layer = split.FirstLayer(vs); layer < split.EndLayer(vs); ++layer) {
    BeginLayerForward(st, layer, mb);
    LayerForward(st, layer, mb, false);
    EndLayerForward(st, layer);
  }
  ForwardTail(st, vs, mb);
  PipelineSend(st, true, chunk, mb);
}

// Before and after one layer's forward: its parameters' bucket and gather, offloading.
void StepBuilder::BeginLayerForward(RankState& st, int layer, int mb) {
  const LocalParams& params = stages_.LayerParams(layer);
  AwaitParamBucket(st, layer);
  GatherParams(st, params.dense, layer, mb, false, params.expert);
  if (p_.cpu_offload_layers > 0) OffloadBeforeForward(st, layer);
}

void StepBuilder::EndLayerForward(RankState& st, int layer) {
  const LocalParams& params = stages_.LayerParams(layer);
  ReleaseParams(st, params.dense, layer, false, params.expert);
}

void StepBuilder::Backward(RankState& st, int chunk, int mb) {
  const int vs = VirtualStage(chunk, st.stage);
  PipelineRecv(st, false, chunk, mb);
  BackwardHead(st, vs, mb);
  const StageSplit& split = stages_.split();
  for (int layer = split.EndLayer(vs) - 1; layer >= split.FirstLayer(vs); --layer) {
    const bool flush = layer == split.FirstLayer(vs) && !IsFirst(vs);
    LayerBackward(st, layer, mb, flush);
  }
  BackwardTail(st, vs, mb);
  PipelineSend(st, false, chunk, mb);
}

// One layer's blocks by kind (ModelSpec::KindOf): attention or a Mamba-2 mixer, then a
// dense MLP or a MoE block; a hybrid model's layers hold one of them.
bool StepBuilder::ParallelBlock(int layer) const {
  return m_.parallel_block && p_.cp == 1 && m_.HasAttention(layer) && m_.HasDenseMlp(layer) &&
         !m_.IsMoeLayer(layer);
}

void StepBuilder::LayerForward(RankState& st, int layer, int mb, bool recompute) {
  const bool parallel = ParallelBlock(layer);
  const CudaGraphScope& graphs = t_.cuda_graphs;
  if (m_.HasAttention(layer)) {
    BeginGraph(st, graphs.attn);
    AttentionForward(st, layer, mb, recompute, {true, !parallel});
    EndGraph(st, graphs.attn);
  }
  if (m_.IsMambaLayer(layer)) {
    BeginGraph(st, graphs.mamba);
    MambaForward(st, layer, mb, recompute);
    EndGraph(st, graphs.mamba);
  }
  if (m_.IsMoeLayer(layer)) {
    MoeForward(st, layer, mb, recompute);
  } else if (m_.HasDenseMlp(layer)) {
    BeginGraph(st, graphs.mlp);
    BlockForward(st, layer_.mlp, mlp_ids_, recompute ? Tag::kMlpRecompute : Tag::kMlpFwd, layer, mb,
                 recompute, {!parallel, true});
    EndGraph(st, graphs.mlp);
  }
}

// One layer's backward (after its full recomputation), then its gradients' reduction;
// `flush` reduces the open bucket (the chunk's first layer).
void StepBuilder::LayerBackward(RankState& st, int layer, int mb, bool flush) {
  const double transient = BeginLayerBackward(st, layer, mb);
  if (m_.IsMoeLayer(layer)) {
    MoeBackward(st, layer, mb);
  } else if (m_.HasDenseMlp(layer)) {
    BeginGraph(st, t_.cuda_graphs.mlp);
    // Selective recomputation of the MLP (RecomputeModules::mlp): its forward, with its
    // TP collectives, re-run just before its backward.
    if (shape_.RecomputesMlp()) {
      BlockForward(st, layer_.mlp, mlp_ids_, Tag::kMlpRecompute, layer, mb, true,
                   {!ParallelBlock(layer), true});
    }
    BlockBackward(st, layer_.mlp, mlp_ids_, Tag::kMlpBwd, Tag::kMlpWgrad, layer, mb,
                  {true, !ParallelBlock(layer)});
    EndGraph(st, t_.cuda_graphs.mlp);
    Memory(st, MemCategory::kActivations, -layer_.mlp.stored_act_bytes);
  }
  if (m_.IsMambaLayer(layer)) {
    BeginGraph(st, t_.cuda_graphs.mamba);
    MambaBackward(st, layer, mb);
    EndGraph(st, t_.cuda_graphs.mamba);
  }
  if (m_.HasAttention(layer)) {
    BeginGraph(st, t_.cuda_graphs.attn);
    AttentionBackward(st, layer, mb, {!ParallelBlock(layer), true});
    EndGraph(st, t_.cuda_graphs.attn);
  }
  EndLayerBackward(st, layer, mb, flush, transient);
}

// Before one layer's backward: its parameters (ZeRO-3), offloaded activations, working
// memory and full recomputation. Returns the working memory (recomputed activations).
double StepBuilder::BeginLayerBackward(RankState& st, int layer, int mb) {
  if (p_.cpu_offload_layers > 0) ReloadBeforeBackward(st, layer);
  const LocalParams& params = stages_.LayerParams(layer);
  GatherParams(st, params.dense, layer, mb, true, params.expert);
  // Recomputed activations are working memory of this layer's backward only.
  double transient = m_.IsMoeLayer(layer) ? MoeTransient(st) : 0;
  if (m_.HasAttention(layer)) transient += stages_.Attention(layer).transient_act_bytes;
  if (m_.IsMambaLayer(layer)) transient += stages_.Mamba().transient_act_bytes;
  if (m_.HasDenseMlp(layer)) transient += layer_.mlp.transient_act_bytes;
  Memory(st, MemCategory::kBuffers, transient);
  if (p_.recompute == Recompute::kFull) LayerForward(st, layer, mb, true);
  return transient;
}

void StepBuilder::EndLayerBackward(RankState& st, int layer, int mb, bool flush, double transient) {
  const bool last_mb = mb == micro_batches_ - 1;
  const LocalParams& params = stages_.LayerParams(layer);
  Memory(st, MemCategory::kBuffers, -transient);
  ReleaseParams(st, params.dense, layer, true, params.expert, mb);
  UnshardedGrads(st, params.dense, params.expert, mb, true);
  if (m_.IsMoeLayer(layer)) ReduceGradients(st, params.expert, last_mb, flush, /*expert=*/true);
  ReduceGradients(st, params.dense, last_mb, flush);
  UnshardedGrads(st, params.dense, params.expert, mb, false);
}

void StepBuilder::Optimizer(RankState& st) {
  const LocalParams params = stages_.StageParams(st.stage);
  // Tied embeddings across stages: the first and last stage sum their copies' gradients.
  if (m_.tied_embeddings && p_.pp > 1 && (st.stage == 0 || st.stage == p_.pp - 1)) {
    const Coords& c = mesh_.CoordsOf(st.rank);
    const std::vector<int> group{mesh_.RankOf(c.tp, c.cp, c.dp, 0),
                                 mesh_.RankOf(c.tp, c.cp, c.dp, p_.pp - 1)};
    st.last_dp =
        Collective(st, Stream::kDp, Channel::kTiedEmbedding, Tag::kDpGradReduce, CommOp::kAllReduce,
                   group, EmbeddingParamsLocal() * GradientBytesPerParam(t_), -1, -1, false);
  }
  if (st.last_dp) st.wait.push_back(*st.last_dp);
  const bool sharded = p_.zero >= 1;
  const double owned = params.dense / (sharded ? nd_ : 1) + params.expert / (sharded ? ned_ : 1);
  Compute(st, Tag::kOptimizerStep, KernelWork{0, owned * OptimizerTrafficPerParam(t_)}, -1, -1);
  if (policy_.param_gather_after_optimizer) {
    if (nd_ > 1)
      GatherInChunks(st, Channel::kDp, st.grad_group,
                     params.dense * GatheredWeightBytesPerParam(t_));
    if (ned_ > 1 && params.expert > 0) {
      GatherInChunks(st, Channel::kExpertDp, st.expert_grad_group,
                     params.expert * GatheredWeightBytesPerParam(t_));
    }
  }
}

void StepBuilder::EmitRank(int rank) {
  RankState st;
  st.rank = rank;
  st.host = HostThread(rank, host_threads_);
  // full_iteration: the whole step is one captured graph (Megatron-Core
  // --cuda-graph-impl full_iteration).
  BeginGraph(st, t_.cuda_graphs.full_iteration);
  st.stage = mesh_.CoordsOf(rank).pp;
  st.tp_group = mesh_.Group(rank, Axis::kTp);
  if (p_.tp_comm_overlap && !p_.jax.Empty()) {
    st.tp_group_back.assign(st.tp_group.rbegin(), st.tp_group.rend());
  }
  st.cp_group = mesh_.Group(rank, Axis::kCp);
  st.grad_group = mesh_.GradientGroup(rank);
  if (m_.IsMoe()) {
    st.ep_group = mesh_.ExpertGroup(rank);
    st.expert_grad_group = mesh_.ExpertDataGroup(rank);
    // The busiest expert sits on the first rank of each EP group; capacity caps it.
    st.expert_load = stages_.ExpertLoad(mesh_.CoordsOf(rank).ep);
  }
  const LocalParams params = stages_.StageParams(st.stage);
  const ModelStateBytes dense = ModelStates(params.dense, nd_, p_.zero, t_);
  const ModelStateBytes expert = ModelStates(params.expert, ned_, p_.zero, t_);
  Memory(st, MemCategory::kWeights, dense.weights + expert.weights);
  Memory(st, MemCategory::kGradients, dense.gradients + expert.gradients);
  Memory(st, MemCategory::kOptimizer, dense.optimizer + expert.optimizer);
  GatherParamBuckets(st);
  const std::vector<PipelineStep> order =
      StageOrder(p_.schedule, p_.pp, p_.virtual_stages, micro_batches_, st.stage,
                 p_.framework_options.overlap_moe_expert_parallel_comm ? 1 : 0);
  for (size_t i = 0; i < order.size(); ++i) {
    const PipelineStep& s = order[i];
    if (i + 1 < order.size() && MergesWith(s, order[i + 1])) {
      ForwardBackward(st, s.forward ? s : order[i + 1], s.forward ? order[i + 1] : s);
      ++i;
    } else if (s.forward) {
      Forward(st, s.chunk, s.micro_batch);
    } else {
      Backward(st, s.chunk, s.micro_batch);
    }
  }
  Optimizer(st);
  EndGraph(st, t_.cuda_graphs.full_iteration);
}

}  // namespace schedule_internal

Program BuildStepProgram(const ModelSpec& model, const PlanSpec& plan, const TrainingSpec& training,
                         const Mesh& mesh, const std::vector<int>& ranks, bool host_threads,
                         bool clone_ranks) {
  return schedule_internal::StepBuilder(model, plan, training, mesh, host_threads, clone_ranks)
      .Build(ranks);
}

}  // namespace meshsim

// The step builder's internals, shared by step_builder.cc (pipeline, gradients,
// optimizer), layer_blocks.cc (attention with ring attention, MLP, TP collectives) and
// moe_blocks.cc (router, expert all-to-all, experts). Not part of the schedule API.
#pragma once

#include <deque>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "sim/plan/mesh.h"
#include "sim/plan/plan_spec.h"
#include "sim/schedule/dp_policy.h"
#include "sim/schedule/host_launch.h"
#include "sim/schedule/pipeline_order.h"
#include "sim/schedule/program.h"
#include "sim/schedule/stage_costs.h"
#include "sim/workload/layer_kernels.h"
#include "sim/workload/model_spec.h"
#include "sim/workload/transformer.h"

namespace meshsim::schedule_internal {

// Kinds of collective sequence; the i-th collective of a kind on a group is the same
// instance on every member.
enum class Channel {
  kTp,
  kCp,
  kEp,
  kDp,
  kExpertDp,
  kZeroGather,
  kPpActivation,
  kPpGradient,
  kTiedEmbedding
};
constexpr uint32_t kChannelCount = 9;
inline uint32_t ChannelKey(int32_t group, Channel ch) {
  return static_cast<uint32_t>(group) * kChannelCount + static_cast<uint32_t>(ch);
}

// Parameters of one all-gather group of a sharded unit: `params` on this rank, gathered
// over `group` (a rank's gradient group or expert gradient group).
struct GatherPart {
  double params = 0;
  const std::vector<int>* group = nullptr;
};

// Indices in the program's shape table (Program::AddShapes) of the ops of one block
// (see PassKernels); -1: none.
struct PassShapeIds {
  int32_t fwd = -1;
  int32_t dgrad = -1;
  int32_t wgrad = -1;
  int32_t recompute = -1;
  int32_t overlap = -1;  // index in StepBuilder::overlap_ (tp_comm_overlap); -1: none
};

// A dense block's ops under TP communication overlap (tp_overlap.cc): its forward cut
// into the first GEMM, the ops between, and the last GEMM; its dgrad into the last
// GEMM's dgrad (which backward runs first) and the rest. The first and last GEMMs (and
// the first dgrad) run in tp chunks of T/tp tokens each: `*_chunk` are one chunk's
// shapes (program shape table indices) and FLOPs.
struct OverlapShapes {
  int32_t head_chunk = -1, body = -1, tail_chunk = -1;
  double head_chunk_flops = 0, body_flops = 0, tail_chunk_flops = 0;
  int32_t dgrad_chunk = -1, dgrad_rest = -1;
  double dgrad_chunk_flops = 0, dgrad_rest_flops = 0;
  // Under context parallelism (the attention block only): the body's and dgrad rest's
  // GEMMs without the core, which runs in ring blocks (RingAttention).
  int32_t body_gemms = -1, dgrad_rest_gemms = -1;
  double body_gemms_flops = 0, dgrad_rest_gemms_flops = 0;
};
struct MoeShapeIds {
  PassShapeIds router, experts, shared;
  // The routed experts' forward GEMMs one GroupedLinear call each (FC1, FC2), where
  // experts.fwd holds the two (MoeExpertsForward's split); -1 otherwise.
  int32_t experts_fc1 = -1, experts_fc2 = -1;
};

// Which tensor-parallel collectives at a block's edges it runs itself: the all-gather of
// its sequence-split input (and in backward of its output gradient, and the input's
// re-gather for wgrad) and the reduction of its output (in backward of its input
// gradient). A parallel block (ModelSpec::parallel_block) runs one of each per layer and
// pass: attention gathers and the MLP reduces in forward; in backward (MLP first) the MLP
// gathers and attention reduces.
struct BlockEdges {
  bool gather = true;
  bool reduce = true;
};

class StepBuilder {
 public:
  StepBuilder(const ModelSpec& m, const PlanSpec& p, const TrainingSpec& t, const Mesh& mesh,
              bool host_threads = false, bool clone_ranks = true);
  Program Build(const std::vector<int>& ranks);

 private:
  // A rank emitted op by op (EmitRank): its ops, its lists of dependents, and for each of
  // its comm parts in id order the collective's (group, channel) key and place among the
  // key's collectives (instances_).
  struct EmittedRank {
    int rank = 0;
    OpId begin = 0, end = 0;
    size_t deps_begin = 0, deps_end = 0;
    std::vector<std::pair<uint32_t, int>> slots;
    // Whether every group of its collectives moves (GroupsMove), once a copy asked.
    std::optional<bool> groups_move;
    size_t Ops() const { return end - begin; }
  };
  // State of the rank being emitted.
  struct RankState {
    int rank = 0;
    int stage = 0;
    HostThread host;           // issues the rank's GPU ops (off unless host_threads_)
    double expert_load = 1.0;  // routed tokens this rank's experts get, over the average
    std::vector<int> tp_group, cp_group, ep_group, grad_group, expert_grad_group;
    // tp_group in reverse order: a ring shift on it passes data the other way round
    // (tp_overlap.cc, XLA's bidirectional collective matmul); empty when not used.
    std::vector<int> tp_group_back;
    int32_t tp_group_id = -1;  // tp_group's program index, once registered
    // The program indices of its pipeline transfer groups, once registered (PipelineGroup):
    // [send * 2 + forward]; a rank sends and receives over them once per micro-batch.
    int32_t pp_group_id[4] = {-1, -1, -1, -1};
    std::optional<OpId> last_compute;  // latest op on the compute stream
    // EP overlap (ep_overlap.cc): the forward combine of the merged step's last MoE layer,
    // which the forward's next compute (not the backward's) waits for.
    std::optional<OpId> combine;
    // The latest backward block's input gradient (MarkInputGradient): a merged step sends
    // it under that block's wgrad.
    std::optional<OpId> input_grad;
    std::vector<OpId> wait;          // deps for the next compute op
    std::optional<OpId> last_dp;     // latest gradient reduction
    double bucket_bytes = 0;         // dense gradient bytes not yet reduced
    double expert_bucket_bytes = 0;  // expert gradient bytes not yet reduced
    // Collectives issued so far per (group, channel) key (see ChannelKey); a rank uses a
    // handful of keys, so a linear search beats a map.
    std::vector<std::pair<uint32_t, int>> seq;
    // ZeRO-3: the frees of the two most recent layer buffers; a gather waits for the older,
    // so at most two gathered layers (the one computing, the one prefetched) are live.
    std::optional<OpId> released[2];
    // Other frameworks' sharded parameters (sharded_params.cc): the units gathered and
    // not yet known to be freed, oldest first, with the op that frees each (once emitted).
    struct LiveUnit {
      double bytes = 0;
      std::optional<OpId> freed;
    };
    std::deque<LiveUnit> live;
    std::set<int> kept_units;  // DpPolicy::keep_gathered: layers gathered and kept (-1: embedding)
    double live_bytes = 0;
    // overlap_param_gather (sharded_params.cc): the parameter buckets of the previous
    // step's optimizer, the dense parameters' and the routed experts' apart.
    struct ParamBuckets {
      std::vector<double> bytes;                // per bucket, in forward order
      std::vector<int> chunk;                   // the model chunk (virtual stage) holding it
      std::vector<std::optional<OpId>> gather;  // its all-gather, once issued
      std::vector<bool> waited;                 // its first forward has waited for it
      // Per slot (0: the embedding, layer + 1, layers + 1: the output layer): its bucket,
      // -1 none.
      std::vector<int> slot_bucket;
      int issued = 0;  // buckets issued so far, in order
    };
    ParamBuckets dense_buckets, expert_buckets;
    // The paged stash (moe_blocks.cc): the experts' forward whose saved tensors are not
    // yet known to be copied out (its layer, micro-batch and op), the (layer, micro-batch)
    // pairs copied out and not yet back, the latest copy out and the latest copy of either
    // way on the side stream that the compute stream has not waited for, and the copies
    // back whose backward has not yet waited for them.
    struct Stash {
      int layer = -1, mb = -1;
      std::optional<OpId> forward;
      std::vector<std::pair<int, int>> out;
      std::optional<OpId> out_unwaited, any_unwaited;
      std::vector<std::pair<std::pair<int, int>, OpId>> back;
    };
    Stash stash;
  };

  // step_builder.cc: ops, collectives, pipeline, gradients, optimizer.
  PassShapeIds AddPassShapes(const PassKernels& k);
  void AddLayerShapes();
  // The group's program index (the TP group's looked up once per rank).
  int32_t GroupId(RankState& st, const std::vector<int>& group);
  int32_t NextComm(RankState& st, Channel ch, CommOp op, const std::vector<int>& group,
                   double bytes);
  int32_t NextComm(RankState& st, Channel ch, CommOp op, int32_t group, double bytes);
  // A compute op; its host thread issues it in `launches` launches (< 0: w.kernels), the
  // last `trailing` of them after its main kernels, and `expert_units` local experts'
  // host work of `grouped_calls` GroupedLinear calls among the launches, none without
  // expert units (HostThread::Issue).
  OpId Compute(RankState& st, Tag tag, KernelWork w, int layer, int mb, double recompute = 0,
               int launches = -1, int trailing = 0, int expert_units = 0, int grouped_calls = 0);
  void Memory(RankState& st, MemCategory c, double bytes);
  // A collective; its host thread issues it in `launches` launches (1: one NCCL kernel;
  // 0: issued from inside a library call that another op's launch paid for).
  OpId Collective(RankState& st, Stream stream, Channel ch, Tag tag, CommOp op,
                  const std::vector<int>& group, double bytes, int layer, int mb,
                  bool blocking = true);
  OpId Collective(RankState& st, Stream stream, Channel ch, Tag tag, CommOp op, int32_t group,
                  double bytes, int layer, int mb, bool blocking = true, int launches = 1);
  // ZeRO-3 / FSDP: gathers `dense` parameters over the gradient group and a MoE layer's
  // routed `expert` parameters over the expert gradient group (GatherParts).
  void GatherParams(RankState& st, double dense, int layer, int mb, bool backward,
                    double expert = 0);
  void ReleaseParams(RankState& st, double dense, int layer, bool backward, double expert = 0,
                     int mb = -1);
  // DpPolicy::accumulate_unsharded_grads: the unsharded gradient buffer of a unit, added at
  // its first micro-batch's backward (`begin`) and freed after the last one's reduction.
  void UnshardedGrads(RankState& st, double dense, double expert, int mb, bool begin);
  std::vector<GatherPart> GatherParts(const RankState& st, double dense, double expert) const;
  void ReduceGradients(RankState& st, double params, bool last_micro_batch, bool flush,
                       bool expert = false);
  void PrepareBucket(RankState& st, double bytes);
  // A block's input gradient is complete after its dgrad (the latest compute) and `reduce`,
  // its TP reduction: recorded before the wgrad (RankState::input_grad).
  void MarkInputGradient(RankState& st, const std::optional<OpId>& reduce);
  void PipelineRecv(RankState& st, bool forward, int chunk, int mb);
  // Sends the stage's output (`forward`) or input gradient once `ready` (empty: the
  // latest compute and the pending waits) completes.
  void PipelineSend(RankState& st, bool forward, int chunk, int mb,
                    const std::vector<OpId>& ready = {});
  // What completes the tensor the latest ops produce: the latest compute and what the next
  // compute would wait for.
  static std::vector<OpId> PendingOutput(const RankState& st);
  // The program index of the rank's sendrecv group to (`send`) or from its peer stage in
  // the forward or backward direction, registered on first use.
  int32_t PipelineGroup(RankState& st, bool send, bool forward);
  double PipelineBytes() const;
  double LogitActBytes() const;
  KernelWork LogitsWork(bool backward = false) const;
  void LayerForward(RankState& st, int layer, int mb, bool recompute);
  void LayerBackward(RankState& st, int layer, int mb, bool flush);
  void BeginLayerForward(RankState& st, int layer, int mb);
  void EndLayerForward(RankState& st, int layer);
  double BeginLayerBackward(RankState& st, int layer, int mb);
  void EndLayerBackward(RankState& st, int layer, int mb, bool flush, double transient);
  void Forward(RankState& st, int chunk, int mb);
  void Backward(RankState& st, int chunk, int mb);
  // The parts of a pass outside its layers, on virtual stage `vs`.
  void ForwardHead(RankState& st, int vs, int mb);
  void ForwardTail(RankState& st, int vs, int mb);
  void BackwardHead(RankState& st, int vs, int mb);
  void BackwardTail(RankState& st, int vs, int mb);
  void Optimizer(RankState& st);
  void EmitRank(int rank);
  // rank_clone.cc: `rank`'s program copied from that of a rank of `stage` (ranks emitted
  // by EmitRank) in its pipeline stage and its tensor- and context-parallel place: the
  // same ops, its collectives' groups moved along the data-parallel axis. Returns false,
  // having added nothing, where there is no such rank or a group does not move so.
  // The copy's collectives are created here, in the order EmitRank would create them;
  // its ops are added later (`copies` gets it: AddCopies, Program::InterleaveCopies).
  bool CloneRank(std::vector<EmittedRank>& stage, int rank, std::vector<RankCopy>& copies);
  bool GroupsMove(const EmittedRank& e) const;  // GroupMoves for each group of e's
  // Emits `rank` (EmitRank) and seals it; `copied` keeps what CloneRank needs.
  EmittedRank EmitToCopy(int rank, bool copied);
  // Adds the ops of `copies` (Program::CloneRank), in order, and clears it.
  void AddCopies(const std::vector<EmittedRank>& stage, std::vector<RankCopy>& copies);
  static const EmittedRank& EmittedOf(const std::vector<EmittedRank>& stage, int rank);
  // Whether group `g` of a rank at data-parallel index `from_dp` has a counterpart at
  // any other index (MoveGroup).
  bool GroupMoves(int32_t g, int from_dp) const;
  // The counterpart: `g` moved to `to_dp` where every member is at `from_dp`, else `g`
  // itself (it holds every data-parallel index of each member's).
  int32_t MoveGroup(int32_t g, int from_dp, int to_dp);

  // sharded_params.cc: the DP policy's parameter gathers other than Megatron's.
  std::vector<double> Fetches(double params, int layer) const;
  std::vector<double> LayerModules(double params, int layer) const;
  void GatherUnit(RankState& st, const std::vector<GatherPart>& parts, int layer, int mb,
                  bool backward);
  void ReleaseUnit(RankState& st, const std::vector<GatherPart>& parts, int layer, bool backward,
                   int mb);
  void WaitForRoom(RankState& st, double bytes, int max_units, OpId alloc);
  void GatherInChunks(RankState& st, Channel ch, const std::vector<int>& group, double bytes);
  void GatherParamBuckets(RankState& st);
  void AddChunkBuckets(RankState::ParamBuckets& b, int chunk,
                       const std::vector<std::pair<int, double>>& slots) const;
  void IssueBuckets(RankState& st, RankState::ParamBuckets& b, int end, bool expert);
  void AwaitBucket(RankState& st, RankState::ParamBuckets& b, int slot, bool expert);
  // Before the first forward of `layer` (-1: the embedding; m_.layers: the output layer).
  void AwaitParamBucket(RankState& st, int layer);

  // tp_overlap.cc: Transformer Engine's TP communication overlap (plan.tp_comm_overlap).
  void AddOverlapShapes(const LayerKernels& k);
  int32_t AddOverlapShapes(const PassKernels& k);
  void AddRingOverlapShapes(const AttentionKernels& a, int32_t overlap);
  std::vector<OpId> ShiftStep(RankState& st, double bytes, int layer, int mb);
  void GatherUnderChunks(RankState& st, Tag tag, KernelWork chunk, int layer, int mb,
                         bool recompute);
  void ChunksAlone(RankState& st, Tag tag, KernelWork chunk, int layer, int mb, bool recompute);
  void ReduceUnderChunks(RankState& st, Tag tag, KernelWork chunk, int layer, int mb,
                         bool recompute);
  void OverlappedBlockForward(RankState& st, const BlockCost& b, const PassShapeIds& ids, Tag tag,
                              int layer, int mb, bool recompute, BlockEdges e);
  void OverlappedBlockBackward(RankState& st, const BlockCost& b, const PassShapeIds& ids,
                               Tag dgrad_tag, Tag wgrad_tag, int layer, int mb, BlockEdges e);
  void OverlappedRingAttentionForward(RankState& st, const BlockCost& b, int32_t overlap, Tag tag,
                                      int layer, int mb, bool recompute, int32_t ring_shapes);
  void OverlappedRingAttentionBackward(RankState& st, const BlockCost& b, int32_t overlap,
                                       int layer, int mb, int32_t ring_shapes);

  // layer_blocks.cc: one layer's attention and MLP blocks.
  void TpCollective(RankState& st, CommOp op, int layer, int mb);
  void BlockForward(RankState& st, const BlockCost& b, const PassShapeIds& ids, Tag tag, int layer,
                    int mb, bool recompute, BlockEdges e = {});
  void BlockBackward(RankState& st, const BlockCost& b, const PassShapeIds& ids, Tag dgrad_tag,
                     Tag wgrad_tag, int layer, int mb, BlockEdges e = {});
  void AttentionForward(RankState& st, int layer, int mb, bool recompute, BlockEdges e = {});
  void AttentionBackward(RankState& st, int layer, int mb, BlockEdges e = {});
  // Whether `layer` runs as a parallel block (ModelSpec::parallel_block; a dense layer with
  // attention, without context parallelism).
  bool ParallelBlock(int layer) const;
  // The attention core in cp ring blocks (`backward`: the core's backward, K/V and their
  // gradients travelling), each block with its merge into the running result.
  void RingAttention(RankState& st, Tag tag, double flops, double bytes, bool backward, int layer,
                     int mb, double recompute_flops, int32_t shapes);

  // mamba_blocks.cc: a Mamba-2 layer's mixer, and the MTP modules on the last stage.
  void MambaForward(RankState& st, int layer, int mb, bool recompute);
  void MambaBackward(RankState& st, int layer, int mb);
  void MtpForward(RankState& st, int mb);
  void MtpBackward(RankState& st, int mb);
  KernelWork MtpProjectionWork() const;

  // moe_blocks.cc: the MoE block of a MoE layer.
  MoeCost MoeFor(const RankState& st) const;
  const MoeShapeIds& MoeShapesFor(const RankState& st);
  // One expert-parallel dispatch or combine (or their gradients) of `c`'s tokens, as the
  // plan's dispatcher sends them. `kernel`: which of the two the flex dispatcher's library
  // runs (kCombine for a forward combine and for a dispatch's gradient).
  enum class EpKernel { kDispatch, kCombine };
  OpId EpCollective(RankState& st, const MoeCost& c, EpKernel kernel, int layer, int mb,
                    bool blocking = true);
  // HybridEP's all-gather of the routing map before a forward dispatch, on the EP stream
  // (not blocking: the dispatch after it on that stream waits); kNoOp for other dispatchers.
  OpId RoutingMapGather(RankState& st, const MoeCost& c, int layer, int mb);
  void MoeForward(RankState& st, int layer, int mb, bool recompute);
  void MoeBackward(RankState& st, int layer, int mb);
  void ElementwiseRecompute(RankState& st, const BlockCost& b, int layer, int mb);
  double MoeTransient(const RankState& st) const;
  int ExpertLaunches(int kernels, int gemm_slots, bool forward) const;
  int ExpertGemmLaunches() const;
  int ExpertGemmUnits(bool casts) const;
  // The MoE block's pieces, which MoeForward / MoeBackward and the EP overlap's merged
  // layers (ep_overlap.cc) run in their orders. MoeRouterForward returns the router's op.
  OpId MoeRouterForward(RankState& st, const MoeCost& c, const MoeShapeIds& ids, int layer, int mb,
                        bool recompute);
  void MoeExpertsForward(RankState& st, const MoeCost& c, const MoeShapeIds& ids, int layer, int mb,
                         bool recompute);
  void SharedExpertsForward(RankState& st, const MoeCost& c, const MoeShapeIds& ids, int layer,
                            int mb, bool recompute);
  void SharedExpertsBackward(RankState& st, const MoeCost& c, const MoeShapeIds& ids, int layer,
                             int mb);
  void MoeExpertsDgrad(RankState& st, const MoeCost& c, const MoeShapeIds& ids, int layer, int mb);
  void MoeExpertsWgrad(RankState& st, const MoeCost& c, const MoeShapeIds& ids, int layer, int mb);
  void MoeRouterBackward(RankState& st, const MoeCost& c, const MoeShapeIds& ids, int layer,
                         int mb);
  // The paged stash's copies on the side stream (FrameworkOptions::moe_paged_stash).
  bool PagedStash() const { return shape_.fused_grouped_mlp && shape_.moe_paged_stash; }
  void StashOut(RankState& st, const MoeCost& c, int next_layer, int next_mb, bool backward);
  void StashBack(RankState& st, const MoeCost& c, int layer, int mb);
  void WaitForStash(RankState& st, int layer, int mb, bool backward);

  // ep_overlap.cc: Megatron-Core's EP all-to-all overlap
  // (plan.framework_options.overlap_moe_expert_parallel_comm): a forward and a backward
  // step of different micro-batches (or chunks) run as one merged step whose MoE layers
  // interleave, each pass's all-to-alls under the other's compute.
  bool MergesWith(const PipelineStep& a, const PipelineStep& b) const;
  void ForwardBackward(RankState& st, const PipelineStep& f, const PipelineStep& b);
  void MergedLayers(RankState& st, int f_layer, int f_mb, int b_layer, int b_mb, bool flush);
  // The pending forward combine (RankState::combine) joins the next compute's waits.
  void AwaitCombine(RankState& st);

  // activation_offload.cc: activation offloading (plan.cpu_offload_layers).
  double LayerStoredBytes(const RankState& st, int layer) const;
  void OffloadBeforeForward(RankState& st, int layer);
  void ReloadBeforeBackward(RankState& st, int layer);

  bool IsFirst(int vs) const { return stages_.split().IsFirst(vs); }
  bool IsLast(int vs) const { return stages_.split().IsLast(vs); }
  int VirtualStage(int chunk, int stage) const {
    return stages_.split().VirtualStage(chunk, stage);
  }
  double ActBytes(double elements) const { return elements * BytesPerElement(t_.dtype); }
  double EmbeddingParamsLocal() const { return stages_.EmbeddingParams(); }
  double EmbeddingGradBytes() const;
  // Whether a block's backward finds its sequence-gathered input in place: XLA's full
  // rematerialisation re-ran the all-gather (LayerShape::xla_remat), so no re-gather.
  bool RecomputedInputGathered() const {
    return shape_.xla_remat && p_.recompute == Recompute::kFull;
  }
  double Sbh() const { return static_cast<double>(shape_.seq) * shape_.micro_batch * m_.hidden; }

  // host_launch.cc hooks: a captured CUDA graph region around a block, when training.
  // cuda_graphs captures it (`captured`).
  void BeginGraph(RankState& st, bool captured) {
    if (captured) st.host.BeginGraph();
  }
  void EndGraph(RankState& st, bool captured) {
    if (captured) st.host.EndGraph();
  }

  const bool host_threads_;  // emit each rank's host thread (BuildStepProgram)
  const ModelSpec& m_;
  const PlanSpec& p_;
  const TrainingSpec& t_;
  const Mesh& mesh_;
  const DpPolicy policy_;  // how the framework cuts DP/ZeRO traffic
  Program prog_;
  const StageCosts stages_;  // the layer split, per-layer costs and parameters
  const LayerShape& shape_;  // stages_.shape()
  const LayerCost& layer_;   // stages_.dense_layer()
  // The kernel shapes of the layer's ops, by index in prog_'s table.
  PassShapeIds attention_ids_, mlp_ids_;
  PassShapeIds mamba_ids_;  // a Mamba-2 layer's (hybrid models)
  int32_t mtp_projection_id_ = -1, mtp_projection_bwd_id_ = -1;  // MTP modules' projection
  // Sliding-window layers: their attention's shapes (and its ring blocks).
  PassShapeIds windowed_attention_ids_;
  int32_t windowed_ring_fwd_id_ = -1, windowed_ring_bwd_id_ = -1;
  int32_t edge_fwd_id_ = -1, edge_dgrad_id_ = -1, edge_wgrad_id_ = -1;
  int32_t ring_fwd_id_ = -1, ring_bwd_id_ = -1;
  int32_t logits_fwd_id_ = -1, logits_bwd_id_ = -1;
  // tp_comm_overlap: the dense blocks' chunked shapes, indexed by PassShapeIds::overlap.
  std::vector<OverlapShapes> overlap_;
  // MoE: per expert load (a rank's routed share), its blocks' shapes.
  std::vector<std::pair<double, MoeShapeIds>> moe_ids_;
  int micro_batches_ = 0;
  int nd_ = 1;   // dense gradient group: dp x cp
  int ned_ = 1;  // expert gradient group: PlanSpec::ExpertDataDegree (MoE models only)
  // Per (group, channel) key: the collectives created so far, in issue order.
  std::vector<std::vector<int32_t>> instances_;
  const bool clone_ranks_;  // CloneRank the data-parallel replicas of a stage
  // While a rank is emitted to be copied: EmittedRank::slots, as NextComm gives them.
  std::vector<std::pair<uint32_t, int>>* slots_ = nullptr;
};

}  // namespace meshsim::schedule_internal

// The DP policy's parameter all-gathers (dp_policy.h): ZeRO-3's per-layer gathers and
// releases (GatherParams, ReleaseParams; which groups a unit gathers over, GatherParts),
// DeepSpeed's per-submodule fetches and FSDP's per-unit all-gathers with their prefetch
// windows, ZeRO-1/2's chunked all-gather after the optimizer, and Megatron's
// overlap_param_gather buckets, one ahead of the forward.
#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "sim/schedule/model_states.h"
#include "sim/schedule/step_builder_impl.h"

namespace meshsim::schedule_internal {

namespace {

// The parameters of a unit's gather parts, over all their groups.
double ParamsOf(const std::vector<GatherPart>& parts) {
  double params = 0;
  for (const GatherPart& part : parts) params += part.params;
  return params;
}

}  // namespace

// A layer's submodules in execution order, parameters on this rank: the QKV and output
// projections and the MLP's up (with gate) and down projections, split over tp, then the
// rest (norms: persistent under DeepSpeed's default threshold). A MoE layer's MoE block
// counts as one submodule; the embedding (layer -1) and a hybrid model's one-block layers are one.
std::vector<double> StepBuilder::LayerModules(double params, int layer) const {
  if (layer < 0 || m_.KindOf(layer) != LayerKind::kTransformer) return {params};
  const double h = static_cast<double>(m_.hidden), tp = p_.tp;
  const double kv = h / m_.heads * m_.kv_heads;
  std::vector<double> modules{h * (h + 2 * kv) / tp, h * h / tp};
  if (!m_.IsMoeLayer(layer)) {
    const double ffn = static_cast<double>(m_.ffn_hidden);
    modules.push_back(h * ffn * (m_.FfnMatrices() - 1) / tp);
    modules.push_back(ffn * h / tp);
  }
  double named = 0;
  for (double x : modules) named += x;
  if (named > params) return {params};  // a layer shaped otherwise: one submodule
  modules.push_back(params - named);
  return modules;
}

// Parameters of each all-gather that fetches `params` (a layer's or the embedding's).
std::vector<double> StepBuilder::Fetches(double params, int layer) const {
  if (!policy_.per_submodule) return {params};
  return SubmoduleFetches(LayerModules(params, layer), policy_);
}

// Makes `alloc` wait for the frees of the oldest gathered units until fewer than
// `max_units` remain and the bytes fit policy_.max_live_bytes. A unit whose free is not
// emitted yet (the one computing) cannot be waited for: the window then stays open.
void StepBuilder::WaitForRoom(RankState& st, double bytes, int max_units, OpId alloc) {
  while (!st.live.empty() && (st.live.size() >= static_cast<size_t>(max_units) ||
                              st.live_bytes + bytes > policy_.max_live_bytes)) {
    const RankState::LiveUnit& oldest = st.live.front();
    if (!oldest.freed) break;
    prog_.AddDep(*oldest.freed, alloc);
    st.live_bytes -= oldest.bytes;
    st.live.pop_front();
  }
}

// One unit's all-gathers (one per fetch of each part, over the part's group) on the
// gather stream, after room is made for its buffer; the next compute waits for them
// (FSDP2: for the copy-out after each).
void StepBuilder::GatherUnit(RankState& st, const std::vector<GatherPart>& parts, int layer, int mb,
                             bool backward) {
  if (backward && !policy_.gather_in_backward) return;                       // kept since forward
  if (policy_.keep_gathered && !st.kept_units.insert(layer).second) return;  // still gathered
  std::vector<std::pair<double, const std::vector<int>*>> fetches;
  double fetched = 0;
  for (const GatherPart& part : parts) {
    for (double f : Fetches(part.params, layer)) {
      fetches.emplace_back(f, part.group);
      fetched += f;
    }
  }
  if (fetched <= 0) return;
  const double bytes = fetched * kWeightBytesPerParam;
  const OpId alloc = prog_.AddMemory(st.rank, Stream::kDpGather, MemCategory::kBuffers, bytes);
  if (policy_.gather_in_backward) {
    WaitForRoom(st, bytes, backward ? policy_.backward_live_units : policy_.forward_live_units,
                alloc);
    st.live.push_back({bytes, std::nullopt});
    st.live_bytes += bytes;
  }
  for (const auto& [f, group] : fetches) {
    const double fetch_bytes = f * kWeightBytesPerParam;
    const int32_t c = NextComm(st, Channel::kZeroGather, CommOp::kAllGather, *group, fetch_bytes);
    const OpId gather =
        prog_.AddCommPart(st.rank, Stream::kDpGather, c, Tag::kZeroGather, layer, mb);
    st.host.Issue(prog_, gather, 1, layer, mb);
    st.wait.push_back(gather);
    if (policy_.copy_in_out) {
      Compute(st, Tag::kParamCopy, KernelWork{0, 2 * fetch_bytes, 1}, layer, mb);
    }
  }
}

// Frees a unit's gathered parameters after its compute: in forward only when they are
// regathered for backward, in backward always (kept ones: in the last micro-batch's).
void StepBuilder::ReleaseUnit(RankState& st, const std::vector<GatherPart>& parts, int layer,
                              bool backward, int mb) {
  if (!backward && !policy_.gather_in_backward) return;
  // Kept: freed once, after the last micro-batch's backward.
  if (policy_.keep_gathered && (mb != micro_batches_ - 1 || st.kept_units.erase(layer) == 0))
    return;
  double fetched = 0;
  for (const GatherPart& part : parts) {
    for (double f : Fetches(part.params, layer)) fetched += f;
  }
  if (fetched <= 0) return;
  Memory(st, MemCategory::kBuffers, -fetched * kWeightBytesPerParam);
  if (policy_.gather_in_backward) st.live.back().freed = st.last_compute;
}

// The ZeRO-1/2 parameter all-gather after the optimizer, in chunks of
// policy_.param_gather_bytes (one when 0), none blocking.
void StepBuilder::GatherInChunks(RankState& st, Channel ch, const std::vector<int>& group,
                                 double bytes) {
  const double chunk = policy_.param_gather_bytes > 0 ? policy_.param_gather_bytes : bytes;
  for (double left = bytes; left > 0; left -= chunk) {
    Collective(st, Stream::kDp, ch, Tag::kZeroGather, CommOp::kAllGather, group,
               std::min(chunk, left), -1, -1, false);
  }
}

// Megatron-Core overlap_param_gather (distributed_data_parallel.py, param_and_grad_buffer.py
// @ NVIDIA/Megatron-LM d98e8a64): the parameter all-gathers of the previous step's optimizer,
// one per bucket, the dense parameters' and the routed experts' apart. Each model chunk
// has its own buckets, formed as Megatron forms them: its parameters in reverse (backward)
// order, a bucket closed once it holds param_gather_bucket_params. A layer's (or the
// embedding's, or the output layer's) first forward waits for its bucket. When they are
// issued:
//  - one model chunk (no interleaving): the first bucket at the step's start; a bucket's
//    first forward, once its gather is done, issues the next one (the forward pre-hook's
//    finish_param_sync dispatches next_param_gather_bucket_group): the gathers run one
//    bucket ahead of the forward;
//  - interleaved (align_param_gather, Megatron's default there): the buckets of the first
//    two chunks at the step's start (the schedule's param_sync_func), and those of chunk
//    c + 1 when chunk c's first forward starts.
void StepBuilder::GatherParamBuckets(RankState& st) {
  if (!policy_.overlap_param_gather || nd_ == 1) return;
  const StageSplit& split = stages_.split();
  const int output_slot = m_.AllLayers() + 1;  // after the MTP layers' slots
  const int slots = m_.AllLayers() + 2;
  st.dense_buckets.slot_bucket.assign(slots, -1);
  st.expert_buckets.slot_bucket.assign(slots, -1);
  const bool tied_here =
      m_.tied_embeddings && IsFirst(VirtualStage(0, st.stage)) && stages_.HoldsOutput(st.stage);
  for (int chunk = 0; chunk < p_.virtual_stages; ++chunk) {
    const int vs = VirtualStage(chunk, st.stage);
    std::vector<std::pair<int, double>> dense, experts;  // (slot, parameters), forward order
    if (IsFirst(vs)) dense.emplace_back(0, EmbeddingParamsLocal());
    for (int layer = split.FirstLayer(vs); layer < split.EndLayer(vs); ++layer) {
      dense.emplace_back(layer + 1, stages_.LayerParams(layer).dense);
      experts.emplace_back(layer + 1, stages_.LayerParams(layer).expert);
    }
    if (IsLast(vs) && stages_.HoldsOutput(st.stage) && !tied_here) {
      dense.emplace_back(output_slot, EmbeddingParamsLocal());
    }
    for (int layer = stages_.MtpBegin(); IsLast(vs) && layer < stages_.MtpEnd(); ++layer) {
      dense.emplace_back(layer + 1, stages_.LayerParams(layer).dense);
      experts.emplace_back(layer + 1, stages_.LayerParams(layer).expert);
    }
    AddChunkBuckets(st.dense_buckets, chunk, dense);
    if (ned_ > 1) AddChunkBuckets(st.expert_buckets, chunk, experts);
  }
  if (tied_here) st.dense_buckets.slot_bucket[output_slot] = st.dense_buckets.slot_bucket[0];
  const int first_chunks = p_.virtual_stages > 1 ? 2 : 0;
  for (bool expert : {false, true}) {
    RankState::ParamBuckets& b = expert ? st.expert_buckets : st.dense_buckets;
    int end = b.bytes.empty() ? 0 : 1;
    while (end < static_cast<int>(b.bytes.size()) && b.chunk[end] < first_chunks) ++end;
    IssueBuckets(st, b, end, expert);
  }
}

void StepBuilder::AddChunkBuckets(RankState::ParamBuckets& b, int chunk,
                                  const std::vector<std::pair<int, double>>& slots) const {
  std::vector<std::pair<double, std::vector<int>>> backward;  // buckets, backward order
  double open = 0;
  std::vector<int> members;
  for (auto it = slots.rbegin(); it != slots.rend(); ++it) {
    if (it->second <= 0) continue;
    members.push_back(it->first);
    open += it->second;
    if (open >= policy_.param_gather_bucket_params) {
      backward.emplace_back(open, std::move(members));
      members.clear();
      open = 0;
    }
  }
  if (open > 0) backward.emplace_back(open, std::move(members));
  for (auto it = backward.rbegin(); it != backward.rend(); ++it) {
    const int index = static_cast<int>(b.bytes.size());
    b.bytes.push_back(it->first * GatheredWeightBytesPerParam(t_));
    b.chunk.push_back(chunk);
    b.gather.emplace_back();
    b.waited.push_back(false);
    for (int slot : it->second) b.slot_bucket[slot] = index;
  }
}

// Issues the buckets not issued yet before index `end`, in order, after the compute
// emitted so far (the forward pre-hook runs between two kernels).
void StepBuilder::IssueBuckets(RankState& st, RankState::ParamBuckets& b, int end, bool expert) {
  end = std::min(end, static_cast<int>(b.bytes.size()));
  for (; b.issued < end; ++b.issued) {
    b.gather[b.issued] =
        Collective(st, Stream::kDpGather, expert ? Channel::kExpertDp : Channel::kZeroGather,
                   Tag::kZeroGather, CommOp::kAllGather,
                   expert ? st.expert_grad_group : st.grad_group, b.bytes[b.issued], -1, -1, false);
  }
}

// The forward pre-hook of the first module using bucket slot_bucket[slot]: issues it if
// it is not yet, makes the next compute wait for it, then issues the next bucket (one
// chunk) or the next chunk's buckets (interleaved).
void StepBuilder::AwaitBucket(RankState& st, RankState::ParamBuckets& b, int slot, bool expert) {
  if (b.slot_bucket.empty()) return;
  const int i = b.slot_bucket[slot];
  if (i < 0 || b.waited[i]) return;
  IssueBuckets(st, b, i + 1, expert);
  st.wait.push_back(*b.gather[i]);
  b.waited[i] = true;
  int end = i + 2;
  if (p_.virtual_stages > 1) {
    end = i + 1;
    while (end < static_cast<int>(b.bytes.size()) && b.chunk[end] <= b.chunk[i] + 1) ++end;
  }
  IssueBuckets(st, b, end, expert);
}

void StepBuilder::AwaitParamBucket(RankState& st, int layer) {
  AwaitBucket(st, st.dense_buckets, layer + 1, false);
  if (layer >= 0 && layer < m_.AllLayers() && stages_.LayerParams(layer).expert > 0) {
    AwaitBucket(st, st.expert_buckets, layer + 1, true);
  }
}

// ZeRO-3: all-gather a layer's parameters (or the embedding's) before their compute,
// prefetched while the previous layer computes; the buffer is freed after their last
// compute by ReleaseParams.
void StepBuilder::GatherParams(RankState& st, double dense, int layer, int mb, bool backward,
                               double expert) {
  if (!policy_.sharded_params) return;
  const std::vector<GatherPart> parts = GatherParts(st, dense, expert);
  if (parts.empty()) return;
  if (!policy_.megatron_gathers) {
    GatherUnit(st, parts, layer, mb, backward);
    return;
  }
  const double params = ParamsOf(parts);
  const double bytes = params * GatheredWeightBytesPerParam(t_);
  const OpId alloc = prog_.AddMemory(st.rank, Stream::kDpGather, MemCategory::kBuffers, bytes);
  if (st.released[0]) prog_.AddDep(*st.released[0], alloc);
  for (const GatherPart& part : parts) {
    const double part_bytes = part.params * GatheredWeightBytesPerParam(t_);
    const int32_t c =
        NextComm(st, Channel::kZeroGather, CommOp::kAllGather, *part.group, part_bytes);
    const OpId gather =
        prog_.AddCommPart(st.rank, Stream::kDpGather, c, Tag::kZeroGather, layer, mb);
    st.host.Issue(prog_, gather, 1, layer, mb);
    st.wait.push_back(gather);
  }
}

void StepBuilder::ReleaseParams(RankState& st, double dense, int layer, bool backward,
                                double expert, int mb) {
  if (!policy_.sharded_params) return;
  const std::vector<GatherPart> parts = GatherParts(st, dense, expert);
  if (parts.empty()) return;
  if (!policy_.megatron_gathers) {
    ReleaseUnit(st, parts, layer, backward, mb);
    return;
  }
  const double params = ParamsOf(parts);
  Memory(st, MemCategory::kBuffers, -params * GatheredWeightBytesPerParam(t_));
  st.released[0] = st.released[1];
  st.released[1] = st.last_compute;
}

void StepBuilder::UnshardedGrads(RankState& st, double dense, double expert, int mb, bool begin) {
  if (!policy_.accumulate_unsharded_grads) return;
  if (begin ? mb != 0 : mb != micro_batches_ - 1) return;
  const double bytes = ParamsOf(GatherParts(st, dense, expert)) * GradientBytesPerParam(t_);
  Memory(st, MemCategory::kGradients, begin ? bytes : -bytes);
}

// What a sharded unit gathers: each parameter over the group its shards (and gradients)
// are split over. Dense parameters over the gradient group; a MoE layer's routed experts
// over the expert gradient group (PlanSpec::ExpertDataDegree), the group that reduces
// their gradients (ReduceGradients): experts that expert parallelism already spreads over
// every rank of the data-parallel group (ep x etp = dp x tp x cp) are whole on their rank
// and never gathered. NeMo-Automodel's MoE parallelizer shards them so: `fully_shard` of a
// block ignores its experts under expert parallelism, and the experts are a unit of their
// own on the `ep_shard` mesh only when it has more than one rank
// (nemo_automodel/components/moe/parallelizer.py apply_fsdp @ 79994aa1f), as Megatron-Core
// keeps expert parameters in their own expert-data-parallel buffers. When both groups are
// the same ranks the two gather together, as one collective.
std::vector<GatherPart> StepBuilder::GatherParts(const RankState& st, double dense,
                                                 double expert) const {
  std::vector<GatherPart> parts;
  if (expert <= 0 || st.expert_grad_group == st.grad_group) {
    if (nd_ > 1 && dense + expert > 0) parts.push_back({dense + expert, &st.grad_group});
    return parts;
  }
  if (nd_ > 1 && dense > 0) parts.push_back({dense, &st.grad_group});
  if (ned_ > 1) parts.push_back({expert, &st.expert_grad_group});
  return parts;
}

}  // namespace meshsim::schedule_internal

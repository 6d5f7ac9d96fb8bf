// The DP policy's parameter all-gathers (dp_policy.h) other than Megatron's per-layer
// ZeRO-3 gathers: DeepSpeed's per-submodule fetches and FSDP's per-unit all-gathers with
// their prefetch windows, ZeRO-1/2's chunked all-gather after the optimizer, and
// Megatron's overlap_param_gather buckets at the step's start.
#include <algorithm>
#include <cmath>

#include "sim/schedule/model_states.h"
#include "sim/schedule/step_builder_impl.h"

namespace meshsim::schedule_internal {

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

// One unit's all-gathers (one per fetch) on the gather stream, after room is made for
// its buffer; the next compute waits for them (FSDP2: for the copy-out after each).
void StepBuilder::GatherUnit(RankState& st, double params, int layer, int mb, bool backward) {
  if (backward && !policy_.gather_in_backward) return;  // kept since forward
  const std::vector<double> fetches = Fetches(params, layer);
  double fetched = 0;
  for (double f : fetches) fetched += f;
  if (fetched <= 0) return;
  const double bytes = fetched * kWeightBytesPerParam;
  const OpId alloc = prog_.AddMemory(st.rank, Stream::kDpGather, MemCategory::kBuffers, bytes);
  if (policy_.gather_in_backward) {
    WaitForRoom(st, bytes, backward ? policy_.backward_live_units : policy_.forward_live_units,
                alloc);
    st.live.push_back({bytes, std::nullopt});
    st.live_bytes += bytes;
  }
  for (double f : fetches) {
    const double fetch_bytes = f * kWeightBytesPerParam;
    const int32_t c =
        NextComm(st, Channel::kZeroGather, CommOp::kAllGather, st.grad_group, fetch_bytes);
    st.wait.push_back(
        prog_.AddCommPart(st.rank, Stream::kDpGather, c, Tag::kZeroGather, layer, mb));
    if (policy_.copy_in_out) {
      Compute(st, Tag::kParamCopy, KernelWork{0, 2 * fetch_bytes, 1}, layer, mb);
    }
  }
}

// Frees a unit's gathered parameters after its compute: in forward only when they are
// regathered for backward, in backward always.
void StepBuilder::ReleaseUnit(RankState& st, double params, int layer, bool backward) {
  if (!backward && !policy_.gather_in_backward) return;
  double fetched = 0;
  for (double f : Fetches(params, layer)) fetched += f;
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

// Megatron-Core overlap_param_gather: the parameter all-gathers of the previous step's
// optimizer, one per bucket of the stage's parameters in forward order (the embedding
// with the first and the output layer with the last), issued at the step's start; each
// layer's first forward waits for its bucket. Routed experts: one all-gather over their
// group, awaited by the first MoE layer.
void StepBuilder::GatherParamBuckets(RankState& st) {
  if (!policy_.overlap_param_gather || nd_ == 1) return;
  const StageSplit& split = stages_.split();
  st.bucket_gather.assign(m_.AllLayers() + 2, std::nullopt);  // the last: routed experts
  std::vector<int> members;  // slots (layer + 1) of the open bucket
  double open = 0, experts = 0;
  const auto close = [&] {
    if (open <= 0) return;
    const OpId id =
        Collective(st, Stream::kDpGather, Channel::kZeroGather, Tag::kZeroGather,
                   CommOp::kAllGather, st.grad_group, open * kWeightBytesPerParam, -1, -1, false);
    for (int slot : members) st.bucket_gather[slot] = id;
    members.clear();
    open = 0;
  };
  const auto add = [&](int slot, double params) {
    members.push_back(slot);
    open += params;
    if (open >= policy_.param_gather_bucket_params) close();
  };
  for (int chunk = 0; chunk < p_.virtual_stages; ++chunk) {
    const int vs = VirtualStage(chunk, st.stage);
    if (IsFirst(vs)) add(0, EmbeddingParamsLocal());
    for (int layer = split.FirstLayer(vs); layer < split.EndLayer(vs); ++layer) {
      add(layer + 1, stages_.LayerParams(layer).dense);
      experts += stages_.LayerParams(layer).expert;
    }
    if (IsLast(vs) && stages_.HoldsOutput(st.stage)) add(0, EmbeddingParamsLocal());
    for (int layer = stages_.MtpBegin(); IsLast(vs) && layer < stages_.MtpEnd(); ++layer) {
      add(layer + 1, stages_.LayerParams(layer).dense);
      experts += stages_.LayerParams(layer).expert;
    }
  }
  close();
  if (experts > 0 && ned_ > 1) {
    const OpId id =
        Collective(st, Stream::kDpGather, Channel::kExpertDp, Tag::kZeroGather, CommOp::kAllGather,
                   st.expert_grad_group, experts * kWeightBytesPerParam, -1, -1, false);
    st.bucket_gather.back() = id;
  }
}

void StepBuilder::AwaitParamBucket(RankState& st, int layer) {
  if (st.bucket_gather.empty()) return;
  for (std::optional<OpId>* gather :
       {&st.bucket_gather[layer + 1],
        layer >= 0 && m_.IsMoeLayer(layer) ? &st.bucket_gather.back() : nullptr}) {
    if (gather == nullptr || !*gather) continue;
    st.wait.push_back(**gather);
    gather->reset();
  }
}

}  // namespace meshsim::schedule_internal

// Megatron-Core's EP all-to-all overlap (--overlap-moe-expert-parallel-comm with
// --delay-wgrad-compute; plan.framework_options.overlap_moe_expert_parallel_comm): the
// schedule merges the forward step of one micro-batch with the backward step of another
// (megatron/core/pipeline_parallel/combined_1f1b.py @ NVIDIA/Megatron-LM d98e8a6: without
// pipelining backward i runs with forward i+1; with interleaving the steady state's
// forward k with backward k - warm-up) and interleaves their layers, the forward's in
// order and the backward's in reverse, pair by pair. In one pair of MoE layers
// (TransformerLayerSchedulePlan.run in megatron/core/models/common/
// model_chunk_schedule_plan.py) each pass's all-to-alls run on the communication stream
// under the other pass's compute:
//   comm:    combine bwd     | dispatch fwd, dispatch bwd      | combine fwd
//   compute: pre-dispatch fwd | mlp bwd, mlp wgrad, mlp fwd    | pre-dispatch bwd
// where pre-dispatch is attention, the router and the shared experts
// (megatron/core/models/gpt/fine_grained_callables.py) and mlp the routed experts. Here
// the collectives are not blocking: each waits for the compute it follows in the list
// above and the compute that needs its tokens waits for it, so the replay overlaps them.
// Steps that cannot merge (the warm-up's forwards, the cool-down's backwards, a forward
// and the backward of the same micro-batch) and layers without a partner (uneven chunks,
// dense or Mamba layers) run as without the overlap.
#include <algorithm>

#include "sim/schedule/step_builder_impl.h"

namespace meshsim::schedule_internal {

bool StepBuilder::MergesWith(const PipelineStep& a, const PipelineStep& b) const {
  if (!p_.framework_options.overlap_moe_expert_parallel_comm || p_.ep == 1 || !m_.IsMoe())
    return false;
  return a.forward != b.forward && (a.chunk != b.chunk || a.micro_batch != b.micro_batch);
}

void StepBuilder::AwaitCombine(RankState& st) {
  if (st.combine) st.wait.push_back(*st.combine);
  st.combine.reset();
}

// The sends leave as soon as their tensors are complete, as Megatron's merged step issues
// them (TransformerModelChunkSchedulePlan.run): the forward's output after its last
// layer's combine, on the communication stream under the backward's last pre-dispatch
// part; the input gradient after the last block's dgrad, under that block's wgrad, which
// the step delays "for overlapping with the p2p comm".
void StepBuilder::ForwardBackward(RankState& st, const PipelineStep& f, const PipelineStep& b) {
  const int fvs = VirtualStage(f.chunk, st.stage), bvs = VirtualStage(b.chunk, st.stage);
  PipelineRecv(st, true, f.chunk, f.micro_batch);
  PipelineRecv(st, false, b.chunk, b.micro_batch);
  ForwardHead(st, fvs, f.micro_batch);
  BackwardHead(st, bvs, b.micro_batch);
  const StageSplit& split = stages_.split();
  const int f_first = split.FirstLayer(fvs), f_end = split.EndLayer(fvs);
  const int b_first = split.FirstLayer(bvs), b_end = split.EndLayer(bvs);
  std::vector<OpId> output;  // what completes the forward's output so far
  st.input_grad.reset();
  for (int k = 0; k < std::max(f_end - f_first, b_end - b_first); ++k) {
    const int fl = f_first + k < f_end ? f_first + k : -1;
    const int bl = b_end - 1 - k >= b_first ? b_end - 1 - k : -1;
    const bool flush = bl == b_first && !IsFirst(bvs);
    if (fl >= 0 && bl >= 0 && m_.IsMoeLayer(fl) && m_.IsMoeLayer(bl)) {
      MergedLayers(st, fl, f.micro_batch, bl, b.micro_batch, flush);
      if (st.combine) output = {*st.combine};
      continue;
    }
    if (fl >= 0) {
      AwaitCombine(st);
      BeginLayerForward(st, fl, f.micro_batch);
      LayerForward(st, fl, f.micro_batch, false);
      EndLayerForward(st, fl);
      output = PendingOutput(st);
    }
    if (bl >= 0) LayerBackward(st, bl, b.micro_batch, flush);
  }
  AwaitCombine(st);
  ForwardTail(st, fvs, f.micro_batch);
  BackwardTail(st, bvs, b.micro_batch);
  PipelineSend(st, true, f.chunk, f.micro_batch, output);
  std::vector<OpId> input_grad;
  if (st.input_grad) input_grad.push_back(*st.input_grad);
  PipelineSend(st, false, b.chunk, b.micro_batch, input_grad);
}

// One forward MoE layer (`f_layer`, micro-batch `f_mb`) with one backward MoE layer.
void StepBuilder::MergedLayers(RankState& st, int f_layer, int f_mb, int b_layer, int b_mb,
                               bool flush) {
  const MoeCost c = MoeFor(st);
  const MoeShapeIds ids = MoeShapesFor(st);
  const CudaGraphScope& graphs = t_.cuda_graphs;
  const double transient = BeginLayerBackward(st, b_layer, b_mb);
  ElementwiseRecompute(st, c.router, b_layer, b_mb);  // selective layernorm (moe_blocks.cc)
  const OpId b_combine =
      EpCollective(st, c, EpKernel::kDispatch, b_layer, b_mb, /*blocking=*/false);
  // Forward pre-dispatch: attention, the router, the shared experts; then the dispatch.
  AwaitCombine(st);
  BeginLayerForward(st, f_layer, f_mb);
  BeginGraph(st, graphs.attn);
  AttentionForward(st, f_layer, f_mb, false);
  EndGraph(st, graphs.attn);
  MoeRouterForward(st, c, ids, f_layer, f_mb, false);
  SharedExpertsForward(st, c, ids, f_layer, f_mb, false);
  const OpId f_dispatch =
      EpCollective(st, c, EpKernel::kDispatch, f_layer, f_mb, /*blocking=*/false);
  // Backward mlp: the routed experts' input and weight gradients, then the dispatch's
  // gradient.
  st.wait.push_back(b_combine);
  ElementwiseRecompute(st, c.experts, b_layer, b_mb);  // selective moe_act
  MoeExpertsDgrad(st, c, ids, b_layer, b_mb);
  MoeExpertsWgrad(st, c, ids, b_layer, b_mb);
  const OpId b_dispatch =
      EpCollective(st, c, EpKernel::kCombine, b_layer, b_mb, /*blocking=*/false);
  // Forward mlp, then its combine, which the forward's next layer waits for.
  st.wait.push_back(f_dispatch);
  MoeExpertsForward(st, c, ids, f_layer, f_mb, false);
  st.combine = EpCollective(st, c, EpKernel::kCombine, f_layer, f_mb, /*blocking=*/false);
  EndLayerForward(st, f_layer);
  // Backward pre-dispatch: the shared experts, the router, attention.
  st.wait.push_back(b_dispatch);
  SharedExpertsBackward(st, c, ids, b_layer, b_mb);
  MoeRouterBackward(st, c, ids, b_layer, b_mb);
  BeginGraph(st, graphs.attn);
  AttentionBackward(st, b_layer, b_mb);
  EndGraph(st, graphs.attn);
  EndLayerBackward(st, b_layer, b_mb, flush, transient);
}

}  // namespace meshsim::schedule_internal

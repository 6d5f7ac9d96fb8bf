// The MoE block of a MoE layer, as Megatron-Core runs it with expert parallelism: router,
// token dispatch (all-to-all over the EP group, or DeepEP's / HybridEP's dispatch with the
// flex dispatcher), the local experts, combine (the same, reversed),
// and the shared experts as a dense, TP-split MLP. The experts' ops carry the token
// permutations around the all-to-alls (MoeCost::permute_bytes): the forward's, and their
// inverses in the input-gradient op.
#include <algorithm>
#include <optional>

#include "sim/schedule/step_builder_impl.h"

namespace meshsim::schedule_internal {

// FC1 (gate and up fused) and FC2 per expert (MoeLayerCost's GEMM slots).
constexpr int kGemmsPerExpert = 2;

MoeCost StepBuilder::MoeFor(const RankState& st) const {
  return MoeLayerCost(m_, shape_, p_.ep, st.expert_load);
}

const MoeShapeIds& StepBuilder::MoeShapesFor(const RankState& st) {
  for (const auto& [load, ids] : moe_ids_) {
    if (load == st.expert_load) return ids;
  }
  const MoeKernels k = MoeLayerKernels(m_, shape_, p_.ep, st.expert_load);
  MoeShapeIds ids{AddPassShapes(k.router), AddPassShapes(k.experts), AddPassShapes(k.shared)};
  if (k.experts.fwd.gemms.size() == 2) {
    KernelShapes fc1 = k.experts.fwd, fc2 = k.experts.fwd;
    fc1.gemms.pop_back();
    fc2.gemms.erase(fc2.gemms.begin());
    ids.experts_fc1 = prog_.AddShapes(fc1);
    ids.experts_fc2 = prog_.AddShapes(fc2);
  }
  moe_ids_.emplace_back(st.expert_load, ids);
  return moe_ids_.back().second;
}

// The host launches of the routed experts' op: its kernels, with the grouped GEMMs launched
// as calls (ExpertGemmLaunches: the op's GPU kernels count a slot per 4 experts) beside
// their per-expert work (ExpertGemmUnits); in forward without the token-count
// preprocessing kernels when a moe_preprocess graph holds them (AlltoAllPermutation's
// counts, their gather and the device-to-host copy).
int StepBuilder::ExpertLaunches(int kernels, int gemm_slots, bool forward) const {
  constexpr int kPreprocessKernels = 3;
  int launches = kernels - gemm_slots + ExpertGemmLaunches();
  if (forward && t_.cuda_graphs.moe_preprocess && shape_.moe_dispatcher == MoeDispatcher::kAllToAll)
    launches -= kPreprocessKernels;
  return launches;
}

// The host launches of one pass of the experts' GEMMs: one per GEMM call. Transformer
// Engine's GroupedLinear (FC1 and FC2 each one module call: one launch, as a dense TE
// Linear's GEMM) works per local expert besides (ExpertGemmUnits, cluster.host.expert_us
// each). The fused grouped MLP and torch._grouped_mm (LayerShape::OneKernelPerExpertGemm)
// are one kernel per GEMM, and the grouped_gemm library (plan.moe_grouped_gemm gmm) issues
// its per-expert cuBLAS GEMMs from one C++ loop inside one PyTorch op: NeMo-Automodel calls
// `grouped_gemm.ops.gmm` once per GEMM on the stacked [experts, in, out] weights
// (nemo_automodel/components/moe/experts.py @ 79994aa1f), the op's autograd function calls
// the extension's `gmm` once in forward and twice in backward, and `CublasGroupedGemm` /
// `CublasGroupedGemmVariableK` loop over the experts calling `cublasGemmEx`
// (fanshiqing/grouped_gemm csrc/grouped_gemm.cu @ v1.1.4.post8), with no Python or autograd
// work per expert and no per-expert cost.
int StepBuilder::ExpertGemmLaunches() const { return kGemmsPerExpert; }

// GroupedLinear's per-expert host work of one pass (GroupedGemmExpertUnits), with under
// FP8 a unit more per local expert for each call that quantises its input (`casts`: forward
// and input gradient, not the weight gradients, which reuse those casts); none on the
// other paths (ExpertGemmLaunches).
int StepBuilder::ExpertGemmUnits(bool casts) const {
  if (shape_.OneKernelPerExpertGemm() || shape_.grouped_gemm == MoeGroupedGemm::kGmm) return 0;
  return GroupedGemmExpertUnits(static_cast<double>(m_.experts) / p_.ep, kGemmsPerExpert,
                                casts && t_.dtype == Dtype::kFp8);
}

double StepBuilder::MoeTransient(const RankState& st) const {
  const MoeCost c = MoeFor(st);
  return c.router.transient_act_bytes + c.experts.transient_act_bytes +
         c.shared.transient_act_bytes;
}

OpId StepBuilder::EpCollective(RankState& st, const MoeCost& c, EpKernel kernel, int layer, int mb,
                               bool blocking) {
  // The all-to-all dispatcher sends a copy per chosen expert; DeepEP and HybridEP (flex)
  // one per destination GPU, through one per destination NVLink domain
  // (net/expert_dispatch.h), in their dispatch or combine kernel.
  if (p_.moe_dispatcher == MoeDispatcher::kFlex) {
    const CommOp op =
        kernel == EpKernel::kCombine ? CommOp::kExpertCombine : CommOp::kExpertDispatch;
    return Collective(st, Stream::kEp, Channel::kEp, Tag::kEpComm, op, st.ep_group, c.token_bytes,
                      layer, mb, blocking);
  }
  return Collective(st, Stream::kEp, Channel::kEp, Tag::kEpComm, CommOp::kAllToAll, st.ep_group,
                    c.dispatch_bytes, layer, mb, blocking);
}

// The routing map is a byte per (token, expert) (torch.bool); all_gather_into_tensor's
// output, in nccl-tests' convention, is the EP group's maps together.
OpId StepBuilder::RoutingMapGather(RankState& st, const MoeCost& c, int layer, int mb) {
  if (p_.ep == 1 || p_.moe_dispatcher != MoeDispatcher::kFlex ||
      p_.moe_flex_backend != MoeFlexBackend::kHybridEp) {
    return kNoOp;
  }
  const double bytes = c.tokens * m_.experts * static_cast<double>(st.ep_group.size());
  return Collective(st, Stream::kEp, Channel::kEp, Tag::kEpComm, CommOp::kAllGather, st.ep_group,
                    bytes, layer, mb, /*blocking=*/false);
}

void StepBuilder::MoeForward(RankState& st, int layer, int mb, bool recompute) {
  const MoeCost c = MoeFor(st);
  const MoeShapeIds ids = MoeShapesFor(st);
  MoeRouterForward(st, c, ids, layer, mb, recompute);
  if (p_.ep > 1) {
    EpCollective(st, c, EpKernel::kDispatch, layer, mb);
  }
  MoeExpertsForward(st, c, ids, layer, mb, recompute);
  if (p_.ep > 1) {
    EpCollective(st, c, EpKernel::kCombine, layer, mb);
  }
  SharedExpertsForward(st, c, ids, layer, mb, recompute);
}

OpId StepBuilder::MoeRouterForward(RankState& st, const MoeCost& c, const MoeShapeIds& ids,
                                   int layer, int mb, bool recompute) {
  if (!recompute)
    Memory(st, MemCategory::kActivations, c.router.stored_act_bytes + c.experts.stored_act_bytes);
  BeginGraph(st, t_.cuda_graphs.moe_router);
  const OpId routed = Compute(
      st, recompute ? Tag::kMlpRecompute : Tag::kMoeRouterFwd,
      KernelWork{c.router.fwd_flops, c.router.fwd_bytes, c.router.fwd_kernels, ids.router.fwd},
      layer, mb, recompute ? c.router.fwd_flops : 0);
  EndGraph(st, t_.cuda_graphs.moe_router);
  const OpId gathered = RoutingMapGather(st, c, layer, mb);
  // The dispatcher copies the token counts per expert to the host and synchronises on them
  // before it dispatches (DispatchSync); HybridEP's counts come from its routing map's
  // all-gather.
  st.host.Sync(prog_, {routed, gathered}, layer, mb);
  return routed;
}

// Megatron-Core's paged stash (FrameworkOptions::moe_paged_stash; megatron/core/transformer/
// moe/paged_stash.py and experts.py @ NVIDIA/Megatron-LM core_v0.19.0), on one side stream
// (PagedStashManager: "use the same stream for packing and unpacking"):
//  - PipelinePostScheduleFunction.forward, after the experts' forward, copies their saved
//    tensors out (stash_paged_tensors: the pack stream first waits for the compute stream),
//    unless the next entry of the schedule is this layer's backward
//    (remove_paged_tensor_from_stash: they stay where they are). Which op comes next is
//    known when the next experts' op is emitted: StashOut emits the copy then;
//  - PipelinePreScheduleFunction.forward, before the next experts' forward, and
//    PipelinePostScheduleFunction.backward, before their backward, make the compute stream
//    wait for the side stream (wait_for_stash_to_complete, and the unpack stream);
//  - PipelinePreScheduleFunction.backward, once the experts' backward is done, starts
//    copying back the next layer to run backward (reload_paged_tensors: the unpack stream
//    waits for the compute stream); one whose backward follows a forward instead is copied
//    back there (PipelinePostScheduleFunction.forward, no_wait): StashBack before its
//    backward.
// Each copy is MoeCost::stash_bytes through HBM in stash_kernels kernels, launched by the
// host after the op they follow (not among its leading launches).
void StepBuilder::StashOut(RankState& st, const MoeCost& c, int next_layer, int next_mb,
                           bool backward) {
  RankState::Stash& s = st.stash;
  if (!s.forward) return;
  const OpId forward = *s.forward;
  s.forward.reset();
  if (backward && s.layer == next_layer && s.mb == next_mb) return;
  const OpId copy = prog_.AddSideCompute(
      st.rank, Tag::kMoeStash, KernelWork{0, c.stash_bytes, c.stash_kernels}, s.layer, s.mb);
  prog_.AddDep(forward, copy);
  st.host.Issue(prog_, copy, c.stash_kernels, s.layer, s.mb);
  s.out.emplace_back(s.layer, s.mb);
  s.out_unwaited = s.any_unwaited = copy;
}

// Copies back the experts' saved tensors of (layer, mb) if they were copied out, after the
// compute stream's latest op.
void StepBuilder::StashBack(RankState& st, const MoeCost& c, int layer, int mb) {
  RankState::Stash& s = st.stash;
  const auto it = std::find(s.out.begin(), s.out.end(), std::pair{layer, mb});
  if (it == s.out.end()) return;
  s.out.erase(it);
  const OpId back = prog_.AddSideCompute(st.rank, Tag::kMoeStash,
                                         KernelWork{0, c.stash_bytes, c.stash_kernels}, layer, mb);
  if (st.last_compute) prog_.AddDep(*st.last_compute, back);
  st.host.Issue(prog_, back, c.stash_kernels, layer, mb);
  s.any_unwaited = back;
  s.back.push_back({{layer, mb}, back});
}

// The compute stream waits for the side stream: before the experts' forward for its latest
// copy out (wait_for_stash_to_complete waits while one is in flight), before the backward of
// (layer, mb) for everything on it, its own copy back among them.
void StepBuilder::WaitForStash(RankState& st, int layer, int mb, bool backward) {
  RankState::Stash& s = st.stash;
  if (s.out_unwaited) st.wait.push_back(*s.out_unwaited);
  if (backward && s.any_unwaited) st.wait.push_back(*s.any_unwaited);
  if (backward || s.any_unwaited == s.out_unwaited) s.any_unwaited.reset();
  s.out_unwaited.reset();
  if (!backward) return;
  const auto it = std::find_if(s.back.begin(), s.back.end(), [&](const auto& b) {
    return b.first == std::pair{layer, mb};
  });
  if (it == s.back.end()) return;
  st.wait.push_back(it->second);
  s.back.erase(it);
}

// With the element-wise kernels of expert biases and a clamped GLU (MoeCost::extra_*),
// forward here, their backward with the input gradients. FC2's bias kernels are launched
// after FC2's GEMMs: the GPU runs the experts while the host launches them.
//
// The routed experts' forward: one op, or, where Transformer Engine's GroupedLinear works
// per local expert on the host (ExpertGemmUnits), one op per call: the host issues FC1
// (with the permutation and the activation before FC2) after FC1's per-expert work, then
// does FC2's while the GPU runs FC1 (grouped_linear.py's forward loops over its own
// experts only), so FC2's work delays FC2's GEMMs, not FC1's. The two ops' time is the
// one op's.
void StepBuilder::MoeExpertsForward(RankState& st, const MoeCost& c, const MoeShapeIds& ids,
                                    int layer, int mb, bool recompute) {
  const bool stash = PagedStash() && !recompute;
  if (stash) {
    StashOut(st, c, layer, mb, /*backward=*/false);
    WaitForStash(st, layer, mb, /*backward=*/false);
  }
  const Tag tag = recompute ? Tag::kMlpRecompute : Tag::kMoeExpertsFwd;
  const int kernels = c.experts.fwd_kernels + c.extra_fwd_kernels;
  const double bytes = c.experts.fwd_bytes + c.permute_bytes + c.extra_fwd_bytes;
  const int launches = ExpertLaunches(kernels, c.experts.weight_kernels, /*forward=*/true);
  const int units = ExpertGemmUnits(/*casts=*/true);
  OpId id;
  if (units > 0 && st.host.On() && !st.host.InGraph() && ids.experts_fc2 >= 0) {
    const double fc2_share = 1.0 / m_.FfnMatrices();  // of the GEMMs' FLOPs
    const double fc1_flops = c.experts.fwd_flops * (1 - fc2_share);
    const double fc2_flops = c.experts.fwd_flops * fc2_share;
    const int fc2_kernels = c.experts.weight_kernels / 2;  // its launch slots
    const int trailing = c.extra_fwd_trailing;
    Compute(st, tag, KernelWork{fc1_flops, bytes, kernels - fc2_kernels, ids.experts_fc1}, layer,
            mb, recompute ? fc1_flops : 0, launches - 1 - trailing, 0, units / 2, 1);
    id = Compute(st, tag, KernelWork{fc2_flops, 0, fc2_kernels, ids.experts_fc2}, layer, mb,
                 recompute ? fc2_flops : 0, 1 + trailing, trailing, units - units / 2, 1);
  } else {
    id = Compute(st, tag, KernelWork{c.experts.fwd_flops, bytes, kernels, ids.experts.fwd}, layer,
                 mb, recompute ? c.experts.fwd_flops : 0, launches, c.extra_fwd_trailing, units,
                 ExpertGemmLaunches());
  }
  if (stash) {
    st.stash.layer = layer;
    st.stash.mb = mb;
    st.stash.forward = id;
  }
}

void StepBuilder::SharedExpertsForward(RankState& st, const MoeCost& c, const MoeShapeIds& ids,
                                       int layer, int mb, bool recompute) {
  if (m_.shared_experts == 0) return;
  BlockForward(st, c.shared, ids.shared, recompute ? Tag::kMlpRecompute : Tag::kMlpFwd, layer, mb,
               recompute);
}

// A selective recomputation's element-wise re-run (RecomputeModules layernorm, moe_act):
// its kernels on the compute stream, before the backward that reads what it restores.
void StepBuilder::ElementwiseRecompute(RankState& st, const BlockCost& b, int layer, int mb) {
  if (b.recompute_kernels == 0 || p_.recompute != Recompute::kSelective) return;
  Compute(st, Tag::kMlpRecompute, KernelWork{0, b.recompute_bytes, b.recompute_kernels}, layer, mb);
}

void StepBuilder::MoeBackward(RankState& st, int layer, int mb) {
  const MoeCost c = MoeFor(st);
  const MoeShapeIds ids = MoeShapesFor(st);
  // The pre-MLP norm's output is restored when the block's output gradient arrives
  // (CheckpointWithoutOutput's hook on the MoE layer's output).
  ElementwiseRecompute(st, c.router, layer, mb);
  SharedExpertsBackward(st, c, ids, layer, mb);
  if (p_.ep > 1) {
    EpCollective(st, c, EpKernel::kDispatch, layer, mb);  // gradient of combine
  }
  // The activation's output is restored before FC2's backward (its hook on FC2's output).
  ElementwiseRecompute(st, c.experts, layer, mb);
  MoeExpertsDgrad(st, c, ids, layer, mb);
  // The gradient of the dispatch (a combine): after the experts' weight gradients, which
  // Transformer Engine's GroupedLinear computes before it returns the input gradient, or
  // beside them with Megatron-Core's overlap_dispatch_backward_with_experts_wgrad
  // (plan/framework.h).
  const bool beside_wgrad =
      p_.framework_options.overlap_dispatch_backward_with_experts_wgrad && p_.ep > 1;
  std::optional<OpId> back;
  if (beside_wgrad) back = EpCollective(st, c, EpKernel::kCombine, layer, mb, /*blocking=*/false);
  MoeExpertsWgrad(st, c, ids, layer, mb);
  if (back) st.wait.push_back(*back);
  if (p_.ep > 1 && !beside_wgrad) EpCollective(st, c, EpKernel::kCombine, layer, mb);
  MoeRouterBackward(st, c, ids, layer, mb);
}

void StepBuilder::SharedExpertsBackward(RankState& st, const MoeCost& c, const MoeShapeIds& ids,
                                        int layer, int mb) {
  if (m_.shared_experts == 0) return;
  BlockBackward(st, c.shared, ids.shared, Tag::kMlpBwd, Tag::kMlpWgrad, layer, mb);
  Memory(st, MemCategory::kActivations, -c.shared.stored_act_bytes);
}

// The routed experts' input gradients, with the activation's backward (MoeCost::
// act_bwd_bytes), the inverse permutations and the backward of the expert biases' and
// clamped GLU's element-wise kernels. Their weight gradients: GEMMs only.
void StepBuilder::MoeExpertsDgrad(RankState& st, const MoeCost& c, const MoeShapeIds& ids,
                                  int layer, int mb) {
  if (PagedStash()) {
    StashOut(st, c, layer, mb, /*backward=*/true);
    StashBack(st, c, layer, mb);
    WaitForStash(st, layer, mb, /*backward=*/true);
  }
  const int kernels = c.experts.fwd_kernels + c.experts.bwd_extra_kernels + c.extra_bwd_kernels;
  Compute(st, Tag::kMoeExpertsBwd,
          KernelWork{c.experts.fwd_flops, c.act_bwd_bytes + c.permute_bytes + c.extra_bwd_bytes,
                     kernels, ids.experts.dgrad},
          layer, mb, 0, ExpertLaunches(kernels, c.experts.weight_kernels, /*forward=*/false), 0,
          ExpertGemmUnits(/*casts=*/true), ExpertGemmLaunches());
}

void StepBuilder::MoeExpertsWgrad(RankState& st, const MoeCost& c, const MoeShapeIds& ids,
                                  int layer, int mb) {
  Compute(st, Tag::kMoeExpertsWgrad,
          KernelWork{c.experts.fwd_flops, 0, c.experts.weight_kernels, ids.experts.wgrad}, layer,
          mb, 0, ExpertGemmLaunches(), 0, ExpertGemmUnits(/*casts=*/false), ExpertGemmLaunches());
  if (!PagedStash()) return;
  // The next layer of this micro-batch to run backward: the latest copied out below this one.
  std::optional<int> next;
  for (const auto& [l, b] : st.stash.out) {
    if (b == mb && l < layer && (!next || l > *next)) next = l;
  }
  if (next) StashBack(st, c, *next, mb);
}

void StepBuilder::MoeRouterBackward(RankState& st, const MoeCost& c, const MoeShapeIds& ids,
                                    int layer, int mb) {
  BeginGraph(st, t_.cuda_graphs.moe_router);
  Compute(st, Tag::kMoeRouterBwd,
          KernelWork{2 * c.router.fwd_flops, 2 * c.router.fwd_bytes, c.router.fwd_kernels,
                     ids.router.dgrad},
          layer, mb);
  EndGraph(st, t_.cuda_graphs.moe_router);
  Memory(st, MemCategory::kActivations, -(c.router.stored_act_bytes + c.experts.stored_act_bytes));
}

}  // namespace meshsim::schedule_internal

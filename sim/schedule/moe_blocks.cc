// The MoE block of a MoE layer, as Megatron-Core runs it with expert parallelism: router,
// token dispatch (all-to-all over the EP group), the local experts, combine (all-to-all),
// and the shared experts as a dense, TP-split MLP.
#include <optional>

#include "sim/schedule/step_builder_impl.h"

namespace meshsim::schedule_internal {

MoeCost StepBuilder::MoeFor(const RankState& st) const {
  return MoeLayerCost(m_, shape_, p_.ep, st.expert_load);
}

double StepBuilder::MoeTransient(const RankState& st) const {
  const MoeCost c = MoeFor(st);
  return c.experts.transient_act_bytes + c.shared.transient_act_bytes;
}

void StepBuilder::MoeForward(RankState& st, int layer, int mb, bool recompute) {
  const MoeCost c = MoeFor(st);
  if (!recompute)
    Memory(st, MemCategory::kActivations, c.router.stored_act_bytes + c.experts.stored_act_bytes);
  const Tag router = recompute ? Tag::kMlpRecompute : Tag::kMoeRouterFwd;
  const Tag experts = recompute ? Tag::kMlpRecompute : Tag::kMoeExpertsFwd;
  Compute(st, router, KernelWork{c.router.fwd_flops, c.router.fwd_bytes, c.router.fwd_kernels},
          layer, mb, recompute ? c.router.fwd_flops : 0);
  if (p_.ep > 1) {
    Collective(st, Stream::kEp, Channel::kEp, Tag::kEpComm, CommOp::kAllToAll, st.ep_group,
               c.dispatch_bytes, layer, mb);  // dispatch
  }
  Compute(st, experts, KernelWork{c.experts.fwd_flops, c.experts.fwd_bytes, c.experts.fwd_kernels},
          layer, mb, recompute ? c.experts.fwd_flops : 0);
  if (p_.ep > 1) {
    Collective(st, Stream::kEp, Channel::kEp, Tag::kEpComm, CommOp::kAllToAll, st.ep_group,
               c.dispatch_bytes, layer, mb);  // combine
  }
  if (m_.shared_experts > 0) {
    BlockForward(st, c.shared, recompute ? Tag::kMlpRecompute : Tag::kMlpFwd, layer, mb, recompute);
  }
}

void StepBuilder::MoeBackward(RankState& st, int layer, int mb) {
  const MoeCost c = MoeFor(st);
  if (m_.shared_experts > 0) {
    BlockBackward(st, c.shared, Tag::kMlpBwd, Tag::kMlpWgrad, layer, mb);
    Memory(st, MemCategory::kActivations, -c.shared.stored_act_bytes);
  }
  if (p_.ep > 1) {
    Collective(st, Stream::kEp, Channel::kEp, Tag::kEpComm, CommOp::kAllToAll, st.ep_group,
               c.dispatch_bytes, layer, mb);  // gradient of combine
  }
  Compute(st, Tag::kMoeExpertsBwd,
          KernelWork{c.experts.fwd_flops, c.experts.fwd_bytes, c.experts.fwd_kernels}, layer, mb);
  std::optional<OpId> back;
  if (p_.ep > 1) {  // gradient of dispatch, while the experts' weight gradients run
    back = Collective(st, Stream::kEp, Channel::kEp, Tag::kEpComm, CommOp::kAllToAll, st.ep_group,
                      c.dispatch_bytes, layer, mb, /*blocking=*/false);
  }
  Compute(st, Tag::kMoeExpertsWgrad,
          KernelWork{c.experts.fwd_flops, c.experts.fwd_bytes, c.experts.weight_kernels}, layer,
          mb);
  if (back) st.wait.push_back(*back);
  Compute(st, Tag::kMoeRouterBwd,
          KernelWork{2 * c.router.fwd_flops, 2 * c.router.fwd_bytes, c.router.fwd_kernels}, layer,
          mb);
  Memory(st, MemCategory::kActivations, -(c.router.stored_act_bytes + c.experts.stored_act_bytes));
}

}  // namespace meshsim::schedule_internal

// PyTorch FSDP (torch.distributed.fsdp.FullyShardedDataParallel) with every transformer
// layer wrapped as a unit (transformer_auto_wrap_policy): one all-gather of the unit's
// flat parameter before its forward and (FULL_SHARD) again before its backward, one
// reduce-scatter of its gradients after its backward in every micro-batch (all-reduce
// with NO_SHARD). plan.zero picks the sharding strategy: 3 FULL_SHARD, 2 SHARD_GRAD_OP
// (gathered once in forward and kept to backward), 0 NO_SHARD. limit_all_gathers keeps
// at most two units gathered (the rate limiter); without it forward all-gathers run as
// far ahead as the CPU issues them. backward_prefetch: BACKWARD_PRE gathers the next
// unit while the current one computes its gradients; BACKWARD_POST and NONE only after.
#include "sim/schedule/dp_policy.h"

namespace meshsim {

DpPolicy FsdpPolicy(const PlanSpec& p, const TrainingSpec& t) {
  (void)t;
  const FrameworkOptions& o = p.framework_options;
  DpPolicy d;
  d.framework = Framework::kFsdp;
  d.reduce_bucket_bytes = 0;  // one reduction per unit
  d.reduce_each_micro_batch = true;
  d.sharded_params = p.zero >= 2;
  d.gather_in_backward = p.zero == 3;
  d.forward_live_units = o.limit_all_gathers ? 2 : kUnlimitedUnits;
  d.backward_live_units = o.backward_prefetch == BackwardPrefetch::kBackwardPre ? 2 : 1;
  return d;
}

}  // namespace meshsim

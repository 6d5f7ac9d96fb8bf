// Megatron-Core's distributed data parallelism (DistributedDataParallelConfig and the
// distributed optimizer): gradients reduced in buckets as backward produces them
// (all-reduce; reduce-scatter with the distributed optimizer, ZeRO-1), the updated
// parameters all-gathered after the optimizer or, with overlap_param_gather, bucket by
// bucket under the next forward. ZeRO-2/3 are meshsim's own extensions on this path:
// gradients reduced in every micro-batch, parameters gathered per layer with one layer
// of prefetch.
#include "sim/schedule/dp_policy.h"
#include "sim/schedule/model_states.h"

namespace meshsim {

DpPolicy MegatronPolicy(const PlanSpec& p, const TrainingSpec& t) {
  const FrameworkOptions& o = p.framework_options;
  DpPolicy d;
  d.framework = Framework::kMegatron;
  d.reduce_bucket_bytes = o.bucket_size > 0 ? o.bucket_size * GradientBytesPerParam(t)
                                            : static_cast<double>(p.dp_bucket_bytes);
  d.reduce_each_micro_batch = p.zero >= 2;
  d.check_for_nan = o.check_for_nan_in_loss_and_grad;
  d.scale_before_reduce = !o.average_in_collective;
  const bool zero12 = p.zero == 1 || p.zero == 2;
  d.overlap_param_gather = zero12 && o.overlap_param_gather;
  d.param_gather_after_optimizer = zero12 && !d.overlap_param_gather;
  // The parameter buckets are the gradient buckets' parameters.
  d.param_gather_bucket_params = d.reduce_bucket_bytes / GradientBytesPerParam(t);
  d.sharded_params = p.zero == 3;
  d.megatron_gathers = true;
  return d;
}

DpPolicy PolicyFor(const PlanSpec& p, const TrainingSpec& t) {
  switch (p.framework) {
    case Framework::kDeepSpeed:
      return DeepSpeedPolicy(p, t);
    case Framework::kFsdp:
      return FsdpPolicy(p, t);
    case Framework::kFsdp2:
      return Fsdp2Policy(p, t);
    case Framework::kMegatron:
      break;
  }
  return MegatronPolicy(p, t);
}

}  // namespace meshsim

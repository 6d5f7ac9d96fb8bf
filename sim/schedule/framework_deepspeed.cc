// DeepSpeed ZeRO (deepspeed/runtime/zero/stage_1_and_2.py, stage3.py): gradients reduced
// in buckets of reduce_bucket_size elements (at the accumulation boundary for stages 0
// and 1, in every micro-batch for 2 and 3); stages 1 and 2 all-gather the updated
// parameters after the optimizer in chunks of allgather_bucket_size elements; stage 3
// fetches each submodule's parameters before its forward and backward, coalescing the
// fetches of consecutive submodules up to stage3_prefetch_bucket_size, keeping at most
// stage3_max_live_parameters gathered, and never partitioning submodules under
// stage3_param_persistence_threshold.
#include "sim/schedule/dp_policy.h"
#include "sim/schedule/model_states.h"

namespace meshsim {

DpPolicy DeepSpeedPolicy(const PlanSpec& p, const TrainingSpec& t) {
  const FrameworkOptions& o = p.framework_options;
  DpPolicy d;
  d.framework = Framework::kDeepSpeed;
  d.reduce_bucket_bytes = o.reduce_bucket_size * GradientBytesPerParam(t);
  d.reduce_each_micro_batch = p.zero >= 2;
  d.param_gather_after_optimizer = p.zero == 1 || p.zero == 2;
  d.param_gather_bytes = o.allgather_bucket_size * kWeightBytesPerParam;
  d.sharded_params = p.zero == 3;
  d.per_submodule = true;
  d.fetch_bucket_params = o.stage3_prefetch_bucket_size;
  d.persistence_threshold = o.stage3_param_persistence_threshold;
  d.max_live_bytes = o.stage3_max_live_parameters * kWeightBytesPerParam;
  return d;
}

std::vector<double> SubmoduleFetches(const std::vector<double>& modules, const DpPolicy& policy) {
  std::vector<double> fetches;
  double open = 0;  // parameters of the fetch being coalesced
  for (double m : modules) {
    if (m < policy.persistence_threshold || m <= 0) continue;
    if (open > 0 && open + m > policy.fetch_bucket_params) {
      fetches.push_back(open);
      open = 0;
    }
    open += m;
  }
  if (open > 0) fetches.push_back(open);
  return fetches;
}

}  // namespace meshsim

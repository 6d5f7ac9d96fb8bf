// How a framework cuts a step's data-parallel traffic into collectives, as data the step
// builder follows (sim/plan/framework.h has the frameworks and their knobs; one
// framework_*.cc per framework derives its policy).
//
// The builder emits, per rank:
//  - gradient reductions (all-reduce, or reduce-scatter under ZeRO >= 1) over the
//    gradient group as backward produces gradients: buckets of reduce_bucket_bytes, or
//    one per gathered unit (reduce_bucket_bytes 0);
//  - with sharded parameters (`sharded_params`), all-gathers before each unit's compute
//    on the kDpGather stream, freed after it; a gather waits for the frees that keep at
//    most `*_live_units` units (and `max_live_bytes`) gathered at once;
//  - with ZeRO-1/2 and no sharded parameters, the parameter all-gather after the
//    optimizer (in chunks of `param_gather_bytes`), or at the step's start overlapping the
//    forward (`overlap_param_gather`).
#pragma once

#include <limits>
#include <vector>

#include "sim/plan/plan_spec.h"

namespace meshsim {

struct DpPolicy {
  Framework framework = Framework::kMegatron;
  // Gradient bytes per reduction; 0: one reduction per unit of gradients the builder
  // hands over (a layer, the embedding).
  double reduce_bucket_bytes = 0;
  bool reduce_each_micro_batch = false;  // else only in the last micro-batch's backward
  // Kernels on each gradient bucket before its reduction (Megatron-Core start_grad_sync):
  // its L2 norm, tested on the host (a host-device synchronisation), and its scaling by
  // 1/dp in place; and the host's test of each micro-batch's loss.
  bool check_for_nan = false;
  bool scale_before_reduce = false;
  // ZeRO-1/2 parameter all-gather: bytes per all-gather (0: one for all parameters) and
  // whether it runs at the step's start, each bucket before its layers' first forward.
  bool param_gather_after_optimizer = false;
  double param_gather_bytes = 0;
  bool overlap_param_gather = false;
  double param_gather_bucket_params = 0;  // overlap_param_gather: parameters per bucket

  // Sharded parameters, gathered around each unit's compute (ZeRO-3, FSDP).
  bool sharded_params = false;
  bool megatron_gathers = false;   // the original per-layer gathers (megatron, ZeRO-3)
  bool gather_in_backward = true;  // false: gathered once in forward, kept to backward
  // DeepSpeed ZeRO-3: a layer is fetched per submodule, consecutive submodules
  // coalesced into one all-gather up to fetch_bucket_params; submodules under
  // persistence_threshold parameters are not partitioned (not fetched).
  bool per_submodule = false;
  double fetch_bucket_params = 0;
  double persistence_threshold = 0;
  // Units gathered at once (the computing one and those prefetched), forward/backward;
  // max(): no limit.
  int forward_live_units = 2;
  int backward_live_units = 2;
  double max_live_bytes = std::numeric_limits<double>::infinity();
  // FSDP2: per-parameter shards are copied out of the all-gather output (and gradients
  // copied into the reduce-scatter input) by kernels on the compute stream.
  bool copy_in_out = false;
  // FSDP2 reshard_after_backward false: each unit gathered once per step, at its first
  // forward, and freed after its last micro-batch's backward.
  bool keep_gathered = false;
  // FSDP2 requires_gradient_sync false: a sharded unit's gradients accumulate unsharded
  // from its first backward to the reduction in the last micro-batch.
  bool accumulate_unsharded_grads = false;
};

inline constexpr int kUnlimitedUnits = std::numeric_limits<int>::max();

// One policy per framework (framework_*.cc), for plans ValidatePlan accepted.
DpPolicy MegatronPolicy(const PlanSpec& p, const TrainingSpec& t);
DpPolicy DeepSpeedPolicy(const PlanSpec& p, const TrainingSpec& t);
DpPolicy FsdpPolicy(const PlanSpec& p, const TrainingSpec& t);
DpPolicy Fsdp2Policy(const PlanSpec& p, const TrainingSpec& t);
// The policy of p.framework.
DpPolicy PolicyFor(const PlanSpec& p, const TrainingSpec& t);

// DeepSpeed ZeRO-3: the all-gathers (parameters each) that fetch a layer whose
// submodules hold `modules` parameters on this rank, in execution order: the submodules
// under policy.persistence_threshold are skipped; the others are coalesced in order while
// the sum stays <= policy.fetch_bucket_params (a submodule larger than that alone).
std::vector<double> SubmoduleFetches(const std::vector<double>& modules, const DpPolicy& policy);

}  // namespace meshsim

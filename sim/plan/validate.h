// Checks that a plan can run a model on a cluster.
#pragma once

#include "sim/core/status.h"
#include "sim/hw/cluster_spec.h"
#include "sim/plan/plan_spec.h"
#include "sim/workload/model_spec.h"

namespace meshsim {

// Returns the first violated constraint as an InputError whose `key` is the dotted
// experiment key at fault (e.g. "plan.tp") and whose message names the numbers that
// disagree. File and line are left for the caller, who knows where the key came from.
Status ValidatePlan(const PlanSpec& plan, const TrainingSpec& training, const ModelSpec& model,
                    const ClusterSpec& cluster);

}  // namespace meshsim

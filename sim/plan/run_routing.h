// Where a run's tokens go: the model's router (ModelSpec::Routing), or, with
// plan.moe_routing: contiguous, NeMo-Automodel's FakeBalancedGate (ContiguousRouting). The
// step builder (the bytes each rank sends) and the networks (the dispatch's traffic) read
// the same routing from here.
#pragma once

#include "sim/core/expert_routing.h"
#include "sim/plan/plan_spec.h"
#include "sim/workload/model_spec.h"

namespace meshsim {

// Precondition: ValidatePlan accepted the pair (contiguous: top_k divides experts).
inline ExpertRouting RunRouting(const PlanSpec& p, const ModelSpec& m) {
  if (p.moe_routing == MoeRouting::kContiguous) return ContiguousRouting(m.experts, m.top_k);
  return m.Routing();
}

}  // namespace meshsim

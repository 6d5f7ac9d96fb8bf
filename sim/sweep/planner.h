// The device-mesh planner's space: every TP x PP x DP split of N GPUs, each with ZeRO
// stages 0..3 (only stage 0 where dp = 1, as the stages shard nothing there), for one
// model on one cluster, with fixed defaults for the rest of the plan:
//   micro_batch 1; global_batch the smallest multiple of N that is >= 64 (so that every
//   dp divides it and every pipeline has at least pp micro-batches); selective
//   recompute; sequence parallelism (used where tp > 1); 1F1B; bf16 with Adam (16 bytes of
//   model state per parameter).
// The cluster is resized to cover N GPUs (nodes = N / gpus_per_node, or one node of N
// GPUs when N < gpus_per_node) and its GPU memory set to the budget.
#pragma once

#include "sim/core/status.h"
#include "sim/sweep/enumerate.h"

namespace meshsim {

struct PlannerOptions {
  int gpus = 1;
  double budget_gib = 0;  // 0: the GPU's memory_gib
  int global_batch = 0;   // 0: the default above
  int micro_batch = 1;
};

struct PlannerSpace {
  SweepSpec spec;
  std::vector<Configuration> configs;
};

// Bad input: gpus < 1, a GPU count that whole nodes cannot hold, a budget <= 0.
Result<PlannerSpace> MakePlannerSpace(const ModelSpec& model, const ClusterSpec& cluster,
                                      const PlannerOptions& options);

int DefaultGlobalBatch(int gpus);

}  // namespace meshsim

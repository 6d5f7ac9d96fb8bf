// The device-mesh planner's space: every TP x PP x DP split of N GPUs, each with ZeRO
// stages 0..3 (only stage 0 where dp = 1, as the stages shard nothing there) and, for a
// MoE model, every expert-parallel degree ep that divides both tp x dp and the experts
// (Megatron-Core's EP folded over a stage's TP and DP ranks; `plan.ep: auto`,
// sim/sweep/enumerate.h), for one model on one cluster, with fixed defaults for the rest
// of the plan:
//   micro_batch 1; global_batch the smallest multiple of N that is >= 64 (so that every
//   dp divides it and every pipeline has at least pp micro-batches); selective
//   recompute; sequence parallelism (used where tp > 1); 1F1B; bf16 with Adam (16 bytes of
//   model state per parameter).
// The cluster is resized to cover N GPUs (nodes = N / gpus_per_node, or one node of N
// GPUs when N < gpus_per_node) and its GPU memory set to the budget less the headroom.
//
// JAX-style (PlannerOptions::jax): the same model, cluster and defaults, with plans written
// as MaxText writes them: a mesh with axes stage, data and tensor (outermost first) and
// the rules batch: data, sequence/heads/mlp/vocab: tensor, layers: stage; the planner
// varies every ICI and DCN size of the three axes (`auto`, sim/sweep/mesh_axes.h) and
// the weights' embed rule: [] (replicated: data parallelism) or data (FSDP, ZeRO-3).
// Splits whose groups have no PlanSpec equivalent (sim/plan/sharding.h) are invalid.
//
// The planner's settings are dotted keys of an experiment (PlannerKeys), so the edge
// builds its base experiment with the same decoder and checks as `meshsim run` (what-if
// links on the resized cluster included), then applies the user's --set over them.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "sim/core/status.h"
#include "sim/sweep/enumerate.h"
#include "sim/sweep/result_row.h"

namespace meshsim {

struct PlannerOptions {
  int gpus = 1;
  double budget_gib = 0;    // 0: the GPU's memory_gib
  double headroom_gib = 0;  // kept free: a plan fits in budget - headroom
  int global_batch = 0;     // 0: the default above
  int micro_batch = 1;
  bool jax = false;  // JAX-style plans (above)
};

// A dotted experiment key and its value as YAML text, e.g. {"plan.micro_batch", "1"}.
using KeyValue = std::pair<std::string, std::string>;

// The keys the planner sets on the base experiment of `cluster` (nodes, gpus_per_node,
// gpu.memory_gib under "cluster."; then the plan defaults above). Bad input: gpus < 1, a
// GPU count that whole nodes cannot hold, more GPUs than one NVLink domain but not whole
// domains (ClusterSpec::nvlink_domain_nodes), a budget or headroom < 0, a headroom that
// leaves no memory, a global batch < 0.
Result<std::vector<KeyValue>> PlannerKeys(const ClusterSpec& cluster, const PlannerOptions& o);

// The keys the planner varies (its axes, and dp derived from them; plan.ep for MoE models;
// plan.mesh and plan.rules for JAX-style plans); --set may not fix them or keys under them.
const std::vector<std::string>& PlannerAxisKeys();

// Bad input when a "KEY=VALUE" of `sets` is one of PlannerAxisKeys() or a key under one
// (plan.rules.batch=...); the error's file is "--set KEY=VALUE", its key the axis key, and
// its message says to fix such keys with `fix_with` (meshsim run, meshsim.run).
Status CheckPlannerSets(const std::vector<std::string>& sets, const std::string& fix_with);

struct PlannerSpace {
  SweepSpec spec;
  std::vector<Configuration> configs;
};

// The planner's configurations over `base` (an experiment decoded with PlannerKeys and
// the user's overrides; its plan is not validated); JAX-style when base's plan is.
PlannerSpace MakePlannerSpace(const Experiment& base, int gpus);

int DefaultGlobalBatch(int gpus);

// The planner's verdicts: every configuration evaluated (pruned by the memory bound, the
// rest simulated).
struct PlannerResult {
  ResultTable table;  // every configuration, in order
  // The valid rows: those that fit, fastest first; then the others, least memory first
  // (ties: configuration order).
  std::vector<size_t> ranked;
  int invalid = 0;              // configurations whose plan cannot run
  std::string invalid_example;  // "tp 1 pp 32: plan.pp: ..." for the first of them
};

// Evaluates `space` on `threads` threads; `progress(done, total)` after each plan.
PlannerResult RunPlanner(const PlannerSpace& space, int threads,
                         const std::function<void(int64_t, int64_t)>& progress = {});

}  // namespace meshsim

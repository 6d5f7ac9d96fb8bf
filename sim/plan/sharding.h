// Sharding inference for JAX-style plans: from a named device mesh and logical-axis
// rules (sim/plan/jax_plan.h) to the PlanSpec that runs the same step.
//
// What GSPMD does with such rules, and what meshsim replays for them, per layer:
//  - heads and mlp sharded over mesh axes T (Megatron's column/row split): the partial
//    sums of the row-parallel GEMM are all-reduced over T, or, with the residual stream's
//    sequence also sharded over T (sequence parallelism), reduce-scattered and all-gathered
//    around each block: PlanSpec tp = |T|, sequence_parallel.
//  - batch over axes D: gradients are all-reduced over D (pure data parallelism); with
//    the weights' embed dimension also sharded over D (and the CP axes), each layer's
//    weights are all-gathered before use and its gradients reduce-scattered: FSDP,
//    PlanSpec dp = |D|, zero = 3.
//  - the sequence over axes C other than T: context parallelism (ring attention), cp.
//  - experts over axes inside D and C: all-to-all dispatch, ep.
//  - layers over axes P (a `stage` axis): pipeline stages, pp, with plan.schedule.
// Rule sets outside these patterns (2D tensor parallelism with embed on T, HSDP with embed
// on part of the batch axes, a sharded kv, a mesh axis that shards nothing, groups that
// are not one contiguous block of ranks) have no PlanSpec equivalent yet and are refused.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/status.h"
#include "sim/hw/cluster_spec.h"
#include "sim/plan/jax_plan.h"
#include "sim/plan/plan_spec.h"
#include "sim/workload/model_spec.h"

namespace meshsim {

// One array whose dimensions the rules shard, for the one-axis-per-array check and for
// explain. `dims` in the array's order.
struct LogicalArray {
  std::string name;  // "attention weight"
  std::vector<LogicalDim> dims;
};
// The arrays of a transformer layer that the rules shard: weights (layers, embed,
// heads, kv), (layers, embed, mlp), (layers, experts, embed, mlp), (vocab, embed) and
// activations (batch, sequence), (batch, heads, kv), (batch, mlp), (batch, vocab).
const std::vector<LogicalArray>& LogicalArrays();

// Checks that no mesh axis shards two dimensions of one array. Errors name
// plan.rules.DIM of the later dimension.
Status CheckRules(const JaxPlan& jax);

// Sets plan's tp, pp, dp, cp, ep, zero, sequence_parallel and mesh_order from `jax`, and
// async_collectives and tp_comm_overlap from its XLA knobs (plan's other fields are kept). Errors
// (kBadInput) name the key at fault: plan.mesh when the axis sizes do not multiply to the cluster's
// GPUs, plan.mesh.ici / plan.mesh.dcn when a slice is not a node, plan.rules.DIM for a rule with no
// PlanSpec equivalent. Precondition: every rule names axes of jax.axes, each once.
Status DerivePlan(const JaxPlan& jax, const ClusterSpec& cluster, PlanSpec* plan);

// The mesh-axis names of each PlanSpec axis of `jax` ("data,fsdp"), indexed by Axis;
// empty for an axis no rule uses. Precondition: DerivePlan accepted `jax`.
std::vector<std::string> AxisNames(const JaxPlan& jax);

}  // namespace meshsim

namespace meshsim {

// One array of a layer with its global and per-device shape under a plan (either style:
// a JAX-style plan has been derived into its PlanSpec). Activations are one
// micro-batch's; a pipeline stage holds ceil(layers / pp) layers at most.
struct DeviceShape {
  std::string array;              // "attention weight"
  std::vector<std::string> dims;  // logical dimension names
  std::vector<int64_t> global;
  std::vector<int64_t> local;
};
// Weights (attention, MLP, experts when the model has them, embedding) and activations
// (residual stream, attention, MLP, logits). Precondition: ValidatePlan accepted the plan.
std::vector<DeviceShape> PerDeviceShapes(const ModelSpec& model, const PlanSpec& plan);

}  // namespace meshsim

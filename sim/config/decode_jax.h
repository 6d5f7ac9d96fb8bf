// Decoder of a JAX-style plan's keys, plan.mesh and plan.rules (config-layer internal).
#pragma once

#include "sim/config/yaml_reader.h"
#include "sim/plan/jax_plan.h"

namespace meshsim::config {

// True when `plan` is JAX-style: it has a mesh, rules or xla key.
bool IsJaxPlan(const YamlReader& plan);

// Reads plan.mesh {axes, ici, dcn}, plan.rules {DIM: AXIS | [AXIS, ...]} and plan.xla
// {async_collectives, collective_matmul} and fails
// (ConfigError, the key named) on a malformed mesh, a rule naming an unknown axis or
// one axis twice, and on the PyTorch-style degree keys (tp, pp, dp, cp, ep, zero,
// sequence_parallel, mesh_order; tp_comm_overlap, which plan.xla.collective_matmul sets),
// which a JAX-style plan derives from its rules.
// Leaves the checks that need the cluster or span rules to sim/plan/sharding.h.
JaxPlan DecodeJaxPlan(YamlReader& plan);

}  // namespace meshsim::config

// Mesh-axis sizes of a JAX-style plan as sweep axes: the dotted keys
// plan.mesh.ici.NAME and plan.mesh.dcn.NAME name the ICI or DCN size of mesh axis NAME
// (plan.mesh.axes), and `auto` on them enumerates every split of the chip count.
//
// `auto` on a group's mesh sizes: the ICI sizes of the auto axes take every ordered
// factorization of gpus_per_node / (the product of the other ICI sizes), and their DCN
// sizes every one of nodes / (the product of the other DCN sizes); the ICI choices nest
// outside the DCN ones, each kind in the sweep file's order, every auto size but the
// last of its kind ascending over the divisors of what is left, the last taking the
// rest. When the fixed sizes leave no whole number, the group has one configuration with
// its sizes as they are (DerivePlan then says which numbers disagree).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/hw/cluster_spec.h"
#include "sim/plan/jax_plan.h"

namespace meshsim {

// One mesh size a sweep varies: axis `axis` of JaxPlan::axes, its DCN size when `dcn`
// (else its ICI size).
struct MeshSizeKey {
  int axis = 0;
  bool dcn = false;
};

// True for keys of the form plan.mesh.ici.X and plan.mesh.dcn.X (X not checked).
bool IsMeshSizeKey(const std::string& key);

// The size `key` names in `jax`, or nullopt when `key` is not a mesh-size key or names
// an axis `jax` does not have.
std::optional<MeshSizeKey> ParseMeshSizeKey(const std::string& key, const JaxPlan& jax);

int& MeshSize(JaxPlan& jax, const MeshSizeKey& k);
int MeshSize(const JaxPlan& jax, const MeshSizeKey& k);

// Every assignment of the `auto_keys` sizes of `jax` as described above, in that order
// (`jax` itself once when auto_keys is empty). Precondition: no key twice.
std::vector<JaxPlan> ExpandMeshSizes(const JaxPlan& jax, const std::vector<MeshSizeKey>& auto_keys,
                                     const ClusterSpec& cluster);

// "data 2x1 fsdp 4x2 tensor 1x1": each axis with its ICI x DCN sizes, outermost first.
std::string MeshSizesText(const JaxPlan& jax);

}  // namespace meshsim

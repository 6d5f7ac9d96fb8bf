// Mesh axes placed onto the dimensions of a TPU slice's torus (sim/hw/torus.h), as
// jax.experimental.mesh_utils.create_device_mesh does for TPU v4/v5p-style tori
// (_create_device_mesh_for_nd_torus): the mesh's axes are taken innermost first (the
// last JAX mesh axis, the one that communicates most) and each is given a set of whole
// torus dimensions whose sizes multiply to the axis size, trying sets of three, then two,
// then one dimension, in the order itertools.combinations lists them (x before y before
// z). An axis that no set of whole dimensions fits (JAX: allow_split_physical_axes) takes
// factors of the dimensions still free, x first: gcd(axis left, dimension left) each.
// Inside an axis, its last dimension varies fastest, as in JAX's transpose.
//
// So on a 4x4x4 slice a mesh (fsdp 16, tensor 4) puts tensor on x (a ring of 4) and fsdp
// on the y-z plane; on 4x4x8, (data 16, tensor 8) puts tensor on z.
#pragma once

#include <vector>

#include "sim/hw/cluster_spec.h"
#include "sim/plan/jax_plan.h"
#include "sim/plan/plan_spec.h"

namespace meshsim {

// The placement (TorusSpec::placement) of axes of `sizes` (innermost first, product =
// the torus's chips) on a torus of `dims`. Precondition: product of sizes = product of
// dims; every size >= 1.
std::vector<TorusFactor> PlaceAxesOnTorus(const std::vector<int>& dims,
                                          const std::vector<int>& sizes);

// The slice-local axis sizes of a plan, innermost first: a JAX-style plan's ICI axes
// (last mesh axis first); a PyTorch-style plan's degrees in mesh_order, cut at the slice
// (the axis that straddles slices contributes its part inside one, when it divides).
// Empty when they do not tile a slice.
std::vector<int> SliceAxisSizes(const PlanSpec& plan, int chips_per_slice);

// Sets cluster->intra_node.torus.placement for `plan` when the cluster is a torus (no-op
// otherwise, or when the plan's axes do not tile a slice: the identity stays).
void PlaceRanksOnTorus(const PlanSpec& plan, ClusterSpec* cluster);

}  // namespace meshsim

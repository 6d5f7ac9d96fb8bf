// MaxText's device mesh and logical-axis rules -> a JAX-style plan's mesh and rules
// (config-layer internal, for sim/config/import_maxtext.h).
//
// The mesh: one axis per name of `mesh_axes` (base.yml @76bd53b0: data, fsdp, sequence,
// tensor), outermost first as MaxText's create_device_mesh lays them, sized by
// ici_<axis>_parallelism inside a slice and dcn_<axis>_parallelism across slices (the
// `stage` axis by ici_/dcn_pipeline_parallelism). One -1 per kind is filled as MaxText's
// fill_unspecified_mesh_axes does: the chips of a slice (the slices) over the product of
// the other values, which must divide it; the values must then multiply to it.
//
// The rules: meshsim's logical dimensions read MaxText's rule names batch <-
// activation_batch, sequence <- activation_length, embed <- embed, heads <- heads,
// kv <- kv, mlp <- mlp, vocab <- vocab, experts <- exp, layers <- layers; the first rule of
// a name counts (flax falls back to later ones only when an axis is taken), and only mesh
// axes of size > 1 are written (the others shard nothing). Two approximations, each a
// line of `warnings`: activation_embed on the heads' axes (the residual stream split along
// embed between blocks, as MaxText's 2023 rules do) is written as the sequence on them
// (sequence parallelism: the same reduce-scatter and all-gather bytes and activation
// memory); embed on part of the batch axes (HSDP: FSDP inside a slice, data parallelism
// across slices), which meshsim has no equivalent for yet, is written as embed on all the
// batch axes (FSDP over every chip: parameter all-gathers span the DCN too).
#pragma once

#include <string>
#include <vector>

#include "sim/config/maxtext_config.h"
#include "sim/plan/jax_plan.h"

namespace meshsim::config {

struct MaxTextMesh {
  JaxPlan jax;
  std::vector<std::string> notes;     // derivations (filled -1 values)
  std::vector<std::string> warnings;  // approximations
};

// The number of slices a config implies: the product of its dcn_*_parallelism values
// other than -1 (1 when all are 1 or -1).
int MaxTextSlicesOf(const MaxTextConfig& c);

// The mesh and rules for `slices` slices of `chips_per_slice` chips. Throws ConfigError
// naming the MaxText key at fault. Precondition: slices, chips_per_slice >= 1.
MaxTextMesh DecodeMaxTextMesh(const MaxTextConfig& c, int chips_per_slice, int slices);

}  // namespace meshsim::config

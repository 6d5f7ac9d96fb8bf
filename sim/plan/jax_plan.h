// A JAX-style plan as read from YAML: a device mesh with named axes and the logical-axis
// rules that map each tensor dimension onto mesh axes (MaxText's mesh_axes,
// ici_*/dcn_*_parallelism and logical_axis_rules). sim/plan/sharding.h turns it into
// the equivalent PlanSpec degrees; empty axes mean a PyTorch-style plan.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace meshsim {

// One named mesh axis. Its size is ici * dcn: ici devices inside one slice (an NVLink
// domain: a node), dcn slices (nodes) across the data-centre network.
struct MeshAxisSpec {
  std::string name;
  int ici = 1;
  int dcn = 1;
  int Size() const { return ici * dcn; }
};

// The logical tensor dimensions a rule can shard (MaxText's names, without the
// activation_ prefix: one rule per dimension for weights and activations alike).
enum class LogicalDim : uint8_t {
  kBatch,     // activations' batch
  kSequence,  // activations' sequence, between blocks (the residual stream)
  kEmbed,     // weights' model dimension (hidden)
  kHeads,     // attention heads (weights and activations)
  kKv,        // one head's dimension
  kMlp,       // the MLP's hidden dimension
  kVocab,     // the vocabulary (embedding table and logits)
  kExperts,   // MoE experts
  kLayers,    // the stacked layers (a pipelined `stage` axis)
};
constexpr int kLogicalDimCount = 9;

// The YAML name of each LogicalDim, in enum order.
inline const std::array<const char*, kLogicalDimCount>& LogicalDimNames() {
  static const std::array<const char*, kLogicalDimCount> names = {
      "batch", "sequence", "embed", "heads", "kv", "mlp", "vocab", "experts", "layers"};
  return names;
}

struct JaxPlan {
  // Outermost first, as jax.sharding.Mesh's axis_names: the last axis varies fastest
  // over the devices (neighbouring GPUs differ in it). Names are unique.
  std::vector<MeshAxisSpec> axes;
  // rules[d]: the mesh axes (indices into axes, each at most once) that shard logical
  // dimension d, major first; empty: d is replicated.
  std::array<std::vector<int>, kLogicalDimCount> rules;

  bool Empty() const { return axes.empty(); }
  const std::vector<int>& Rule(LogicalDim d) const { return rules[static_cast<int>(d)]; }
  // The product of the sizes of `axis_indices` (1 for none).
  int64_t SizeOf(const std::vector<int>& axis_indices) const {
    int64_t p = 1;
    for (const int a : axis_indices) p *= axes[a].Size();
    return p;
  }
};

}  // namespace meshsim

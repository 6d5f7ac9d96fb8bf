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

// XLA's overlap choices for a JAX-style plan (plan.xla), with the defaults that JAX's
// GPU images and MaxText's TPU configurations ship.
struct XlaOptions {
  // Async collectives scheduled by the latency-hiding scheduler
  // (--xla_gpu_enable_latency_hiding_scheduler, on in NVIDIA's JAX images; on TPU the
  // async collective fusion flags MaxText sets). false: every collective other than the
  // pipeline's sends runs on the compute stream, in program order, overlapping nothing
  // (--xla_gpu_disable_async_collectives=...).
  bool async_collectives = true;
  // Collective matmul (XLA's windowed einsum): the all-gather before a tensor-parallel
  // GEMM and the reduce-scatter after one decomposed into ring steps overlapped with
  // partial GEMMs. The same decomposition as Transformer Engine's TP communication overlap,
  // so it sets PlanSpec::tp_comm_overlap (sim/schedule/tp_overlap.cc): it acts with the
  // sequence on the heads' axes (sequence parallelism) and tensor axes of size > 1.
  // Off by default, as XLA on GPUs ships it (a threshold flag turns it on; libtpu applies
  // it above a size threshold by default).
  bool collective_matmul = false;
};

struct JaxPlan {
  // Outermost first, as jax.sharding.Mesh's axis_names: the last axis varies fastest
  // over the devices (neighbouring GPUs differ in it). Names are unique.
  std::vector<MeshAxisSpec> axes;
  // rules[d]: the mesh axes (indices into axes, each at most once) that shard logical
  // dimension d, major first; empty: d is replicated.
  std::array<std::vector<int>, kLogicalDimCount> rules;
  XlaOptions xla;

  bool Empty() const { return axes.empty(); }
  const std::vector<int>& Rule(LogicalDim d) const { return rules[static_cast<int>(d)]; }
  // The index of the axis named `name`, or -1.
  int AxisIndex(const std::string& name) const {
    for (size_t a = 0; a < axes.size(); ++a) {
      if (axes[a].name == name) return static_cast<int>(a);
    }
    return -1;
  }
  // The product of the sizes of `axis_indices` (1 for none).
  int64_t SizeOf(const std::vector<int>& axis_indices) const {
    int64_t p = 1;
    for (const int a : axis_indices) p *= axes[a].Size();
    return p;
  }
};

}  // namespace meshsim

// Activation offloading to host memory (plan.cpu_offload_layers), as Transformer Engine's
// default offload synchronizer runs it for Megatron-Core's --cpu-offloading-num-layers k
// of a model chunk of L layers (NVIDIA/TransformerEngine transformer_engine/pytorch/
// cpu_offload.py @ d0067d0, DefaultOffloadSynchronizer): layers 0 .. k-1 are offloaded;
// layer j's copy to the host starts after its forward, and its GPU memory is released
// before the forward of layer L - k + j (the compute stream waits for the copy there);
// its copy back starts (its GPU memory is allocated again) before the backward of layer
// L - 1 - k + j. At most L - k layers' activations are then on the GPU at once.
//
// The copies' time is not modelled (meshsim's topologies have no host link): a release
// and a reload are memory ops on the compute stream at the points above, as if each
// copy finished within the L - k - 1 layers between its start and the point that waits
// for it. (On GB200, NVLink-C2C moves a Llama 3 70B layer's 3.7 GB of a 2 x 8k-token
// micro-batch in ~8 ms at 450 GB/s each way; the 39 layers' forward in that window
// take far longer.)
#include "sim/schedule/step_builder_impl.h"

namespace meshsim::schedule_internal {

// What the layer's blocks store for its backward (LayerForward's allocations).
double StepBuilder::LayerStoredBytes(const RankState& st, int layer) const {
  double bytes = 0;
  if (m_.HasAttention(layer)) bytes += stages_.Attention(layer).stored_act_bytes;
  if (m_.IsMambaLayer(layer)) bytes += stages_.Mamba().stored_act_bytes;
  if (m_.IsMoeLayer(layer)) {
    const MoeCost c = MoeFor(st);
    bytes += c.router.stored_act_bytes + c.experts.stored_act_bytes;
    if (m_.shared_experts > 0) bytes += c.shared.stored_act_bytes;
  } else if (m_.HasDenseMlp(layer)) {
    bytes += layer_.mlp.stored_act_bytes;
  }
  return bytes;
}

// Before layer `layer`'s forward: releases offloaded layer j = layer - (L - k).
void StepBuilder::OffloadBeforeForward(RankState& st, int layer) {
  const int j = layer - (m_.layers - p_.cpu_offload_layers);
  if (j < 0 || j >= p_.cpu_offload_layers) return;
  Memory(st, MemCategory::kActivations, -LayerStoredBytes(st, j));
}

// Before layer `layer`'s backward: reloads offloaded layer j = layer - (L - 1 - k).
void StepBuilder::ReloadBeforeBackward(RankState& st, int layer) {
  const int j = layer - (m_.layers - 1 - p_.cpu_offload_layers);
  if (j < 0 || j >= p_.cpu_offload_layers) return;
  Memory(st, MemCategory::kActivations, LayerStoredBytes(st, j));
}

}  // namespace meshsim::schedule_internal

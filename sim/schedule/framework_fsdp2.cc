// PyTorch FSDP2 (torch.distributed.fsdp.fully_shard) on every transformer layer: each
// parameter is sharded on its own (dim-0 DTensor shards), so a unit's all-gather is
// preceded by a copy-in of the shards into one buffer and followed by a copy-out into
// the parameters, and its reduce-scatter by a copy-in of the gradients (chunk_cat). The
// copy-outs and the gradient copy-in run on the compute stream; the all-gather copy-in
// (1/dp of the unit) is not modelled. Forward keeps two units' all-gather outputs alive
// (implicit prefetch), backward prefetches the next unit explicitly. plan.zero 3 with
// reshard_after_forward true regathers in backward; zero 2, or reshard_after_forward
// false, keeps the forward's gathered parameters to backward. reshard_after_backward false
// keeps them to the step's last backward (gathered once per step) and requires_gradient_sync
// false reduces the gradients in the last micro-batch only, accumulating them unsharded
// before (FSDPModule.set_reshard_after_backward / set_requires_gradient_sync on all but the
// last micro-batch, as NeMo-Automodel's enable_fsdp_optimizations: prepare_for_grad_
// accumulation and prepare_for_final_backward, nemo_automodel/components/moe/fsdp_mixin.py).
#include "sim/schedule/dp_policy.h"

namespace meshsim {

DpPolicy Fsdp2Policy(const PlanSpec& p, const TrainingSpec& t) {
  DpPolicy d = FsdpPolicy(p, t);
  d.framework = Framework::kFsdp2;
  d.gather_in_backward = p.zero == 3 && p.framework_options.reshard_after_forward;
  d.forward_live_units = 2;
  d.backward_live_units = 2;
  d.copy_in_out = true;
  const FrameworkOptions& o = p.framework_options;
  if (!o.requires_gradient_sync) {
    d.reduce_each_micro_batch = false;
    d.accumulate_unsharded_grads = p.zero >= 2;
  }
  d.keep_gathered = p.zero == 3 && !o.reshard_after_backward;
  return d;
}

}  // namespace meshsim

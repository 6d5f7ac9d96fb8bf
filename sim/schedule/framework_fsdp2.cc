// PyTorch FSDP2 (torch.distributed.fsdp.fully_shard) on every transformer layer: each
// parameter is sharded on its own (dim-0 DTensor shards), so a unit's all-gather is
// preceded by a copy-in of the shards into one buffer and followed by a copy-out into
// the parameters, and its reduce-scatter by a copy-in of the gradients (chunk_cat). The
// copy-outs and the gradient copy-in run on the compute stream; the all-gather copy-in
// (1/dp of the unit) is not modelled. Forward keeps two units' all-gather outputs alive
// (implicit prefetch), backward prefetches the next unit explicitly. plan.zero 3 with
// reshard_after_forward true regathers in backward; zero 2, or reshard_after_forward
// false, keeps the forward's gathered parameters to backward.
#include "sim/schedule/dp_policy.h"

namespace meshsim {

DpPolicy Fsdp2Policy(const PlanSpec& p, const TrainingSpec& t) {
  DpPolicy d = FsdpPolicy(p, t);
  d.framework = Framework::kFsdp2;
  d.gather_in_backward = p.zero == 3 && p.framework_options.reshard_after_forward;
  d.forward_live_units = 2;
  d.backward_live_units = 2;
  d.copy_in_out = true;
  return d;
}

}  // namespace meshsim

// The order in which one pipeline stage runs forward and backward passes.
//
// GPipe: all forwards, then all backwards. 1F1B (Narayanan et al. 2021, Megatron-LM's
// non-interleaved schedule): p-s-1 warm-up forwards on stage s, then alternate one
// forward and one backward, then the remaining backwards. Interleaved 1F1B (Megatron's
// interleaved schedule): each stage holds v model chunks; micro-batches advance in groups
// of p through the chunks, with (p-s-1)*2 + (v-1)*p warm-up forwards.
#pragma once

#include <vector>

#include "sim/plan/plan_spec.h"

namespace meshsim {

struct PipelineStep {
  bool forward = true;
  int chunk = 0;        // model chunk on this stage, 0..v-1
  int micro_batch = 0;  // 0..m-1
};

// Steps of stage `stage` (0..pp-1) for `micro_batches` micro-batches. `extra_warmup`:
// forwards added to kInterleaved's warm-up (Megatron-Core's EP all-to-all overlap runs
// one more, so that each merged forward/backward pair is independent:
// get_pp_rank_microbatches in megatron/core/pipeline_parallel/schedules.py @ d98e8a6).
// Precondition: for kInterleaved, micro_batches % pp == 0.
std::vector<PipelineStep> StageOrder(ScheduleKind kind, int pp, int virtual_stages,
                                     int micro_batches, int stage, int extra_warmup = 0);

}  // namespace meshsim

// The layer shape the kernel-cost tests share: seq 1024, micro-batch 2, tp 2 with sequence
// parallelism and flash attention, on Megatron-Core's paths unless `megatron` is false.
#pragma once

#include "sim/workload/transformer.h"

namespace meshsim::testing {

inline LayerShape SmallLayerShape(bool megatron = true) {
  LayerShape s;
  s.seq = 1024;
  s.micro_batch = 2;
  s.tp = 2;
  s.sequence_parallel = true;
  s.flash_attention = true;
  s.megatron = megatron;
  return s;
}

}  // namespace meshsim::testing

// Shape-model parameters shared by the kernel tests.
#pragma once

#include "sim/workload/shape_compute_model.h"

namespace meshsim::testing {

// An H100-like GPU for hand-derived kernel times: 989 TFLOP/s at 0.8, 3,350 GB/s of HBM,
// 132 SMs, 256 x 128 tiles.
inline ShapeModelParams H100Like() {
  ShapeModelParams p;
  p.peak_flops_per_s = 989e12;
  p.hbm_bytes_per_s = 3350e9;
  p.matmul_efficiency = 0.8;
  p.sms = 132;
  p.tile_m = 256;
  p.tile_n = 128;
  return p;
}

}  // namespace meshsim::testing

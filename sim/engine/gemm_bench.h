// One GEMM at a time on one simulated GPU, as a GEMM microbenchmark times it (cuBLAS's or
// XLA's tables): `meshsim bench-gemm`. The kernel model's time (sim/workload/
// shape_compute_model.h: tiles, waves, the k loss, the memory roofline) plus one launch.
#pragma once

#include <vector>

#include "sim/core/dtype.h"
#include "sim/hw/cluster_spec.h"
#include "sim/workload/kernel_shapes.h"

namespace meshsim {

struct GemmBenchRow {
  GemmShape shape;
  double time_s = 0;  // the GEMM kernel and one launch (kernel_overhead_us)
  double tflops = 0;  // 2 m n k batch / time
  double peak_fraction = 0;
};

// Each shape (m x n x k, batch) on `cluster`'s GPU in `dtype` (bf16, fp16 or fp8).
std::vector<GemmBenchRow> BenchGemm(const ClusterSpec& cluster, Dtype dtype,
                                    const std::vector<GemmShape>& shapes);

}  // namespace meshsim

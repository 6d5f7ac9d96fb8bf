// The kernel model's parameters of a cluster's GPU (sim/workload/shape_compute_model.h), as
// a simulated step (Simulate), `meshsim bench-gemm` and `meshsim explain --kernels` use them.
#pragma once

#include "sim/core/dtype.h"
#include "sim/hw/cluster_spec.h"
#include "sim/plan/experiment.h"
#include "sim/workload/shape_compute_model.h"

namespace meshsim {

// The kernel model's hardware parameters of a cluster's GPU for GEMMs of `dtype`: its
// peak, SMs, tiles, k loss, HBM and the matmul efficiency of that dtype (fp8: the FP8 peak
// at `matmul_fp8`, per-tensor scaling; other kernels at the 16-bit peak), the measured
// GEMM table, flash-attention curves and the fused grouped MLP's measurement.
ShapeModelParams GpuShapeParams(const ClusterSpec& cluster, Dtype dtype);

// The kernel model's parameters of an experiment's step: its GPU's (GpuShapeParams) for the
// training dtype, with the FP8 recipe's GEMM rate, casts and amax passes, and the SMs the
// fused grouped MLP leaves to the kernels beside it.
ShapeModelParams ExperimentShapeParams(const Experiment& e);

}  // namespace meshsim

// Turns a kernel's work into time on one GPU.
#pragma once

#include "sim/core/time.h"

namespace meshsim {

// The work of one compute op: matmul FLOPs and element-wise HBM bytes.
struct KernelWork {
  double flops = 0;
  double bytes = 0;
};

class ComputeModel {
 public:
  virtual ~ComputeModel() = default;
  virtual SimTime Duration(const KernelWork& work) const = 0;
};

// Roofline over kernel classes: an op is a sequence of matmuls (compute-bound, at
// peak x matmul efficiency) and element-wise kernels (memory-bound, at HBM bandwidth x
// memory efficiency), so the two times add.
class RooflineComputeModel final : public ComputeModel {
 public:
  // flops_per_s and bytes_per_s are the achieved rates (peak x efficiency). Both > 0.
  RooflineComputeModel(double flops_per_s, double bytes_per_s, double slowdown = 1.0)
      : flops_per_s_(flops_per_s), bytes_per_s_(bytes_per_s), slowdown_(slowdown) {}
  SimTime Duration(const KernelWork& work) const override {
    return SimTime::Seconds(slowdown_ * (work.flops / flops_per_s_ + work.bytes / bytes_per_s_));
  }

 private:
  const double flops_per_s_;
  const double bytes_per_s_;
  const double slowdown_;
};

}  // namespace meshsim

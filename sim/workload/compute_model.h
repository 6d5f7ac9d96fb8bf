// Turns a kernel's work into time on one GPU.
#pragma once

#include <cassert>
#include <cstdint>
#include <memory>
#include <utility>

#include "sim/core/time.h"
#include "sim/workload/kernel_shapes.h"

namespace meshsim {

// The work of one compute op: matmul FLOPs, element-wise HBM bytes, and how many GPU
// kernels it launches (each pays a fixed launch-and-tail overhead). `shapes`: where the
// program knows how the FLOPs are cut into kernels, the index of their KernelShapes in
// the program's table (Program::ShapesOf); -1 when it does not.
struct KernelWork {
  double flops = 0;
  double bytes = 0;
  int32_t kernels = 1;
  int32_t shapes = -1;
  bool operator==(const KernelWork&) const = default;
};

// The work of a host thread's op (Program::AddHost): `launches` kernel launches issued by
// the CPU, `grouped_calls` of which are GroupedLinear GEMM calls, and `expert_units` local
// experts' host work of those calls (GroupedGemmExpertUnits), no GPU work. Its `shapes` is
// kHostLaunchShapes, which no shape table entry has; a ComputeModel times it at zero,
// HostLaunchComputeModel at launches x the launch cost, each GroupedLinear call at the
// call cost instead, + expert_units x the per-expert cost. Its `flops` holds the expert
// units (HostExpertUnits) and its `bytes` either how many of the launches are trailing
// (HostTrailingLaunches) or, in an op with expert units, the GroupedLinear calls
// (HostGroupedCalls): only a host op without trailing launches has expert units
// (HostThread::Issue).
inline constexpr int32_t kHostLaunchShapes = -2;
inline KernelWork HostLaunchWork(int32_t launches, int32_t trailing = 0, int32_t expert_units = 0,
                                 int32_t grouped_calls = 0) {
  assert(trailing == 0 || (expert_units == 0 && grouped_calls == 0));
  assert((expert_units > 0) == (grouped_calls > 0) && grouped_calls <= launches);
  return KernelWork{static_cast<double>(expert_units),
                    static_cast<double>(expert_units > 0 ? grouped_calls : trailing), launches,
                    kHostLaunchShapes};
}
inline bool IsHostLaunch(const KernelWork& w) { return w.shapes == kHostLaunchShapes; }
// The per-expert host work of a host op (HostLaunchWork's expert_units).
inline int32_t HostExpertUnits(const KernelWork& w) { return static_cast<int32_t>(w.flops); }
// The last launches of a host op that its GPU op does not wait for (HostThread::Issue).
inline int32_t HostTrailingLaunches(const KernelWork& w) {
  return HostExpertUnits(w) > 0 ? 0 : static_cast<int32_t>(w.bytes);
}
// How many of a host op's launches are GroupedLinear calls (HostLaunchWork's grouped_calls).
inline int32_t HostGroupedCalls(const KernelWork& w) {
  return HostExpertUnits(w) > 0 ? static_cast<int32_t>(w.bytes) : 0;
}

class ComputeModel {
 public:
  virtual ~ComputeModel() = default;
  virtual SimTime Duration(const KernelWork& work) const = 0;
  // The same, knowing the shapes of the op's kernels (shapes.Flops() == work.flops).
  // Models that do not look at shapes keep this default.
  virtual SimTime ShapedDuration(const KernelWork& work, const KernelShapes& /*shapes*/) const {
    return Duration(work);
  }
};

// Roofline over kernel classes: an op is a sequence of matmuls (compute-bound, at
// peak x matmul efficiency) and element-wise kernels (memory-bound, at HBM bandwidth x
// memory efficiency), so the two times add; each kernel also pays a fixed overhead
// (launch, ramp-up and tail: Hockney's n-half, as a time). Shapes are not looked at.
class RooflineComputeModel final : public ComputeModel {
 public:
  // flops_per_s and bytes_per_s are the achieved rates (peak x efficiency), both > 0.
  RooflineComputeModel(double flops_per_s, double bytes_per_s, double kernel_overhead_s = 0)
      : flops_per_s_(flops_per_s),
        bytes_per_s_(bytes_per_s),
        kernel_overhead_s_(kernel_overhead_s) {}
  SimTime Duration(const KernelWork& work) const override {
    if (work.flops == 0 && work.bytes == 0) return SimTime::Zero();
    return SimTime::Seconds(work.flops / flops_per_s_ + work.bytes / bytes_per_s_ +
                            work.kernels * kernel_overhead_s_);
  }

 private:
  const double flops_per_s_;
  const double bytes_per_s_;
  const double kernel_overhead_s_;
};

// A GPU's ComputeModel and the host CPU beside it: host ops (IsHostLaunch) take
// work.kernels x `launch_s` (one kernel launch of host time, sim/schedule/host_launch.h),
// each GroupedLinear call among them `call_s` instead (< 0: launch_s), and HostExpertUnits
// x `expert_s` (one local expert's host work in a GroupedLinear GEMM call; < 0:
// launch_s); every other op is the GPU model's.
class HostLaunchComputeModel final : public ComputeModel {
 public:
  HostLaunchComputeModel(std::unique_ptr<ComputeModel> gpu, double launch_s, double expert_s = -1,
                         double call_s = -1)
      : gpu_(std::move(gpu)),
        launch_s_(launch_s),
        expert_s_(expert_s < 0 ? launch_s : expert_s),
        call_s_(call_s < 0 ? launch_s : call_s) {}
  SimTime Duration(const KernelWork& work) const override {
    if (IsHostLaunch(work)) {
      const int32_t units = HostExpertUnits(work);
      if (units == 0) return SimTime::Seconds(work.kernels * launch_s_);
      // The same sum as without calls when they cost a launch (the same bits).
      const int32_t calls = HostGroupedCalls(work);
      const double launches = call_s_ == launch_s_
                                  ? work.kernels * launch_s_
                                  : (work.kernels - calls) * launch_s_ + calls * call_s_;
      return SimTime::Seconds(launches + units * expert_s_);
    }
    return gpu_->Duration(work);
  }
  SimTime ShapedDuration(const KernelWork& work, const KernelShapes& shapes) const override {
    return gpu_->ShapedDuration(work, shapes);
  }

 private:
  const std::unique_ptr<ComputeModel> gpu_;
  const double launch_s_;
  const double expert_s_;
  const double call_s_;
};

}  // namespace meshsim

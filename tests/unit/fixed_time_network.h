// A fake Network for replay tests: every collective and transfer takes the same time,
// whatever its group and bytes, so a test's expected step follows from its kernels alone.
#pragma once

#include <functional>
#include <span>
#include <utility>
#include <vector>

#include "sim/core/simulator.h"
#include "sim/net/network.h"

namespace meshsim {

class FixedTimeNetwork final : public Network {
 public:
  explicit FixedTimeNetwork(SimTime each) : each_(each) {}
  void Start(Simulator& sim, CommOp, std::span<const int>, double, std::function<void()> done,
             std::span<const std::vector<int>>) override {
    sim.Schedule(each_, std::move(done));
  }
  std::vector<LinkUsage> Usage(double) const override { return {}; }
  double IntraNodeBytes() const override { return 0; }
  double InterNodeBytes() const override { return 0; }

 private:
  SimTime each_;
};

}  // namespace meshsim

// Simulate on injected models (Models, sim/engine/simulation.h): fakes make exact what the
// real models only approximate, and a recording network sees what the replay asks of it.
#include "sim/engine/simulation.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <string>
#include <tuple>
#include <vector>

#include "sim/plan/validate.h"
#include "tests/unit/test_fixtures.h"

namespace meshsim {
namespace {

using testing::FakeModels;

// One group's share of a collective, as the network saw it.
using Traffic = std::tuple<CommOp, double, std::vector<int>>;  // op, bytes, members sorted

// Free like FreeNetwork, and records the traffic of every group it carries: the group
// replayed, and each mirror of it.
class RecordingNetwork final : public Network {
 public:
  explicit RecordingNetwork(std::vector<Traffic>* log, int* starts) : log_(log), starts_(starts) {}
  void Start(Simulator& sim, CommOp op, std::span<const int> gpus, double bytes,
             std::function<void()> done, std::span<const std::vector<int>> mirrors) override {
    ++*starts_;
    Record(op, bytes, gpus);
    for (const std::vector<int>& m : mirrors) Record(op, bytes, m);
    sim.Schedule(SimTime::Zero(), std::move(done));
  }
  std::vector<LinkUsage> Usage(double) const override { return {}; }
  double IntraNodeBytes() const override { return 0; }
  double InterNodeBytes() const override { return 0; }

 private:
  void Record(CommOp op, double bytes, std::span<const int> gpus) {
    std::vector<int> members(gpus.begin(), gpus.end());
    std::sort(members.begin(), members.end());
    log_->emplace_back(op, bytes, std::move(members));
  }
  std::vector<Traffic>* log_;
  int* starts_;
};

// 8 GPUs in one node, tp x cp x dp x pp of the small model, 4 micro-batches per pipeline.
Experiment Plan(int tp, int cp, int dp, int pp) {
  Experiment e = testing::SmallPipeline(pp, 4 * dp, ScheduleKind::kOneFOneB);
  e.cluster = testing::OneNode(tp * cp * dp * pp);
  e.plan.tp = tp;
  e.plan.cp = cp;
  e.plan.dp = dp;
  EXPECT_TRUE(ValidatePlan(e.plan, e.training, e.model, e.cluster).ok());
  return e;
}

struct Recorded {
  std::vector<Traffic> traffic;  // sorted
  int starts = 0;
  std::unique_ptr<Simulation> sim;
};

Recorded Record(const Experiment& e, bool full_replay) {
  Recorded r;
  SimulationOptions options;
  options.full_replay = full_replay;
  r.sim = Simulate(e, options,
                   Models{std::make_unique<testing::FlopsOnlyComputeModel>(),
                          std::make_unique<RecordingNetwork>(&r.traffic, &r.starts)});
  std::sort(r.traffic.begin(), r.traffic.end());
  return r;
}

class SymmetricReplay : public ::testing::TestWithParam<std::array<int, 4>> {};

// Symmetric replay starts each collective once for the replayed ranks and hands the
// network its symmetric copies as mirrors: the network must see exactly the traffic of a
// full replay, group for group (members compared as sets: a mirror is a translate of the
// replayed group and may list them in another ring order).
TEST_P(SymmetricReplay, HandsTheNetworkEveryGroupsTraffic) {
  const auto [tp, cp, dp, pp] = GetParam();
  const Experiment e = Plan(tp, cp, dp, pp);
  const Recorded full = Record(e, true);
  const Recorded symmetric = Record(e, false);
  ASSERT_TRUE(full.sim->replay.completed) << full.sim->replay.stall;
  ASSERT_TRUE(symmetric.sim->replay.completed) << symmetric.sim->replay.stall;
  EXPECT_EQ(full.sim->simulated_ranks.size(), 8u);
  EXPECT_EQ(symmetric.sim->simulated_ranks.size(), static_cast<size_t>(pp));
  EXPECT_LT(symmetric.starts, full.starts);
  EXPECT_EQ(symmetric.traffic, full.traffic);
  // On free, equal models the symmetric step is the full one, to the picosecond.
  EXPECT_EQ(symmetric.sim->replay.step_time, full.sim->replay.step_time);
}

INSTANTIATE_TEST_SUITE_P(Plans, SymmetricReplay,
                         ::testing::Values(std::array<int, 4>{2, 1, 2, 2},
                                           std::array<int, 4>{2, 2, 2, 1},
                                           std::array<int, 4>{1, 1, 4, 2}),
                         [](const ::testing::TestParamInfo<std::array<int, 4>>& info) {
                           const auto& p = info.param;
                           return "tp" + std::to_string(p[0]) + "cp" + std::to_string(p[1]) + "dp" +
                                  std::to_string(p[2]) + "pp" + std::to_string(p[3]);
                         });

// A straggler's slowdown multiplies each of its kernels' times. FLOPs-only kernel times
// are whole picoseconds, so on one GPU (no collective, memory ops instant) a slowdown of
// 2 doubles the step exactly.
TEST(Simulate, StragglerOnOneGpuDoublesTheStepExactly) {
  const Experiment base = Plan(1, 1, 1, 1);
  Experiment slow = base;
  slow.cluster.what_if.stragglers.push_back({0, 2.0});
  const SimTime t = Simulate(base, {}, FakeModels())->replay.step_time;
  ASSERT_GT(t, SimTime::Zero());
  EXPECT_EQ(Simulate(slow, {}, FakeModels())->replay.step_time.picoseconds(), 2 * t.picoseconds());
}

// On a free network data parallelism costs nothing: each of 4 data-parallel ranks runs
// the 4 micro-batches that a single GPU runs alone, in the same time to the picosecond.
TEST(Simulate, DataParallelismIsFreeOnAFreeNetwork) {
  const auto one = Simulate(Plan(1, 1, 1, 1), {}, FakeModels());
  const auto four = Simulate(Plan(1, 1, 4, 1), {}, FakeModels());
  ASSERT_TRUE(four->replay.completed) << four->replay.stall;
  EXPECT_EQ(four->replay.step_time, one->replay.step_time);
  EXPECT_EQ(four->stats.ranks[3].breakdown.exposed_dp_s, 0.0);
}

// The two-argument Simulate runs on DefaultModels: the same step, bit for bit.
TEST(Simulate, DefaultOverloadRunsOnDefaultModels) {
  const Experiment e = Plan(2, 1, 2, 2);
  const auto implicit = Simulate(e);
  const auto explicit_models = Simulate(e, {}, DefaultModels(e));
  EXPECT_EQ(implicit->replay.step_time, explicit_models->replay.step_time);
  EXPECT_EQ(implicit->replay.events, explicit_models->replay.events);
  EXPECT_EQ(implicit->replay.intra_node_bytes, explicit_models->replay.intra_node_bytes);
}

}  // namespace
}  // namespace meshsim

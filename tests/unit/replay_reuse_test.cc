// The replay's compact per-op records: kept per thread for the next configuration of a
// sweep (as are the step analysis' edge arrays and the program's op array), which must
// leave no trace, and with any number of dependents per op (a record once counted them
// in 16 bits).
#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

#include "sim/config/loader.h"
#include "sim/engine/replay.h"
#include "sim/engine/simulation.h"
#include "sim/report/summary.h"
#include "test_fixtures.h"

namespace meshsim {
namespace {

std::string SummaryOf(const std::vector<std::string>& sets) {
  Result<Experiment> e = LoadExperimentFile(
      std::string(MESHSIM_SOURCE_DIR) + "/workloads/experiments/default.yaml", sets);
  EXPECT_TRUE(e.ok());
  nlohmann::ordered_json j = BuildSummary(*Simulate(e.value()), SummaryOptions{true});
  return j.dump(1);
}

std::string OnFreshThread(const std::vector<std::string>& sets) {
  std::string out;
  std::thread t([&] { out = SummaryOf(sets); });
  t.join();
  return out;
}

const std::vector<std::string> kLarge = {"plan.micro_batch=1", "plan.global_batch=64"};
const std::vector<std::string> kSmall = {"plan.zero=3", "plan.global_batch=8",
                                         "cluster.network_model=alpha_beta"};

TEST(ReplayReuse, SameResultsAfterALargerAndASmallerStep) {
  std::string large_first, small_after_large, large_after_small;
  std::thread t([&] {
    large_first = SummaryOf(kLarge);
    small_after_large = SummaryOf(kSmall);
    large_after_small = SummaryOf(kLarge);
  });
  t.join();
  EXPECT_EQ(small_after_large, OnFreshThread(kSmall));
  EXPECT_EQ(large_after_small, large_first);
  EXPECT_NE(large_first, small_after_large);  // the two steps do differ
}

// One kernel that 70,000 others wait for (more than a record's 16-bit count holds): all
// of them must run once it ends, none before.
TEST(ReplayRecords, AnOpWithMoreDependentsThanARecordCounts) {
  constexpr int kWaiting = 70000;
  Program p(2);
  const OpId first = p.AddCompute(0, Tag::kMlpFwd, KernelWork{2e9, 0, 1});  // 2 us
  std::vector<OpId> waiting;
  for (int i = 0; i < kWaiting; ++i) {
    const OpId w = p.AddCompute(1, Tag::kMlpFwd, KernelWork{1e6, 0, 1});  // 1 ns each
    p.AddDep(first, w);
    waiting.push_back(w);
  }
  p.Finalize();
  testing::FlopsOnlyComputeModel compute;
  testing::FreeNetwork network;
  const ReplayResult r = Replay(p, compute, network);
  ASSERT_TRUE(r.completed) << r.stall;
  EXPECT_EQ(r.end[first], SimTime::Picoseconds(2'000'000));
  EXPECT_EQ(r.start[waiting.front()], r.end[first]);
  EXPECT_EQ(r.end[waiting.back()], SimTime::Picoseconds(2'000'000 + kWaiting * 1'000));
}

// The records' dependency counts are the replay's countdown: a second replay of the same
// program counts them again and gives the same times.
TEST(ReplayRecords, TheSameProgramReplaysTwice) {
  Program p(2);
  const OpId a = p.AddCompute(0, Tag::kMlpFwd, KernelWork{2e9, 0, 1});
  const OpId b = p.AddCompute(1, Tag::kMlpFwd, KernelWork{1e9, 0, 1});
  const OpId c = p.AddCompute(1, Tag::kMlpBwd, KernelWork{1e9, 0, 1});
  const OpId d = p.AddCompute(0, Tag::kMlpBwd, KernelWork{3e9, 0, 1});
  p.AddDep(a, c);
  p.AddDep(b, d);
  p.AddDep(a, d);
  p.Finalize();
  EXPECT_EQ(p.Records()[d].pending, 2u);  // what AddDep counted
  testing::FlopsOnlyComputeModel compute;
  testing::FreeNetwork network;
  const ReplayResult first = Replay(p, compute, network);
  const ReplayResult second = Replay(p, compute, network);
  ASSERT_TRUE(first.completed) << first.stall;
  ASSERT_TRUE(second.completed) << second.stall;
  EXPECT_EQ(first.start, second.start);
  EXPECT_EQ(first.end, second.end);
  EXPECT_EQ(second.start[c], std::max(first.end[a], first.end[b]));  // waited again
  EXPECT_EQ(second.start[d], std::max(first.end[a], first.end[b]));
}

}  // namespace
}  // namespace meshsim

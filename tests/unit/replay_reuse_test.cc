// The replay keeps its per-op records, the step analysis its edge arrays and the program
// its op array per thread, for the next configuration of a sweep. Reusing them must leave
// no trace: a step replayed after another, larger or smaller one gives the same results
// as on a thread that never replayed anything.
#include <gtest/gtest.h>

#include <thread>

#include "sim/config/loader.h"
#include "sim/engine/simulation.h"
#include "sim/report/summary.h"

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

}  // namespace
}  // namespace meshsim

// The SMs that the flex dispatcher's (HybridEP's, DeepEP's) kernels hold
// (plan.framework_options.moe_flex_dispatcher_num_sms): while an expert dispatch or
// combine runs, the compute beside it runs on the GPU's other SMs.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "tests/unit/experiment_step.h"

namespace meshsim {
namespace {

// One GB200 tray pair, Qwen3-30B-A3B, EP 8 with HybridEP and the EP overlap: its
// dispatches and combines run under the other micro-batch's compute (its recipe gives
// HybridEP 32 of the 148 SMs; the tests set their own).
const std::string kExperiment = std::string(MESHSIM_SOURCE_DIR) +
                                "/workloads/experiments/public-gb200-bridge-qwen3-30b-a3b.yaml";
const std::string kKey = "plan.framework_options.moe_flex_dispatcher_num_sms";

// Without the recipe's paged stash, whose side-stream copies also slow the compute beside
// them (counted with the interference).
StepSummary Step(std::vector<std::string> sets) {
  sets.push_back("plan.framework_options.moe_paged_stash=false");
  return testing::ExperimentStep(kExperiment, std::move(sets));
}

std::string Sms(int n) { return kKey + "=" + std::to_string(n); }

// More SMs for the dispatcher, slower compute beside it: 16 SMs slow it by 16 / 132 =
// 0.121, less than the all-to-all default (0.19) that 0 keeps; 48 by 48 / 100 = 0.48.
TEST(DispatcherSms, TheComputeBesideItKeepsTheOtherSms) {
  const StepSummary unstated = Step({Sms(0)});
  const StepSummary few = Step({Sms(16)});
  const StepSummary many = Step({Sms(48)});
  ASSERT_GT(unstated.time_breakdown_s.comm_interference, 0);
  EXPECT_LT(few.time_breakdown_s.comm_interference, unstated.time_breakdown_s.comm_interference);
  EXPECT_GT(many.time_breakdown_s.comm_interference, unstated.time_breakdown_s.comm_interference);
  EXPECT_LT(few.step_time_s, many.step_time_s);
  // Roughly in proportion to the slowdown (the overlapped time shifts a little with it).
  const double ratio =
      many.time_breakdown_s.comm_interference / few.time_breakdown_s.comm_interference;
  EXPECT_GT(ratio, 0.5 * 0.48 / (16.0 / 132));
  EXPECT_LT(ratio, 1.5 * 0.48 / (16.0 / 132));
}

// Interference turned off stays off.
TEST(DispatcherSms, NoInterferenceWhenItIsOff) {
  const StepSummary off = Step({Sms(32), "cluster.efficiency.comm_interference=0"});
  EXPECT_EQ(off.time_breakdown_s.comm_interference, 0);
}

TEST(DispatcherSms, BadInputNamesTheKey) {
  EXPECT_EQ(testing::ExperimentLoadError(kExperiment, {Sms(32)}), "");
  for (int bad : {-1, 148, 200}) {
    const std::string e = testing::ExperimentLoadError(kExperiment, {Sms(bad)});
    EXPECT_NE(e.find(kKey), std::string::npos) << e;
  }
}

}  // namespace
}  // namespace meshsim

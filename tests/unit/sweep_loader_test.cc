// The sweep loader's base overrides (LoadSweepText's base_sets), which the Python API
// uses to sweep an experiment loaded with overrides.
#include "sim/config/sweep_loader.h"

#include <gtest/gtest.h>

#include <string>

namespace meshsim {
namespace {

// A sweep file standing in workloads/sweeps/ (it is not read), over the default
// experiment: tp 2, pp 4, dp 2, zero 1 on 16 GPUs.
const std::string kPath = std::string(MESHSIM_SOURCE_DIR) + "/workloads/sweeps/base-sets.yaml";
const std::string kText =
    "name: s\nbase: ../experiments/default.yaml\naxes:\n  plan.zero: [0, 3]\n";

TEST(SweepLoader, BaseSetsApplyBeforeTheAxes) {
  const Result<SweepSpec> spec = LoadSweepText(kText, kPath, {"plan.tp=4", "plan.dp=1"});
  ASSERT_TRUE(spec.ok()) << spec.error().ToString();
  ASSERT_EQ(spec.value().groups.size(), 2u);
  for (int g = 0; g < 2; ++g) {
    const PlanSpec& p = spec.value().groups[g].experiment.plan;
    EXPECT_EQ(p.tp, 4);  // the base set, not the file's 2
    EXPECT_EQ(p.dp, 1);
    EXPECT_EQ(p.pp, 4);  // the file's
    EXPECT_EQ(p.zero, g == 0 ? 0 : 3);
  }
}

TEST(SweepLoader, AnAxisOverridesABaseSetOfTheSameKey) {
  const Result<SweepSpec> spec = LoadSweepText(kText, kPath, {"plan.zero=2"});
  ASSERT_TRUE(spec.ok()) << spec.error().ToString();
  EXPECT_EQ(spec.value().groups[0].experiment.plan.zero, 0);
  EXPECT_EQ(spec.value().groups[1].experiment.plan.zero, 3);
}

TEST(SweepLoader, ABadBaseSetNamesItsSetArgument) {
  const Result<SweepSpec> spec = LoadSweepText(kText, kPath, {"plan.tpp=2"});
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.error().file, "--set plan.tpp=2");
  EXPECT_EQ(spec.error().key, "plan.tpp");
}

TEST(SweepLoader, WithoutBaseSetsTheFileIsUnchanged) {
  const Result<SweepSpec> spec = LoadSweepText(kText, kPath);
  ASSERT_TRUE(spec.ok()) << spec.error().ToString();
  EXPECT_EQ(spec.value().groups[0].experiment.plan.tp, 2);
  EXPECT_EQ(spec.value().groups[0].experiment.plan.dp, 2);
}

}  // namespace
}  // namespace meshsim

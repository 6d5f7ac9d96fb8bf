// The sweep loader's base overrides (LoadSweepText's base_sets), which the Python API
// uses to sweep an experiment loaded with overrides.
#include "sim/config/sweep_loader.h"

#include <gtest/gtest.h>

#include <string>

#include "sim/config/loader.h"

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

// An inline base is decoded from a copy of the tree (one per combination), which has no
// file positions; errors about its keys point at the base as written.
TEST(SweepLoader, AnErrorInAnInlineBaseHasItsLineAndColumn) {
  const std::string text =
      "name: s\n"                                                      // line 1
      "base:\n"                                                        // 2
      "  name: b\n"                                                    // 3
      "  model: ../models/llama2-7b.yaml\n"                            // 4
      "  cluster: ../../topologies/dgx-h100.yaml\n"                    // 5
      "  plan: {tp: 1, pp: 1, dp: 8, zero: seven, global_batch: 8}\n"  // 6
      "  training: {dtype: bf16}\n"                                    // 7
      "axes:\n"                                                        // 8
      "  plan.tp: [1, 2]\n";                                           // 9
  const Result<SweepSpec> spec = LoadSweepText(text, kPath);
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.error().file, kPath);
  EXPECT_EQ(spec.error().key, "base.plan.zero");
  EXPECT_EQ(spec.error().line, 6);     // the zero: seven of line 6
  EXPECT_EQ(spec.error().column, 37);  // "  plan: {tp: 1, pp: 1, dp: 8, zero: " is 36 characters
}

// A cluster file merged with cluster_overrides keeps its positions: an error about a key
// the override did not touch points at that key in the cluster file.
TEST(SweepLoader, ClusterOverridesKeepTheClusterFilesPositions) {
  const std::string exp_path = std::string(MESHSIM_SOURCE_DIR) + "/workloads/experiments/x.yaml";
  const Result<Experiment> e = LoadExperimentText(
      "name: x\nmodel: ../models/llama3-70b.yaml\ncluster: ../../topologies/gb200-nvl72.yaml\n"
      "cluster_overrides: {nodes: 20}\nplan: {tp: 4, pp: 1, dp: 20, global_batch: 80}\n"
      "training: {dtype: bf16}\n",
      exp_path);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().key, "cluster.nvlink_domain_nodes");
  EXPECT_NE(e.error().file.find("gb200-nvl72.yaml"), std::string::npos);
  EXPECT_GT(e.error().line, 1);  // the key's own line, not the top of the file
}

}  // namespace
}  // namespace meshsim

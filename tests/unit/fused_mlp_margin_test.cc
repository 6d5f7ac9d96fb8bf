// cuDNN frontend's CUDNNFE_CLUSTER_OVERLAP_MARGIN (plan.framework_options.
// fused_grouped_mlp_cluster_margin): the fused grouped MLP's forward and input-gradient
// kernels launch that many 2-SM clusters fewer than fit, so their waves are laid over the
// other SMs; the weight-gradient kernel keeps them all.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "sim/plan/framework.h"
#include "sim/workload/shape_compute_model.h"
#include "tests/unit/experiment_step.h"
#include "tests/unit/kernel_fixtures.h"

namespace meshsim {
namespace {

// A GB200-like GPU under MXFP8 with the fused kernels measured (gb200-nvl72.yaml), `held_sms`
// of its SMs held off the fused kernels.
ShapeModelParams Gb200Fused(double held_sms) {
  ShapeModelParams p = testing::Gb200Mxfp8Like(true);
  p.fused_mlp_held_sms = held_sms;
  return p;
}

// At the measured shape FC1 forward is 16 x 10 x 64 = 10,240 tiles of 256 x 256: 70 waves
// over 148 SMs take the measured 1.500 ms; with 8 clusters (16 SMs) held, 78 waves over
// 132: 1.500 x 78 / 70 = 1.671 ms. FC2's input gradient (16 x 5 x 64 = 5,120 tiles: 35
// waves, 39 with the margin) likewise 1.381 x 39 / 35. The weight gradients keep every SM.
TEST(FusedMlpClusterMargin, ForwardAndInputGradientKernelsRunOnTheOtherSms) {
  const ShapeComputeModel full(Gb200Fused(0)), held(Gb200Fused(8 * kFusedMlpClusterSms));
  const FusedMlpMeasurement m = Gb200Fused(0).fused_mlp;
  const auto seconds = [&](const ShapeComputeModel& model, FusedMlpKernel kernel) {
    GemmShape g = m.Shape(kernel);
    g.grouped_rate = true;
    g.fused_kernel = kernel;
    return model.GemmSeconds(g);
  };
  EXPECT_NEAR(seconds(full, kFusedFc1Fwd), 1.500e-3, 1e-6);
  EXPECT_NEAR(seconds(held, kFusedFc1Fwd), 1.500e-3 * 78 / 70, 2e-6);
  EXPECT_NEAR(seconds(held, kFusedFc2Dgrad), seconds(full, kFusedFc2Dgrad) * 39 / 35, 1e-9);
  for (FusedMlpKernel k : {kFusedFc2Fwd, kFusedFc1Dgrad}) {
    EXPECT_GT(seconds(held, k), 1.05 * seconds(full, k)) << k;
  }
  for (FusedMlpKernel k : {kFusedFc1Wgrad, kFusedFc2Wgrad}) {
    EXPECT_DOUBLE_EQ(seconds(held, k), seconds(full, k)) << k;
  }
  // Other GEMMs keep every SM.
  const GemmShape dense{4096, 4096, 4096, 1, true};
  EXPECT_DOUBLE_EQ(full.GemmSeconds(dense), held.GemmSeconds(dense));
}

const std::string kExperiment = std::string(MESHSIM_SOURCE_DIR) +
                                "/workloads/experiments/public-gb200-bridge-qwen3-30b-a3b.yaml";
const std::string kKey = "plan.framework_options.fused_grouped_mlp_cluster_margin";

std::string Margin(int n) { return kKey + "=" + std::to_string(n); }

// In a run (Qwen3-30B-A3B on GB200, fused grouped MLP): the margin lengthens the step.
TEST(FusedMlpClusterMargin, LengthensTheStepOfAFusedRun) {
  const StepSummary none = testing::ExperimentStep(kExperiment, {Margin(0)});
  const StepSummary eight = testing::ExperimentStep(kExperiment, {Margin(8)});
  EXPECT_GT(eight.step_time_s, 1.02 * none.step_time_s);
}

// Bad input names the key: negative, no cluster left (148 SMs: 74 clusters), or a margin
// without the fused grouped MLP.
TEST(FusedMlpClusterMargin, BadInputNamesTheKey) {
  EXPECT_EQ(testing::ExperimentLoadError(kExperiment, {Margin(73)}), "");
  for (int bad : {-1, 74, 200}) {
    const std::string e = testing::ExperimentLoadError(kExperiment, {Margin(bad)});
    EXPECT_NE(e.find(kKey), std::string::npos) << e;
  }
  const std::string e = testing::ExperimentLoadError(
      kExperiment, {Margin(8), "plan.framework_options.fused_grouped_mlp=false"});
  EXPECT_NE(e.find(kKey), std::string::npos) << e;
}

}  // namespace
}  // namespace meshsim

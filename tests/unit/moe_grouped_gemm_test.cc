// The routed experts' two GEMM paths (README "MoE experts: grouped GEMMs"): Transformer
// Engine's GroupedLinear, one cuBLAS GEMM per local expert at
// cluster.efficiency.grouped_gemm of the GEMM rate, and the fused grouped MLP
// (plan.framework_options.fused_grouped_mlp), one grouped kernel per GEMM: their input
// checks and their effect on a whole step (the per-kernel arithmetic is in
// moe_kernels_test.cc).
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "sim/schedule/host_launch.h"
#include "tests/unit/experiment_step.h"

namespace meshsim {
namespace {

const std::string kSource = MESHSIM_SOURCE_DIR;
// One B200 node, Qwen3-30B-A3B (128 experts, top 8), EP 8: 16 local experts.
const std::string kExperiment =
    kSource + "/workloads/experiments/public-b200-bridge-qwen3-30b-a3b.yaml";

StepSummary Step(std::vector<std::string> sets) {
  sets.push_back("plan.global_batch=64");  // 2 micro-batches per rank: a short test
  return testing::ExperimentStep(kExperiment, std::move(sets));
}

std::string LoadError(const std::vector<std::string>& sets) {
  return testing::ExperimentLoadError(kExperiment, sets);
}

// The expert GEMMs at half the rate lengthen the step by about their time: the step grows,
// by less than twice.
TEST(MoeGroupedGemm, LowerGroupedEfficiencyLengthensTheStep) {
  const StepSummary full = Step({"cluster.efficiency.grouped_gemm=1"});
  const StepSummary half = Step({"cluster.efficiency.grouped_gemm=0.5"});
  EXPECT_GT(half.step_time_s, 1.05 * full.step_time_s);
  EXPECT_LT(half.step_time_s, 2 * full.step_time_s);
}

// The fused grouped MLP runs the experts' GEMMs as one kernel each, at its own share of
// the rate (cluster.efficiency.fused_grouped_gemm: a lower one lengthens the step, and
// GroupedLinear's grouped_gemm does not apply); its host launches drop from one per local
// expert (16 x 2 per pass) to 2, and at the same share it is faster than GroupedLinear.
TEST(MoeGroupedGemm, FusedGroupedMlpHasItsOwnEfficiencyAndLaunchesLess) {
  const std::string fused = "plan.framework_options.fused_grouped_mlp=true";
  const std::string full = "cluster.efficiency.fused_grouped_gemm=1";
  const StepSummary a = Step({fused, full, "cluster.efficiency.grouped_gemm=1"});
  const StepSummary b = Step({fused, "cluster.efficiency.fused_grouped_gemm=0.5"});
  EXPECT_GT(b.step_time_s, 1.05 * a.step_time_s);
  EXPECT_LT(b.step_time_s, 2 * a.step_time_s);
  EXPECT_DOUBLE_EQ(Step({fused, full, "cluster.efficiency.grouped_gemm=0.5"}).step_time_s,
                   a.step_time_s);
  const StepSummary unfused = Step({"cluster.efficiency.grouped_gemm=1"});
  EXPECT_LT(a.time_breakdown_s.host_bound, unfused.time_breakdown_s.host_bound);
  EXPECT_LT(a.step_time_s, unfused.step_time_s);
  const StepSummary unfused_half = Step({"cluster.efficiency.grouped_gemm=0.5"});
  EXPECT_LT(b.step_time_s, unfused_half.step_time_s);
}

// GroupedLinear's casts: per expert under current scaling (amax and cast each) and MXFP8,
// one fused multi-tensor kernel for all experts under delayed scaling; a dense GEMM's
// input is cast once.
TEST(MoeGroupedGemm, GroupedLinearCastsEachExpertsInputApart) {
  KernelShapes grouped;
  GemmShape g{4096, 1536, 2048, 8, /*fp8=*/true, /*casts_a=*/true};
  g.launches_per_batch = true;
  grouped.gemms = {g};
  EXPECT_EQ(Fp8CastLaunches(grouped, Fp8Recipe::kCurrent), 16);
  EXPECT_EQ(Fp8CastLaunches(grouped, Fp8Recipe::kMxfp8), 8);
  EXPECT_EQ(Fp8CastLaunches(grouped, Fp8Recipe::kDelayed), 1);
  KernelShapes dense = grouped;
  dense.gemms[0].launches_per_batch = false;
  EXPECT_EQ(Fp8CastLaunches(dense, Fp8Recipe::kCurrent), 2);
  KernelShapes wgrad = grouped;
  wgrad.gemms[0].casts_a = false;
  EXPECT_EQ(Fp8CastLaunches(wgrad, Fp8Recipe::kMxfp8), 0);
}

// On a step: MXFP8's per-expert casts cost the host more than delayed scaling's one fused
// cast, so the host-bound time grows (the GPU's cast traffic is the same).
TEST(MoeGroupedGemm, PerExpertCastsLengthenTheHostBoundStep) {
  const StepSummary mx = Step({});
  const StepSummary delayed = Step({"training.fp8_recipe=delayed"});
  EXPECT_GT(mx.time_breakdown_s.host_bound, delayed.time_breakdown_s.host_bound);
}

TEST(MoeGroupedGemm, BadInputNamesTheKey) {
  const std::string bad = LoadError({"cluster.efficiency.grouped_gemm=1.5"});
  EXPECT_NE(bad.find("cluster.efficiency.grouped_gemm"), std::string::npos) << bad;
  EXPECT_NE(LoadError({"cluster.efficiency.grouped_gemm=0"}), "");
  // The fused grouped MLP is TE's MXFP8 kernel: not under BF16 or FP8 current scaling.
  const std::string fused = "plan.framework_options.fused_grouped_mlp=true";
  EXPECT_NE(LoadError({"cluster.efficiency.fused_grouped_gemm=0"})
                .find("cluster.efficiency.fused_grouped_gemm"),
            std::string::npos);
  EXPECT_NE(LoadError({"cluster.efficiency.fused_grouped_gemm=1.5"}), "");
  const std::string bf16 = LoadError({fused, "training.dtype=bf16"});
  EXPECT_NE(bf16.find("plan.framework_options.fused_grouped_mlp"), std::string::npos) << bf16;
  EXPECT_NE(LoadError({fused, "training.fp8_recipe=current"}), "");
  EXPECT_EQ(LoadError({fused}), "");
  // The measured fused kernels (gpu.fused_grouped_mlp): fractions of the peak, positive
  // sizes.
  const std::string key = "cluster.gpu.fused_grouped_mlp.efficiency.fc2_dgrad";
  const std::string over = LoadError({key + "=1.5"});
  EXPECT_NE(over.find(key), std::string::npos) << over;
  EXPECT_NE(LoadError({"cluster.gpu.fused_grouped_mlp.experts=0"}), "");
}

}  // namespace
}  // namespace meshsim

// End-to-end: the bundled hybrid (Mamba-2 / attention / MoE) experiments run, report the
// bundled models' parameter counts, and a bad layer pattern exits 2 naming the key.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/e2e/meshsim_runner.h"

namespace {

using namespace meshsim::e2e;

nlohmann::json Summary(const std::string& experiment, const std::vector<std::string>& sets = {}) {
  TempDir dir;
  std::vector<std::string> args = {"run", SourcePath(experiment).string(), "--summary", "-",
                                   "--no-trace"};
  for (const std::string& s : sets) args.insert(args.end(), {"--set", s});
  const RunResult r = RunMeshsim(args, dir.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::object();
}

// Nemotron-H 8B on tp 2 x pp 2 x dp 2: 8,100,852,736 parameters (the checkpoint's count);
// its step runs; more pipeline stages of the same pattern still run.
TEST(HybridModels, NemotronH8bRunsEndToEnd) {
  const nlohmann::json s = Summary("workloads/experiments/nemotron-h-8b-h100.yaml");
  ASSERT_TRUE(s.contains("step_time_s"));
  EXPECT_EQ(s["params_total"].get<double>(), 8100852736.0);
  EXPECT_GT(s["step_time_s"].get<double>(), 0);
  EXPECT_GT(s["mfu"].get<double>(), 0.1);
  EXPECT_LT(s["mfu"].get<double>(), 1.0);
}

// Nemotron 3 Nano on 8 B200 (EP 8, MXFP8): 31.58B total, 3.58B active; model FLOPs of
// 512 sequences of 8192 tokens at 22.0 GFLOP per token (the published row implies 22.2:
// 726 TFLOP/s at 32,768 tokens/s).
TEST(HybridModels, NemotronNanoRunsEndToEnd) {
  const nlohmann::json s = Summary("workloads/experiments/nemotron-3-nano-b200.yaml");
  ASSERT_TRUE(s.contains("model_flops_per_step"));
  EXPECT_NEAR(s["params_total"].get<double>() / 1e9, 31.58, 0.01);
  EXPECT_NEAR(s["params_active"].get<double>() / 1e9, 3.58, 0.01);
  const double per_token = s["model_flops_per_step"].get<double>() / (512.0 * 8192);
  EXPECT_NEAR(per_token / 22.2e9, 1.0, 0.02);
}

// A layer pattern with a character other than M * - E: exit 2, one line naming the key.
TEST(HybridModels, BadPatternExitsTwoNamingTheKey) {
  TempDir dir;
  const RunResult r =
      RunMeshsim({"run", SourcePath("workloads/experiments/nemotron-h-8b-h100.yaml").string(),
                  "--set", "model.layer_pattern=M-M-X", "--no-trace"},
                 dir.path());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("model.layer_pattern"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("found 'X' at position 4"), std::string::npos) << r.err;
}

}  // namespace

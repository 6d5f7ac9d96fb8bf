// scripts/validate.py --experiment: one public row reproduced in one command (README
// "Calibration and validation"), and the published step times it derives from the
// Megatron-LM H100 weak-scaling table (shared/validation/public_runs.md section 5).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <regex>
#include <string>
#include <tuple>

#include "meshsim_runner.h"

namespace meshsim::e2e {
namespace {

const fs::path kRepo = MESHSIM_SOURCE_DIR;

RunResult RunValidate(const std::string& experiment, const fs::path& scratch) {
  const fs::path out = scratch / "stdout.txt";
  const fs::path err = scratch / "stderr.txt";
  const std::string cmd = "python3 " + ShellQuote((kRepo / "scripts/validate.py").string()) +
                          " --meshsim " + ShellQuote(MESHSIM_BIN) + " --experiment " +
                          ShellQuote(experiment) + " >" + ShellQuote(out.string()) + " 2>" +
                          ShellQuote(err.string());
  const int status = std::system(cmd.c_str());
  RunResult r;
  r.exit_code = status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = ReadFile(out);
  r.err = ReadFile(err);
  return r;
}

// The 1.7B row: 48 GPUs, batch 192, 24 layers, hidden 2048, 408.8 TFLOP/s per GPU, s 4096,
// V 131072. FLOPs = 72 * 192 * 4096 * 24 * 2048^2 * (1 + 4096/12288 + 131072/589824)
//                 = 5.69994e15 * (1 + 0.333333 + 0.222222) = 8.86657e15;
// step = 8.86657e15 / (408.8e12 * 48 = 1.96224e16) = 0.45186 s.
TEST(ValidateScript, ReproducesAPublicH100RowInOneCommand) {
  TempDir dir;
  const RunResult r = RunValidate("public-h100-megatron-1.7b", dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("published step time 0.452 s"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("meshsim   step time "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\n  error "), std::string::npos) << r.out;
}

// The 177B row's header states the same derivation by hand: 72 * 1152 * 4096 * 96 *
// 12288^2 = 4.92466e18, times (1 + 4096/73728 + 131072/14155776 = 1.064815) = 5.24385e18
// FLOPs, over 432.8e12 * 2304 = 9.97171e17 FLOP/s: 5.2587 s.
TEST(ValidateScript, ExperimentHeaderStatesThePublishedStepTime) {
  const std::string text = ReadFile(kRepo / "workloads/experiments/public-h100-megatron-177b.yaml");
  EXPECT_NE(text.find("# 5.259 s."), std::string::npos) << text;
  TempDir dir;
  const RunResult r = RunValidate("public-h100-megatron-177b", dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("published step time 5.259 s"), std::string::npos) << r.out;
}

TEST(ValidateScript, AnExperimentThatIsNoPublicRowIsRefused) {
  TempDir dir;
  const RunResult r = RunValidate("default", dir.path());
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.err.find("default is not a row of a validation data set"), std::string::npos)
      << r.err;
}

// The first `key: value` of the topology's efficiency block, and the fit recorded by
// scripts/calibrate.py --json (which writes the grid's values as strings).
std::string EfficiencyValue(const std::string& topology, const std::string& key) {
  const std::string text = ReadFile(kRepo / topology);
  const std::string block = text.substr(text.find("\nefficiency:"));
  std::smatch m;
  return std::regex_search(block, m, std::regex("\n\\s+" + key + ":\\s*([0-9.]+)")) ? m[1].str()
                                                                                    : "";
}

std::string FittedValue(const std::string& json, const std::string& key) {
  const std::string text = ReadFile(kRepo / json);
  const std::string fit = text.substr(text.find("\"fit\": {"));
  std::smatch m;
  return std::regex_search(fit, m, std::regex("\"" + key + "\": \"([0-9.]+)\"")) ? m[1].str() : "";
}

// The Blackwell topologies hold the gemm_k_half that scripts/fit_gemm_k_half.py chose on
// OpenXLA's sm_100 GEMMs (results/gemm.md); the Hopper ones keep 128.
TEST(ValidateScript, TopologiesHoldTheFittedGemmKHalf) {
  const std::string gemm = ReadFile(kRepo / "results/gemm.md");
  EXPECT_NE(gemm.find("Best: gemm_k_half 256 (fitted: the topology holds it)"), std::string::npos);
  for (const char* t : {"topologies/dgx-b200.yaml", "topologies/gb200-nvl72.yaml",
                        "topologies/dgx-b300.yaml", "topologies/gb300-nvl72.yaml"}) {
    const std::string text = ReadFile(kRepo / t);
    EXPECT_NE(text.find("gemm_k_half: 256 "), std::string::npos) << t;
  }
  EXPECT_NE(ReadFile(kRepo / "topologies/dgx-h100.yaml").find("gemm_k_half: 128 "),
            std::string::npos);
}

// Each topology holds what its data set's default grid chose (scripts/calibrate.py
// --dataset KEY, recorded in results/): A100 matmul 0.80 / 0 us, H100 0.58 / 5 us; FP8
// matmul_fp8: H100 0.56, B200 0.52, GB200 0.48, GB300 0.64.
TEST(ValidateScript, TopologiesHoldTheirRecordedFit) {
  EXPECT_EQ(EfficiencyValue("topologies/selene-a100.yaml", "matmul"), "0.80");
  EXPECT_EQ(EfficiencyValue("topologies/selene-a100.yaml", "kernel_overhead_us"), "0");
  EXPECT_EQ(FittedValue("results/calibration.json", "matmul"), "0.80");
  EXPECT_EQ(FittedValue("results/calibration.json", "kernel_overhead_us"), "0");
  EXPECT_EQ(EfficiencyValue("topologies/dgx-h100.yaml", "matmul"), "0.58");
  EXPECT_EQ(EfficiencyValue("topologies/dgx-h100.yaml", "kernel_overhead_us"), "5");
  EXPECT_EQ(FittedValue("results/calibration-h100-megatron.json", "matmul"), "0.58");
  EXPECT_EQ(FittedValue("results/calibration-h100-megatron.json", "kernel_overhead_us"), "5");
  // FP8 data sets fit matmul_fp8 (their JSON's "matmul" axis), overhead held at 5 us.
  for (const auto& [topology, json, fp8] :
       {std::tuple{"topologies/dgx-h100.yaml", "results/calibration-h100-fp8.json", "0.56"},
        std::tuple{"topologies/dgx-b200.yaml", "results/calibration-b200-fp8.json", "0.52"},
        std::tuple{"topologies/gb200-nvl72.yaml", "results/calibration-gb200-fp8.json", "0.48"},
        std::tuple{"topologies/gb300-nvl72.yaml", "results/calibration-gb300-fp8.json", "0.64"}}) {
    EXPECT_EQ(EfficiencyValue(topology, "matmul_fp8"), fp8) << topology;
    EXPECT_EQ(FittedValue(json, "matmul"), fp8) << json;
    EXPECT_EQ(EfficiencyValue(topology, "kernel_overhead_us"), "5") << topology;
  }
}

}  // namespace
}  // namespace meshsim::e2e

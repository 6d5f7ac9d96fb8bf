// End-to-end: `meshsim explain --kernels` prints one layer's kernel table per rank that runs
// the layer; a layer or micro-batch that rank 0's pipeline does not run is bad input (exit 2,
// the option named, nothing on stdout).
#include <gtest/gtest.h>

#include <string>

#include "tests/e2e/meshsim_runner.h"

namespace {

using namespace meshsim::e2e;

int Count(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

// The default experiment (pp 4): layer 9 sits on stage 1's rank; the ops tied to no layer on
// the first stage's rank (embedding) and the last's (output layer and loss).
TEST(ExplainKernelsCli, PrintsATablePerRankThatRunsTheLayer) {
  TempDir dir;
  const std::string experiment = SourcePath("workloads/experiments/default.yaml").string();
  const RunResult layer =
      RunMeshsim({"explain", experiment, "--kernels", "--layer", "9"}, dir.path());
  ASSERT_EQ(layer.exit_code, 0) << layer.err;
  EXPECT_EQ(Count(layer.out, "layer 9, micro-batch 0, rank "), 1) << layer.out;
  EXPECT_NE(layer.out.find("\nattention fwd "), std::string::npos) << layer.out;
  EXPECT_NE(layer.out.find("  gemm, batched"), std::string::npos) << layer.out;  // unfused scores
  EXPECT_EQ(Count(layer.out, "total (main compute stream)"), 1);
  const RunResult none =
      RunMeshsim({"explain", experiment, "--kernels", "--layer", "-1"}, dir.path());
  ASSERT_EQ(none.exit_code, 0) << none.err;
  EXPECT_EQ(Count(none.out, "layer -1, micro-batch 0, rank "), 2) << none.out;
  EXPECT_NE(none.out.find("embedding fwd"), std::string::npos);
  EXPECT_NE(none.out.find("logits+loss fwd"), std::string::npos);
}

TEST(ExplainKernelsCli, MissingLayerOrMicroBatchIsBadInput) {
  TempDir dir;
  const std::string experiment = SourcePath("workloads/experiments/default.yaml").string();
  for (const auto& [option, value] : {std::pair{"--layer", "-2"},
                                      {"--layer", "32"},
                                      {"--micro-batch", "-1"},
                                      {"--micro-batch", "16"}}) {
    const RunResult r = RunMeshsim({"explain", experiment, "--kernels", option, value}, dir.path());
    EXPECT_EQ(r.exit_code, 2) << option << " " << value;
    EXPECT_NE(r.err.find(std::string("meshsim: error: ") + option + ": "), std::string::npos)
        << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

}  // namespace

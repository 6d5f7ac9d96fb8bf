// End-to-end: `meshsim bench-gemm` prints a GEMM microbenchmark's table; bad options are
// bad input (exit 2, the option named).
#include <gtest/gtest.h>

#include <sstream>

#include "tests/e2e/meshsim_runner.h"

namespace {

using namespace meshsim::e2e;

// One line per --shape. The B200's 4096^3 bf16 GEMM: two waves of 148 tiles of 256 x 256 (the
// last 108), k 4096 at k_half 256, matmul 0.70 (dgx-b200's estimate): 107 us and a 5 us launch
// (OpenXLA measured 97.0 us, the level of matmul 0.81: results/gemm.md).
TEST(BenchGemmCli, CsvHasOneRowPerShape) {
  TempDir dir;
  const RunResult r =
      RunMeshsim({"bench-gemm", "--cluster", SourcePath("topologies/dgx-b200.yaml").string(),
                  "--shape", "4096x4096x4096", "--shape", "1024x2048x512x4", "--csv"},
                 dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream lines(r.out);
  std::string header, first, second, extra;
  std::getline(lines, header);
  EXPECT_EQ(header, "m,n,k,batch,time_us,tflops,peak_fraction");
  ASSERT_TRUE(std::getline(lines, first));
  ASSERT_TRUE(std::getline(lines, second));
  EXPECT_FALSE(std::getline(lines, extra));
  EXPECT_EQ(first.substr(0, 20), "4096,4096,4096,1,112");
  EXPECT_EQ(second.substr(0, 15), "1024,2048,512,4");
}

TEST(BenchGemmCli, BadShapeAndDtypeAreBadInput) {
  TempDir dir;
  const std::string cluster = SourcePath("topologies/dgx-h100.yaml").string();
  for (const auto& [option, value] :
       {std::pair{"--shape", "4096x4096"}, {"--shape", "0x1x1"}, {"--dtype", "fp4"}}) {
    const RunResult r = RunMeshsim({"bench-gemm", "--cluster", cluster, option, value}, dir.path());
    EXPECT_EQ(r.exit_code, 2) << option << " " << value;
    EXPECT_NE(r.err.find(std::string("meshsim: error: ") + option + ": expected"),
              std::string::npos)
        << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

}  // namespace

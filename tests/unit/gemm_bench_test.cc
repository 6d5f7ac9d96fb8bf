// meshsim bench-gemm's engine (sim/engine/gemm_bench.h): one GEMM on the cluster's GPU at
// the kernel model's time and one launch; the k loss that gpu.gemm_k_half sets.
#include "sim/engine/gemm_bench.h"

#include <gtest/gtest.h>

#include <string>

#include "sim/config/loader.h"
#include "sim/engine/shape_params.h"

namespace meshsim {
namespace {

ClusterSpec Load(const std::string& topology) {
  Result<ClusterSpec> c =
      LoadClusterFile(std::string(MESHSIM_SOURCE_DIR) + "/topologies/" + topology);
  EXPECT_TRUE(c.ok()) << (c.ok() ? "" : c.error().ToString());
  return c.ok() ? c.value() : ClusterSpec{};
}

// Without split-k (256 tiles of 256 x 256 on 148 SMs: two waves), a tile's time grows as
// k + k_half (dgx-b200: 256): k 256 and 768 take 512 : 1024 of the compute.
TEST(GemmBench, TimeGrowsAsKPlusKHalf) {
  const ClusterSpec b200 = Load("dgx-b200.yaml");
  ASSERT_EQ(b200.gpu.gemm_k_half, 256);
  const double launch = b200.efficiency.kernel_overhead_us * 1e-6;
  const std::vector<GemmBenchRow> rows =
      BenchGemm(b200, Dtype::kBf16, {GemmShape{4096, 4096, 256}, GemmShape{4096, 4096, 768}});
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_NEAR((rows[0].time_s - launch) / (rows[1].time_s - launch), 0.5, 1e-12);
  // Two waves of 148 tiles at the matmul efficiency, k + k_half deep.
  const double per_sm = 2250e12 / 148 * b200.efficiency.matmul;
  EXPECT_NEAR(rows[1].time_s - launch, 2 * 2 * 256.0 * 256 * (768 + 256) / per_sm, 1e-15);
  EXPECT_DOUBLE_EQ(rows[1].tflops, 2.0 * 4096 * 4096 * 768 / rows[1].time_s / 1e12);
  EXPECT_DOUBLE_EQ(rows[1].peak_fraction, rows[1].tflops / 2250);
}

// FP8 GEMMs run at the FP8 peak and matmul_fp8 (per-tensor scaling: no MXFP8 factor).
TEST(GemmBench, Fp8AtTheFp8PeakAndEfficiency) {
  const ClusterSpec b200 = Load("dgx-b200.yaml");
  const GemmShape big{8192, 8192, 8192};
  const double launch = b200.efficiency.kernel_overhead_us * 1e-6;
  const double bf16 = BenchGemm(b200, Dtype::kBf16, {big})[0].time_s - launch;
  const double fp8 = BenchGemm(b200, Dtype::kFp8, {big})[0].time_s - launch;
  EXPECT_NEAR(bf16 / fp8, (4500 * b200.efficiency.MatmulFp8()) / (2250 * b200.efficiency.matmul),
              1e-12);
}

// The simulation's parameters start from the same GPU parameters (GpuShapeParams).
TEST(GemmBench, GpuShapeParamsCarryTheGpu) {
  const ClusterSpec gb300 = Load("gb300-nvl72.yaml");
  const ShapeModelParams p = GpuShapeParams(gb300, Dtype::kFp8);
  EXPECT_EQ(p.k_half, gb300.gpu.gemm_k_half);
  EXPECT_EQ(p.sms, gb300.gpu.sms);
  EXPECT_DOUBLE_EQ(p.peak_flops_per_s, 2500e12);  // the rest of FP8 training stays BF16
  EXPECT_DOUBLE_EQ(p.fp8.peak_flops_per_s, 5000e12);
  EXPECT_DOUBLE_EQ(p.fp8.matmul_efficiency, gb300.efficiency.MatmulFp8());
  EXPECT_EQ(p.attention.causal_forward, gb300.gpu.flash_attention.causal);
  EXPECT_EQ(p.attention.band_keys, gb300.gpu.flash_attention.window.keys);
}

}  // namespace
}  // namespace meshsim

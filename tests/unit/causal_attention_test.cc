// Measured causal attention kernels (gpu.flash_attention.causal, .causal_backward): a causal
// kernel runs at the measured curve, not at the non-causal curve times the factors; the
// bundled Blackwell topologies reproduce cuDNN's own measurements; bad curves are bad input.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "sim/config/loader.h"
#include "sim/workload/shape_compute_model.h"
#include "tests/unit/experiment_step.h"

namespace meshsim {
namespace {

// The curve of the factors' test (kernel_model_test.cc) with causal kernels measured: at
// 2048 keys, halfway in log2 between 1024 and 4096.
TEST(CausalAttention, MeasuredCurvesReplaceTheFactors) {
  ShapeModelParams p;  // 312 TFLOP/s
  p.attention.seq_lens = {1024, 4096};
  p.attention.efficiency = {0.5, 0.7};
  p.attention.backward_factor = 0.9;
  p.attention.causal_factor = 0.8;
  p.attention.causal_forward = {0.3, 0.5};
  p.attention.causal_backward = {0.2, 0.3};
  const ShapeComputeModel model(p);
  const double flops = 34'359'738'368.0;  // 4 x 16 x 2048^2 x 128
  EXPECT_DOUBLE_EQ(model.AttentionSeconds({16, 2048, 2048, 128, true, false, 1}),
                   0.5 * flops / (312e12 * 0.4));
  // Backward: 2.5 forward passes of the causal half at the measured 0.25, no factor.
  EXPECT_DOUBLE_EQ(model.AttentionSeconds({16, 2048, 2048, 128, true, true, 2}),
                   1.25 * 2 * 0.5 * flops / (312e12 * 0.25));
  // Non-causal kernels keep the curve and backward_factor.
  EXPECT_DOUBLE_EQ(model.AttentionSeconds({16, 2048, 2048, 128, false, true, 1}),
                   1.25 * flops / (312e12 * 0.54));
  // Other head dims scale the measured value as they scale the curve.
  const double head = AttentionEfficiency::HeadDimFactor(64);
  EXPECT_DOUBLE_EQ(model.AttentionSeconds({16, 2048, 2048, 64, true, false, 1}),
                   0.5 * flops / 2 / (312e12 * 0.4 * head));
}

// Seconds of cuDNN's benchmark shape (batch 2 x 64 query heads, head dim 128, top-left
// causal) on a topology's measured curves.
double CausalMs(const std::string& topology, double seq, bool backward) {
  Result<ClusterSpec> c =
      LoadClusterFile(std::string(MESHSIM_SOURCE_DIR) + "/topologies/" + topology);
  if (!c.ok()) {
    ADD_FAILURE() << c.error().ToString();
    return 0;
  }
  const GpuSpec& gpu = c.value().gpu;
  ShapeModelParams p;
  p.peak_flops_per_s = gpu.PeakTflops(Dtype::kBf16) * 1e12;
  p.attention.seq_lens = gpu.flash_attention.seq_lens;
  p.attention.efficiency = gpu.flash_attention.efficiency;
  p.attention.causal_forward = gpu.flash_attention.causal;
  p.attention.causal_backward = gpu.flash_attention.causal_backward;
  const ShapeComputeModel model(p);
  return 1e3 * model.AttentionSeconds({128, seq, seq, 128, true, backward, backward ? 2.0 : 1.0});
}

// NVIDIA/cudnn-frontend benchmark/sdpa_benchmark_training/results/llama3.1/{gb200,gb300}/
// llama3.1_20260424_*.csv (cuDNN 9.22.0): the measured milliseconds, within the rounding of
// the TFLOP/s the topologies were written from.
TEST(CausalAttention, BlackwellTopologiesReproduceCudnnsMeasurement) {
  EXPECT_NEAR(CausalMs("gb200-nvl72.yaml", 4096, false), 0.391, 0.002);
  EXPECT_NEAR(CausalMs("gb200-nvl72.yaml", 4096, true), 1.198, 0.004);
  EXPECT_NEAR(CausalMs("gb200-nvl72.yaml", 8192, false), 1.397, 0.004);
  EXPECT_NEAR(CausalMs("gb200-nvl72.yaml", 8192, true), 4.127, 0.01);
  EXPECT_NEAR(CausalMs("gb300-nvl72.yaml", 4096, false), 0.323, 0.002);
  EXPECT_NEAR(CausalMs("gb300-nvl72.yaml", 4096, true), 1.101, 0.004);
  EXPECT_NEAR(CausalMs("gb300-nvl72.yaml", 8192, false), 1.185, 0.004);
  EXPECT_NEAR(CausalMs("gb300-nvl72.yaml", 8192, true), 3.832, 0.01);
}

// gb200-nvl72.yaml with one flash_attention line replaced (an empty line drops it); the
// loader's error, empty when it loads.
std::string TopologyError(const std::string& key, const std::string& line) {
  const std::string source = std::string(MESHSIM_SOURCE_DIR) + "/topologies/gb200-nvl72.yaml";
  std::ifstream in(source);
  std::string text, l;
  while (std::getline(in, l)) {
    if (l.rfind("    " + key + ":", 0) == 0) l = line;
    text += l + "\n";
  }
  const std::string path = ::testing::TempDir() + "/causal_attention_test.yaml";
  std::ofstream(path) << text;
  Result<ClusterSpec> c = LoadClusterFile(path);
  return c.ok() ? std::string() : c.error().ToString();
}

TEST(CausalAttention, BadCurvesAreBadInput) {
  EXPECT_EQ(TopologyError("causal", "    causal: [0.4388, 0.5632, 0.6296, 0.6832, 0.6488]"), "");
  const std::string short_list = TopologyError("causal", "    causal: [0.5, 0.6]");
  EXPECT_NE(short_list.find("gpu.flash_attention.causal: expected one value per seq_lens "
                            "entry (5), found 2"),
            std::string::npos)
      << short_list;
  const std::string out_of_range =
      TopologyError("causal_backward", "    causal_backward: [0.3, 0.4, 1.5, 0.5, 0.5]");
  EXPECT_NE(out_of_range.find("causal_backward: expected fractions in (0, 1]"), std::string::npos)
      << out_of_range;
  const std::string alone = TopologyError("causal_backward", "");
  EXPECT_NE(alone.find("gpu.flash_attention.causal: expected causal_backward beside it"),
            std::string::npos)
      << alone;
  EXPECT_EQ(alone.rfind(::testing::TempDir() + "/causal_attention_test.yaml:", 0), 0u) << alone;
}

}  // namespace
}  // namespace meshsim

// model.rope_mscale: YaRN's attention factor, which Megatron-Core's fused RoPE does not take,
// so that RoPE runs as eager element-wise kernels on Q and K; import hf computes it as
// transformers does.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "sim/config/loader.h"
#include "sim/workload/layer_dims.h"
#include "sim/workload/transformer.h"
#include "tests/unit/hf_fixture.h"
#include "tests/unit/layer_shape_fixture.h"
#include "tests/unit/test_fixtures.h"

namespace meshsim {
namespace {

HfImport Import(const std::string& name) { return testing::ImportHfFixture(name); }

TEST(RopeMscale, ImportHfComputesTheYarnAttentionFactor) {
  // GPT-OSS: rope_type yarn, factor 32, no mscale: 0.1 ln 32 + 1.
  EXPECT_NEAR(Import("gpt-oss-120b").model.rope_mscale, 1.34657, 1e-5);
  EXPECT_NEAR(Import("gpt-oss-20b").model.rope_mscale, 0.1 * std::log(32.0) + 1, 1e-12);
  // DeepSeek-V3: mscale = mscale_all_dim = 1, their ratio 1. No YaRN: 1.
  EXPECT_DOUBLE_EQ(Import("deepseek-v3").model.rope_mscale, 1.0);
  EXPECT_DOUBLE_EQ(Import("llama3-8b").model.rope_mscale, 1.0);
}

// GPT-OSS-like attention: 64 heads, 8 KV heads of 64; tp 2, seq 1024, micro-batch 2:
// Q and K per rank s*b*(q_w + k_w)/t = 1024 x 2 x (4096 + 512) / 2 elements.
ModelSpec Model(double mscale) {
  ModelSpec m = testing::SmallModel();
  m.hidden = 2880;
  m.heads = 64;
  m.kv_heads = 8;
  m.head_dim = 64;
  m.rope_mscale = mscale;
  return m;
}

LayerShape Shape(bool megatron) { return testing::SmallLayerShape(megatron); }

TEST(RopeMscale, UnfusedRopeCostsMore) {
  const double qk = 2 * 1024.0 * 2 * (4096 + 512) / 2;  // 16-bit bytes per element pass
  const LayerCost fused = TransformerLayerCost(Model(1.0), Shape(true));
  const LayerCost unfused = TransformerLayerCost(Model(1.34657), Shape(true));
  // Forward: 12 elements in 12 kernels per tensor against the fused kernel's 2 in 1.
  EXPECT_DOUBLE_EQ(unfused.attention.fwd_bytes - fused.attention.fwd_bytes, 10 * qk);
  EXPECT_EQ(unfused.attention.fwd_kernels - fused.attention.fwd_kernels, 2 * 11);
  // Backward (dgrad and wgrad each charge the forward, dgrad the correction): 13 against 2.
  const auto backward = [](const BlockCost& b) { return 2 * b.fwd_bytes + b.bwd_extra_bytes; };
  EXPECT_DOUBLE_EQ(backward(unfused.attention) - backward(fused.attention), 11 * qk);
  EXPECT_EQ(unfused.attention.fwd_kernels + unfused.attention.bwd_extra_kernels -
                fused.attention.fwd_kernels - fused.attention.bwd_extra_kernels,
            2 * 6);
  EXPECT_GT(unfused.attention.fwd_bytes + unfused.attention.bwd_extra_bytes, 0);
  EXPECT_DOUBLE_EQ(unfused.attention.fwd_flops, fused.attention.fwd_flops);
  // Not on Megatron-Core (no fused RoPE to fall back from) and not under MLA.
  EXPECT_DOUBLE_EQ(TransformerLayerCost(Model(1.34657), Shape(false)).attention.fwd_bytes,
                   TransformerLayerCost(Model(1.0), Shape(false)).attention.fwd_bytes);
  EXPECT_DOUBLE_EQ(UnfusedRopeExtra(Model(1.0), true).fwd_elements, 0);
}

TEST(RopeMscale, ConfigKey) {
  const std::string text =
      "name: x\nmodel: {name: m, layers: 2, hidden: 1024, heads: 16, ffn_hidden: 4096,\n"
      "  vocab: 1000, seq_len: 1024, rope_mscale: 1.34657}\n"
      "cluster: ../../topologies/dgx-h100.yaml\ncluster_overrides: {nodes: 1}\n"
      "plan: {tp: 8, global_batch: 8}\n";
  const std::string path = std::string(MESHSIM_SOURCE_DIR) + "/workloads/experiments/test.yaml";
  Result<Experiment> e = LoadExperimentText(text, path, {});
  ASSERT_TRUE(e.ok()) << e.error().ToString();
  EXPECT_DOUBLE_EQ(e.value().model.rope_mscale, 1.34657);
  std::string bad = text;
  bad.replace(bad.find("1.34657"), 7, "0");
  Result<Experiment> rejected = LoadExperimentText(bad, path, {});
  ASSERT_FALSE(rejected.ok());
  EXPECT_NE(rejected.error().ToString().find("rope_mscale"), std::string::npos);
}

}  // namespace
}  // namespace meshsim

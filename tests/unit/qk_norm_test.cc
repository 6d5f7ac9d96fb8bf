// model.qk_norm: RMSNorms over each head's Q and K (Qwen3's q_norm and k_norm): import hf
// sets it for the Qwen3 families; its kernels, stored inputs and weights are charged, and
// a replayed step is slower and holds more activations with it.
#include <gtest/gtest.h>

#include <string>

#include "sim/config/loader.h"
#include "sim/engine/simulation.h"
#include "sim/workload/transformer.h"
#include "tests/unit/hf_fixture.h"
#include "tests/unit/layer_shape_fixture.h"
#include "tests/unit/test_fixtures.h"

namespace meshsim {
namespace {

bool ImportedQkNorm(const std::string& name) {
  return testing::ImportHfFixture(name).model.qk_norm;
}

TEST(QkNorm, ImportHfSetsItForQwen3Only) {
  EXPECT_TRUE(ImportedQkNorm("qwen3-8b"));
  EXPECT_TRUE(ImportedQkNorm("qwen3-30b-a3b"));
  EXPECT_TRUE(ImportedQkNorm("qwen3-235b-a22b"));
  EXPECT_FALSE(ImportedQkNorm("llama3-8b"));
  EXPECT_FALSE(ImportedQkNorm("gpt-oss-120b"));
  EXPECT_FALSE(ImportedQkNorm("deepseek-v3"));
}

// Qwen3-30B-A3B-like attention: 32 heads, 4 KV heads of 128 on hidden 2048; tp 2, seq 1024,
// micro-batch 2: Q and K per rank s*b*(q_w + k_w)/t = 1024 x 2 x (4096 + 512) / 2 elements.
ModelSpec Model(bool qk_norm) {
  ModelSpec m = testing::SmallModel();
  m.hidden = 2048;
  m.heads = 32;
  m.kv_heads = 4;
  m.head_dim = 128;
  m.qk_norm = qk_norm;
  return m;
}

TEST(QkNorm, ChargesTwoNormsOnQAndK) {
  const double elements = 1024.0 * 2 * (4096 + 512) / 2;
  const double unit = 2 * elements;  // 16-bit bytes of Q and K per rank
  const LayerShape shape = testing::SmallLayerShape();
  const LayerCost off = TransformerLayerCost(Model(false), shape);
  const LayerCost on = TransformerLayerCost(Model(true), shape);
  // Forward: read and write Q and K, one kernel each.
  EXPECT_DOUBLE_EQ(on.attention.fwd_bytes - off.attention.fwd_bytes, 2 * unit);
  EXPECT_EQ(on.attention.fwd_kernels - off.attention.fwd_kernels, 2);
  // Backward (dgrad and wgrad each charge the forward, dgrad the correction): read the
  // input and the output gradient, write the input gradient; two kernels per norm.
  const auto backward = [](const BlockCost& b) { return 2 * b.fwd_bytes + b.bwd_extra_bytes; };
  EXPECT_DOUBLE_EQ(backward(on.attention) - backward(off.attention), 3 * unit);
  EXPECT_EQ(on.attention.fwd_kernels + on.attention.bwd_extra_kernels - off.attention.fwd_kernels -
                off.attention.bwd_extra_kernels,
            4);
  EXPECT_DOUBLE_EQ(on.attention.fwd_flops, off.attention.fwd_flops);
  // Stored for backward: Q and K before the norms, in 16 bits.
  EXPECT_DOUBLE_EQ(on.attention.stored_act_bytes - off.attention.stored_act_bytes, unit);
  // Weights: head_dim each, on Q and on K.
  EXPECT_DOUBLE_EQ(LayerParams(Model(true)) - LayerParams(Model(false)), 2 * 128);
}

Experiment Step(bool qk_norm) {
  Experiment e;
  e.name = "qk-norm";
  e.model = Model(qk_norm);
  e.model.seq_len = 2048;
  e.cluster = testing::OneNode(2);
  e.plan.tp = 2;
  e.plan.global_batch = 2;
  e.training.flash_attention = true;
  return e;
}

TEST(QkNorm, ReplayedStepIsSlowerAndHoldsMore) {
  const auto off = Simulate(Step(false));
  const auto on = Simulate(Step(true));
  ASSERT_TRUE(off && on);
  EXPECT_GT(on->replay.step_time, off->replay.step_time);
  const auto peak = [](const Simulation& s) {
    return s.replay.memory[0].at_peak[static_cast<int>(MemCategory::kActivations)];
  };
  EXPECT_GT(peak(*on), peak(*off));
}

TEST(QkNorm, ConfigKey) {
  const std::string text =
      "name: x\nmodel: {name: m, layers: 2, hidden: 1024, heads: 16, ffn_hidden: 4096,\n"
      "  vocab: 1000, seq_len: 1024, qk_norm: true}\n"
      "cluster: ../../topologies/dgx-h100.yaml\ncluster_overrides: {nodes: 1}\n"
      "plan: {tp: 8, global_batch: 8}\n";
  const std::string path = std::string(MESHSIM_SOURCE_DIR) + "/workloads/experiments/test.yaml";
  Result<Experiment> e = LoadExperimentText(text, path, {});
  ASSERT_TRUE(e.ok()) << e.error().ToString();
  EXPECT_TRUE(e.value().model.qk_norm);
  std::string bad = text;
  bad.replace(bad.find("true"), 4, "3");
  Result<Experiment> rejected = LoadExperimentText(bad, path, {});
  ASSERT_FALSE(rejected.ok());
  EXPECT_NE(rejected.error().ToString().find("qk_norm"), std::string::npos);
}

}  // namespace
}  // namespace meshsim

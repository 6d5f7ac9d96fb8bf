// GPT-OSS's routed experts (model.expert_bias, model.glu_clamp; README "MoE experts: the
// expert biases and the clamped GLU"): the element-wise kernels Megatron-Core's TEGroupedMLP
// runs for them, their bytes derived by hand in the comments beside each value.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "sim/config/import_hf.h"
#include "sim/workload/transformer.h"
#include "tests/unit/experiment_step.h"
#include "tests/unit/kernel_fixtures.h"

namespace meshsim {
namespace {

// TinyMoe (hidden 128, moe_ffn 64, 16 experts, top 4) with GPT-OSS's experts; at EP 4 a
// rank holds 4 experts and receives 256 tokens x 4 = 1024 copies.
std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

ModelSpec GptOssLike() {
  ModelSpec m = testing::TinyMoe();
  m.expert_bias = true;
  m.glu_clamp = 7;
  return m;
}

LayerShape Megatron(MoeDispatcher d) {
  LayerShape s;
  s.seq = 256;
  s.micro_batch = 1;
  s.megatron = true;
  s.moe_dispatcher = d;
  return s;
}

// The clamp, per received copy and element of moe_ffn (64), bf16: forward two clamps (read
// and write 2 + 2 bytes each) and the cat (4 + 4): 16 bytes, 3 kernels; backward the
// one-sided clamp's compare (2 + 1) and where (1 + 2 + 2), the two-sided one's two
// compares (3 each), logical_and_ (2 + 1) and where (5), chunk's cat (4 + 4): 30 bytes,
// 7 kernels. FC2's bias with the flex dispatcher's fp32 probabilities, per element of
// hidden (128): b * p writes 4; t + that reads 2 + 4, writes 4; cat 4 + 4; the cast to
// bf16 4 + 2: 28 bytes, 2 kernels per expert + cat + cast = 10; backward: the cast's
// (2 + 4), the per-expert casts of t's gradient (4 + 2), the cat of those (2 + 2), two
// products written (4 + 4 each) and summed (4 each): 40 bytes, 5 per expert + 2 = 22.
TEST(ExpertElementwise, ClampAndFc2BiasWithFp32Probs) {
  const MoeCost c = MoeLayerCost(GptOssLike(), Megatron(MoeDispatcher::kFlex), 4);
  EXPECT_DOUBLE_EQ(c.extra_fwd_bytes, 1024.0 * 64 * 16 + 1024.0 * 128 * 28);
  EXPECT_DOUBLE_EQ(c.extra_bwd_bytes, 1024.0 * 64 * 30 + 1024.0 * 128 * 40);
  EXPECT_EQ(c.extra_fwd_kernels, 3 + 10);
  EXPECT_EQ(c.extra_bwd_kernels, 7 + 22);
  EXPECT_EQ(c.extra_fwd_trailing, 10);  // FC2's bias, after FC2's GEMMs; not the clamp
}

// The all-to-all dispatcher keeps the router's bf16 probabilities: b * p writes 2, the add
// reads 2 + 2 and writes 2, the cat 2 + 2, no cast: 12 bytes, 2 kernels per expert + cat;
// backward the cat of t's gradients (2 + 2) and the two products (2 + 2 + 2 each): 16
// bytes, 4 per expert + 1.
TEST(ExpertElementwise, Fc2BiasWithBf16Probs) {
  ModelSpec m = GptOssLike();
  m.glu_clamp = 0;
  const MoeCost c = MoeLayerCost(m, Megatron(MoeDispatcher::kAllToAll), 4);
  EXPECT_DOUBLE_EQ(c.extra_fwd_bytes, 1024.0 * 128 * 12);
  EXPECT_DOUBLE_EQ(c.extra_bwd_bytes, 1024.0 * 128 * 16);
  EXPECT_EQ(c.extra_fwd_kernels, 9);
  EXPECT_EQ(c.extra_bwd_kernels, 17);
  EXPECT_EQ(c.extra_fwd_trailing, 9);
}

// None without the model's keys, outside Megatron (NeMo-Automodel's own experts), or with
// TE's fused grouped MLP.
TEST(ExpertElementwise, OnlyMegatronsTeGroupedMlp) {
  EXPECT_EQ(MoeLayerCost(testing::TinyMoe(), Megatron(MoeDispatcher::kFlex), 4).extra_fwd_bytes, 0);
  LayerShape fsdp = Megatron(MoeDispatcher::kFlex);
  fsdp.megatron = false;
  EXPECT_EQ(MoeLayerCost(GptOssLike(), fsdp, 4).extra_bwd_bytes, 0);
  LayerShape fused = Megatron(MoeDispatcher::kFlex);
  fused.fused_grouped_mlp = true;
  EXPECT_EQ(MoeLayerCost(GptOssLike(), fused, 4).extra_fwd_kernels, 0);
}

// moe_act's recomputation re-runs bias_act_func whole: the clamp's 3 kernels and 16 bytes
// per element join the activation's re-run, and the clamped copy (2 x 64 x 2 bytes per
// copy), stored without recomputation, is working memory of the backward instead.
TEST(ExpertElementwise, RecomputedWithTheActivation) {
  const ModelSpec m = GptOssLike();
  ModelSpec plain = m;
  plain.glu_clamp = 0;
  LayerShape s = Megatron(MoeDispatcher::kFlex);
  const double copy = 1024.0 * 2 * 64 * 2;
  EXPECT_DOUBLE_EQ(MoeLayerCost(m, s, 4).experts.stored_act_bytes,
                   MoeLayerCost(plain, s, 4).experts.stored_act_bytes + copy);
  s.recompute = Recompute::kSelective;
  s.recompute_modules.moe_act = true;
  const MoeCost c = MoeLayerCost(m, s, 4), p = MoeLayerCost(plain, s, 4);
  EXPECT_DOUBLE_EQ(c.experts.recompute_bytes, p.experts.recompute_bytes + 1024.0 * 64 * 16);
  EXPECT_EQ(c.experts.recompute_kernels, p.experts.recompute_kernels + 3);
  EXPECT_DOUBLE_EQ(c.experts.stored_act_bytes, p.experts.stored_act_bytes);
  EXPECT_DOUBLE_EQ(c.experts.transient_act_bytes, p.experts.transient_act_bytes + copy);
}

// The bundled B200 GPT-OSS row runs them: its step is longer than without the two keys.
TEST(ExpertElementwise, GptOssStepRunsThem) {
  const std::string path = std::string(MESHSIM_SOURCE_DIR) +
                           "/workloads/experiments/public-b200-bridge-gpt-oss-120b.yaml";
  const StepSummary with = testing::ExperimentStep(path, {});
  const StepSummary without =
      testing::ExperimentStep(path, {"model.expert_bias=false", "model.glu_clamp=0"});
  EXPECT_GT(with.step_time_s, without.step_time_s * 1.05);
}

// FC2's bias kernels are launched after FC2's GEMMs (TEGroupedMLP.forward calls
// _apply_bias after linear_fc2): on the H100 GPT-OSS row, where the dispatcher's sync
// drains the host's run-ahead every MoE layer, the GPU runs FC2's GEMMs (and what is left
// of FC1's op) while the host launches them: the GPU waits for part of their host time,
// not all of it, and FC2's GEMMs do not wait for them.
struct BiasRun {
  double host_bound = 0;  // s
  double launch_s = 0;    // the host's launch time on the critical rank
};
BiasRun RunGptOss(bool bias) {
  const std::string path = std::string(MESHSIM_SOURCE_DIR) +
                           "/workloads/experiments/public-h100-bridge-gpt-oss-120b.yaml";
  Result<Experiment> e =
      LoadExperimentFile(path, {"cluster.network_model=alpha_beta",
                                std::string("model.expert_bias=") + (bias ? "true" : "false")});
  EXPECT_TRUE(e.ok()) << e.error().ToString();
  const auto sim = Simulate(e.value());
  const StepSummary summary = SummarizeStep(*sim);
  BiasRun r{summary.time_breakdown_s.host_bound, 0};
  const Program& p = sim->program;
  for (OpId id : p.StreamOps(summary.critical_rank, Stream::kHost)) {
    if (p.Info(id).tag == Tag::kHostLaunch) {
      r.launch_s += p.WorkOf(p.op(id)).kernels * e.value().cluster.host.launch_us * 1e-6;
    }
  }
  return r;
}

TEST(ExpertElementwise, Fc2BiasLaunchesRunBehindTheExperts) {
  const BiasRun with = RunGptOss(true), without = RunGptOss(false);
  ASSERT_GT(without.host_bound, 0.5);
  const double added_launches = with.launch_s - without.launch_s;
  ASSERT_GT(added_launches, 0.5);
  EXPECT_GT(with.host_bound, without.host_bound);
  EXPECT_LT(with.host_bound - without.host_bound, 0.6 * added_launches)
      << "host-bound " << without.host_bound << " -> " << with.host_bound << " s, launches +"
      << added_launches << " s";
}

// A negative clamp is bad input, named by its key.
TEST(ExpertElementwise, NegativeClampIsRefused) {
  const std::string path = std::string(MESHSIM_SOURCE_DIR) +
                           "/workloads/experiments/public-b200-bridge-gpt-oss-120b.yaml";
  const std::string error = testing::ExperimentLoadError(path, {"model.glu_clamp=-1"});
  EXPECT_NE(error.find("glu_clamp"), std::string::npos) << error;
  EXPECT_NE(error.find("expected a clamp limit > 0"), std::string::npos) << error;
}

// import hf: GPT-OSS's experts have biases and its swiglu_limit is the clamp.
TEST(ExpertElementwise, ImportedFromGptOssConfig) {
  const std::string file = std::string(MESHSIM_SOURCE_DIR) + "/tests/fixtures/hf/gpt-oss-120b.json";
  HfImportOptions o;
  o.source = file;
  Result<HfImport> r = ImportHfConfig(ReadText(file), o);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_TRUE(r.value().model.expert_bias);
  EXPECT_DOUBLE_EQ(r.value().model.glu_clamp, 7);
  EXPECT_NE(ModelYamlKeys(r.value().model, "").find("\nexpert_bias: true\nglu_clamp: 7\n"),
            std::string::npos);
}

}  // namespace
}  // namespace meshsim

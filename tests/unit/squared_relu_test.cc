// model.ffn_kind squared_relu (Nemotron-3/4, Nemotron-H) and training.squared_relu_fusion:
// the same parameters, FLOPs and saved activations as GeLU; one fused activation kernel
// (Megatron-Core's compiled squared_relu) or the eager relu and pow, whose traffic and
// launches the dense MLP and the routed experts count; the config key, the importers.
#include <gtest/gtest.h>

#include <string>

#include "sim/config/import_megatron.h"
#include "sim/config/loader.h"
#include "sim/engine/simulation.h"
#include "sim/workload/layer_dims.h"
#include "sim/workload/param_count.h"
#include "sim/workload/transformer.h"
#include "tests/unit/layer_shape_fixture.h"
#include "tests/unit/test_fixtures.h"

namespace meshsim {
namespace {

ModelSpec SquaredRelu() {
  ModelSpec m = testing::SmallModel();
  m.ffn_kind = FfnKind::kSquaredRelu;
  return m;
}

// seq 1024, micro-batch 2, tp 2: s*b*f/t = 1024 x 2 x 4096 / 2 = 4,194,304 elements.
LayerShape Shape(bool fused) {
  LayerShape s = testing::SmallLayerShape(/*megatron=*/false);
  s.squared_relu_fused = fused;
  return s;
}

constexpr double kSbfOverT = 1024.0 * 2 * 4096 / 2;

TEST(SquaredRelu, FusedCostsAsGelu) {
  ModelSpec gelu = SquaredRelu();
  gelu.ffn_kind = FfnKind::kGelu;
  const LayerCost g = TransformerLayerCost(gelu, Shape(true));
  const LayerCost r = TransformerLayerCost(SquaredRelu(), Shape(true));
  EXPECT_EQ(SquaredRelu().FfnMatrices(), 2);
  EXPECT_DOUBLE_EQ(r.mlp.fwd_flops, g.mlp.fwd_flops);
  EXPECT_DOUBLE_EQ(r.mlp.fwd_bytes, g.mlp.fwd_bytes);
  EXPECT_EQ(r.mlp.fwd_kernels, g.mlp.fwd_kernels);
  EXPECT_DOUBLE_EQ(r.mlp.bwd_extra_bytes, 0);
  EXPECT_DOUBLE_EQ(r.mlp.stored_act_bytes, g.mlp.stored_act_bytes);
  EXPECT_DOUBLE_EQ(r.params, g.params);
  EXPECT_DOUBLE_EQ(CountParams(SquaredRelu()).total, CountParams(gelu).total);
}

// Eager: relu and pow each read and write the f-wide tensor (2 more 16-bit elements per
// element forward, one more kernel); backward pow_backward's three kernels and relu's
// threshold_backward move 10 elements in 4 kernels, of which dgrad and wgrad charge the
// forward's 4 each (the block's convention): 2 more in dgrad, with 2 more launches.
TEST(SquaredRelu, TheEagerPairMovesMoreThanTheFusedKernel) {
  const LayerCost fused = TransformerLayerCost(SquaredRelu(), Shape(true));
  const LayerCost eager = TransformerLayerCost(SquaredRelu(), Shape(false));
  EXPECT_DOUBLE_EQ(eager.mlp.fwd_bytes - fused.mlp.fwd_bytes, 2 * 2 * kSbfOverT);
  EXPECT_EQ(eager.mlp.fwd_kernels, fused.mlp.fwd_kernels + 1);
  EXPECT_DOUBLE_EQ(eager.mlp.bwd_extra_bytes, 2 * 2 * kSbfOverT);
  EXPECT_EQ(eager.mlp.bwd_extra_kernels, 2);
  const double eager_bwd = 2 * eager.mlp.fwd_bytes + eager.mlp.bwd_extra_bytes;
  const double fused_bwd = 2 * fused.mlp.fwd_bytes + fused.mlp.bwd_extra_bytes;
  EXPECT_DOUBLE_EQ(eager_bwd - fused_bwd, 6 * 2 * kSbfOverT);
  // The same FLOPs and the same saved tensors: relu's output stands for the fused input.
  EXPECT_DOUBLE_EQ(eager.mlp.fwd_flops, fused.mlp.fwd_flops);
  EXPECT_DOUBLE_EQ(eager.mlp.stored_act_bytes, fused.mlp.stored_act_bytes);
  // Other activations do not read the switch.
  ModelSpec swiglu = SquaredRelu();
  swiglu.ffn_kind = FfnKind::kSwiglu;
  EXPECT_DOUBLE_EQ(TransformerLayerCost(swiglu, Shape(false)).mlp.fwd_bytes,
                   TransformerLayerCost(swiglu, Shape(true)).mlp.fwd_bytes);
}

// The routed experts (Nemotron 3's): 4 received token copies per token over 16 experts on
// 4 ranks; forward 2 elements per f fused, 4 eager; backward 3 against 10.
TEST(SquaredRelu, TheExpertsRunTheEagerPairToo) {
  ModelSpec m = SquaredRelu();
  m.experts = 16;
  m.top_k = 4;
  m.moe_ffn_hidden = 512;
  const MoeCost fused = MoeLayerCost(m, Shape(true), 4);
  const MoeCost eager = MoeLayerCost(m, Shape(false), 4);
  const double unit = 1024.0 * 2 / 2 * 4 * 512 * 2;  // received x f x 2 bytes
  EXPECT_DOUBLE_EQ(fused.experts.fwd_bytes, 2 * unit);
  EXPECT_DOUBLE_EQ(eager.experts.fwd_bytes, 4 * unit);
  EXPECT_EQ(eager.experts.fwd_kernels, fused.experts.fwd_kernels + 1);
  EXPECT_EQ(eager.experts.bwd_extra_kernels, 2);
  EXPECT_DOUBLE_EQ(eager.experts.fwd_flops, fused.experts.fwd_flops);
  EXPECT_DOUBLE_EQ(eager.experts.stored_act_bytes, fused.experts.stored_act_bytes);
}

// The simulated step: the eager pair's MLP ops carry more bytes and launches.
TEST(SquaredRelu, TheStepCarriesTheEagerKernels) {
  const auto mlp_work = [](bool fused) {
    Experiment e;
    e.name = "srelu";
    e.model = SquaredRelu();
    e.cluster = testing::OneNode(1);
    e.plan.global_batch = 1;
    e.training.squared_relu_fusion = fused;
    const auto sim = Simulate(e, {}, testing::FakeModels());
    KernelWork sum{0, 0, 0};
    for (OpId id : sim->program.StreamOps(0, Stream::kCompute)) {
      const Op& op = sim->program.op(id);
      if (op.tag != Tag::kMlpFwd && op.tag != Tag::kMlpBwd && op.tag != Tag::kMlpWgrad) continue;
      const KernelWork w = sim->program.WorkOf(op);
      sum.bytes += w.bytes;
      sum.kernels += w.kernels;
    }
    return sum;
  };
  const KernelWork fused = mlp_work(true), eager = mlp_work(false);
  // 8 layers x 1024 x 4096 elements, 16-bit: forward 2 more elements, dgrad 2 + 2, wgrad 2.
  EXPECT_DOUBLE_EQ(eager.bytes - fused.bytes, 8 * 1024.0 * 4096 * 2 * (2 + 4 + 2));
  EXPECT_EQ(eager.kernels - fused.kernels, 8 * (1 + 1 + 2));
}

TEST(SquaredRelu, ConfigKeys) {
  const std::string text =
      "name: x\nmodel: {name: m, layers: 2, hidden: 1024, heads: 16, ffn_hidden: 4096,\n"
      "  ffn_kind: squared_relu, vocab: 1000, seq_len: 1024}\n"
      "cluster: ../../topologies/dgx-h100.yaml\ncluster_overrides: {nodes: 1}\n"
      "plan: {tp: 8, global_batch: 8}\ntraining: {squared_relu_fusion: false}\n";
  const std::string path = std::string(MESHSIM_SOURCE_DIR) + "/workloads/experiments/test.yaml";
  Result<Experiment> e = LoadExperimentText(text, path, {});
  ASSERT_TRUE(e.ok()) << e.error().ToString();
  EXPECT_EQ(e.value().model.ffn_kind, FfnKind::kSquaredRelu);
  EXPECT_FALSE(e.value().training.squared_relu_fusion);
  EXPECT_TRUE(TrainingSpec{}.squared_relu_fusion);  // Megatron-Core's compiled kernel
}

TEST(SquaredRelu, MegatronFlagImportsAsSquaredRelu) {
  Result<MegatronImport> r = ParseMegatronArgs(
      "pretrain_gpt.py --num-layers 32 --hidden-size 4096 --num-attention-heads 32 "
      "--squared-relu --seq-length 4096 --vocab-size 256000 --micro-batch-size 1 "
      "--global-batch-size 8");
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r.value().model.ffn_kind, FfnKind::kSquaredRelu);
  EXPECT_EQ(r.value().model.ffn_hidden, 4 * 4096);
  EXPECT_STREQ(FfnKindName(FfnKind::kSquaredRelu), "squared_relu");
}

}  // namespace
}  // namespace meshsim

// The routed experts' activation backward (Megatron-Core's swiglu_back /
// weighted_swiglu_back): one kernel in the input-gradient op that reads the saved 2f-wide
// input and the f-wide output gradient and writes the 2f-wide input gradient (5f elements
// per received token); the weight-gradient op moves no element-wise bytes.
#include <gtest/gtest.h>

#include "sim/engine/simulation.h"
#include "sim/workload/transformer.h"
#include "tests/unit/layer_shape_fixture.h"
#include "tests/unit/test_fixtures.h"

namespace meshsim {
namespace {

// 16 experts of f 512, top 4, on 4 ranks; 1024 x 2 tokens over tp 2: 1024 tokens per
// rank, 4096 received token copies.
ModelSpec Moe(FfnKind kind) {
  ModelSpec m = testing::SmallModel();
  m.experts = 16;
  m.top_k = 4;
  m.moe_ffn_hidden = 512;
  m.ffn_kind = kind;
  return m;
}

LayerShape Shape() { return testing::SmallLayerShape(); }

constexpr double kReceivedF = 4096.0 * 512;  // received copies x f

TEST(MoeActivationBackward, BytesAreTheClosedForm) {
  const MoeCost swiglu = MoeLayerCost(Moe(FfnKind::kSwiglu), Shape(), 4);
  EXPECT_DOUBLE_EQ(swiglu.experts.fwd_bytes, 3 * kReceivedF * 2);  // 2f read, f written
  EXPECT_DOUBLE_EQ(swiglu.act_bwd_bytes, 5 * kReceivedF * 2);      // 2f + f read, 2f written
  EXPECT_EQ(swiglu.experts.bwd_extra_kernels, 0);
  const MoeCost gelu = MoeLayerCost(Moe(FfnKind::kGelu), Shape(), 4);
  EXPECT_DOUBLE_EQ(gelu.act_bwd_bytes, 3 * kReceivedF * 2);
  // The fused grouped MLP's dGLU kernel computes it with FC2's input gradient.
  LayerShape fused = Shape();
  fused.fused_grouped_mlp = true;
  EXPECT_DOUBLE_EQ(MoeLayerCost(Moe(FfnKind::kSwiglu), fused, 4).act_bwd_bytes, 0);
}

// On a step: the experts' dgrad op carries the activation's backward once, with the inverse
// permutations; their wgrad op no element-wise bytes.
TEST(MoeActivationBackward, RunsOnceInTheInputGradientOp) {
  Experiment e;
  e.name = "moe";
  e.model = Moe(FfnKind::kSwiglu);
  e.cluster = testing::OneNode(8);
  e.plan.tp = 2;
  e.plan.sequence_parallel = true;
  e.plan.dp = 4;
  e.plan.ep = 4;
  e.plan.micro_batch = 2;
  e.plan.global_batch = 8;
  e.training.flash_attention = true;
  const auto sim = Simulate(e, {}, testing::FakeModels());
  const Program& p = sim->program;
  const MoeCost c = MoeLayerCost(e.model, Shape(), 4);
  int dgrads = 0, wgrads = 0;
  for (OpId id : p.StreamOps(0, Stream::kCompute)) {
    const Op& op = p.op(id);
    if (op.tag == Tag::kMoeExpertsBwd) {
      EXPECT_DOUBLE_EQ(p.WorkOf(op).bytes, c.act_bwd_bytes + c.permute_bytes + c.extra_bwd_bytes);
      ++dgrads;
    } else if (op.tag == Tag::kMoeExpertsWgrad) {
      EXPECT_DOUBLE_EQ(p.WorkOf(op).bytes, 0);
      ++wgrads;
    }
  }
  EXPECT_EQ(dgrads, 8);  // 8 layers, one micro-batch
  EXPECT_EQ(wgrads, 8);
}

}  // namespace
}  // namespace meshsim

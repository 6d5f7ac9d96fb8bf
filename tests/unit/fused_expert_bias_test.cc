// GPT-OSS's expert biases in Transformer Engine's fused grouped MLP (README "GPT-OSS's
// expert biases in the fused grouped MLP"): the dGLU kernel's bias-gradient reduction and
// FC2's probability-scaled bias gradient kernel.
#include <gtest/gtest.h>

#include "sim/workload/layer_kernels.h"
#include "sim/workload/shape_compute_model.h"
#include "sim/workload/transformer.h"
#include "tests/unit/kernel_fixtures.h"

namespace meshsim {
namespace {

ModelSpec WithBias(bool bias) {
  ModelSpec m = testing::TinyMoe();
  m.expert_bias = bias;
  return m;
}

LayerShape FusedMxfp8() {
  LayerShape s;
  s.seq = 256;
  s.micro_batch = 1;
  s.dtype = Dtype::kFp8;
  s.megatron = true;
  s.moe_dispatcher = MoeDispatcher::kFlex;
  s.fused_grouped_mlp = true;
  return s;
}

// TinyMoe (hidden 128, top 4), 256 tokens at EP 1: 1,024 received copies. The Triton kernel
// reads FC2's bf16 output gradient (128 x 2 bytes) and the fp32 probability (4), adds into
// the probabilities' gradient (4) after zeroing it (4): 268 bytes a copy, in 4 kernels.
TEST(FusedExpertBias, ScaledBiasGradientKernelInBackward) {
  const MoeCost with = MoeLayerCost(WithBias(true), FusedMxfp8(), 1);
  const MoeCost without = MoeLayerCost(WithBias(false), FusedMxfp8(), 1);
  EXPECT_DOUBLE_EQ(with.extra_bwd_bytes, 1024.0 * 268);
  EXPECT_EQ(with.extra_bwd_kernels, 4);
  EXPECT_DOUBLE_EQ(with.extra_fwd_bytes, 0);  // the biases are in the kernels' epilogues
  EXPECT_EQ(with.extra_fwd_kernels, 0);
  EXPECT_DOUBLE_EQ(without.extra_bwd_bytes, 0);
}

// The dGLU kernel with the bias gradient: cudnn-frontend PR #322's 155.6 against 139.0 us.
// At GPT-OSS 120B's shape (hidden and expert FFN 2,880, 128 experts of top 4, EP 64, MBS 4
// of 4,096 tokens), where the kernel is compute-bound.
TEST(FusedExpertBias, DgluKernelReducesTheBiasGradientMoreSlowly) {
  ModelSpec big = WithBias(true);
  big.hidden = 2880;
  big.moe_ffn_hidden = 2880;
  big.experts = 128;
  big.top_k = 4;
  ModelSpec plain_model = big;
  plain_model.expert_bias = false;
  LayerShape shape = FusedMxfp8();
  shape.seq = 4096;
  shape.micro_batch = 4;
  const MoeKernels with = MoeLayerKernels(big, shape, 64);
  const MoeKernels without = MoeLayerKernels(plain_model, shape, 64);
  ASSERT_EQ(with.experts.dgrad.gemms.size(), 2u);
  EXPECT_TRUE(with.experts.dgrad.gemms[0].fused_dbias);
  EXPECT_FALSE(with.experts.dgrad.gemms[1].fused_dbias);
  EXPECT_FALSE(without.experts.dgrad.gemms[0].fused_dbias);
  for (const GemmShape& g : with.experts.fwd.gemms) EXPECT_FALSE(g.fused_dbias);
  const ShapeComputeModel model(testing::Gb200Mxfp8Like(true));
  const GemmShape plain = without.experts.dgrad.gemms[0];
  const GemmShape biased = with.experts.dgrad.gemms[0];
  EXPECT_NEAR(model.GemmSeconds(biased) / model.GemmSeconds(plain), 155.6 / 139.0, 1e-6);
}

}  // namespace
}  // namespace meshsim

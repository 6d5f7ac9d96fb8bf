// The MoE layer as Megatron-Core and Transformer Engine run it: the token permutations of
// the all-to-all dispatcher (HBM traffic in hidden-wide rows x top_k x tokens), the
// experts' GEMMs as GroupedLinear launches them (one cuBLAS GEMM per local expert on 4
// streams: tile and wave quantization per expert), the router's kernels, and routing
// imbalance lengthening the busiest rank's expert GEMMs. Expected values are derived by
// hand in the comments beside them.
#include <gtest/gtest.h>

#include <cmath>

#include "sim/workload/layer_kernels.h"
#include "sim/workload/shape_compute_model.h"
#include "sim/workload/transformer.h"
#include "tests/unit/kernel_fixtures.h"

namespace meshsim {
namespace {

ModelSpec Moe(int top_k = 4, int hidden = 128) { return testing::TinyMoe(top_k, hidden); }

LayerShape Shape(int64_t seq = 256) {
  LayerShape s;
  s.seq = seq;
  s.micro_batch = 1;
  return s;
}

// Sent = 256 x 4 = 1024 copies, received the same (balanced). Rows: permute 2 x 1024,
// chunk sort and unsort 4 x 1024, unpermute 1024 + 256: 7,424 rows of 128 x 2 bytes.
TEST(MoePermutation, AllToAllDispatcherTrafficByHand) {
  const MoeCost c = MoeLayerCost(Moe(), Shape(), /*ep=*/4);
  EXPECT_DOUBLE_EQ(c.permute_bytes, 7424.0 * 128 * 2);
  // One local expert (ep 16): no chunk sort, 3 x 1024 + 256 rows.
  EXPECT_DOUBLE_EQ(MoeLayerCost(Moe(), Shape(), 16).permute_bytes, 3328.0 * 128 * 2);
  // Kernels: 2 GEMM slots per 4 local experts (FC1, FC2), the activation, the
  // permutations (2 + 2), their bookkeeping (3) and the chunk sorts (2).
  EXPECT_EQ(c.experts.fwd_kernels, 2 + 1 + 7 + 2);
  EXPECT_EQ(MoeLayerCost(Moe(), Shape(), 1).experts.fwd_kernels, 2 * 4 + 1 + 7 + 2);
  EXPECT_EQ(c.router.fwd_kernels, kMoeRouterKernels);
}

// DeepEP's and HybridEP's dispatchers (plan.moe_dispatcher flex) fuse the permutations
// into their dispatch and combine: the 1024 received copies written once and read once
// (2,048 rows), in two kernels, whatever the local experts.
TEST(MoePermutation, FlexDispatcherFusesThePermutations) {
  LayerShape s = Shape();
  s.moe_dispatcher = MoeDispatcher::kFlex;
  const MoeCost c = MoeLayerCost(Moe(), s, 4);
  EXPECT_DOUBLE_EQ(c.permute_bytes, 2048.0 * 128 * 2);
  EXPECT_EQ(c.experts.fwd_kernels, 2 + 1 + 2);
  EXPECT_DOUBLE_EQ(MoeLayerCost(Moe(), s, 16).permute_bytes, c.permute_bytes);
  EXPECT_LT(c.permute_bytes, MoeLayerCost(Moe(), Shape(), 4).permute_bytes);
}

// The traffic scales with top_k x hidden x tokens: each doubles it, but for the
// unpermuted output rows (tokens x hidden), which do not scale with top_k.
TEST(MoePermutation, ScalesWithTopkHiddenAndTokens) {
  const double base = MoeLayerCost(Moe(), Shape(), 4).permute_bytes;
  const double row = 128.0 * 2;
  EXPECT_DOUBLE_EQ(MoeLayerCost(Moe(8), Shape(), 4).permute_bytes, 2 * base - 256 * row);
  EXPECT_DOUBLE_EQ(MoeLayerCost(Moe(4, 256), Shape(), 4).permute_bytes, 2 * base);
  EXPECT_DOUBLE_EQ(MoeLayerCost(Moe(), Shape(512), 4).permute_bytes, 2 * base);
  // Imbalance: the busiest rank receives 1.5x; only its chunk sorts grow (4 x 512 rows).
  EXPECT_DOUBLE_EQ(MoeLayerCost(Moe(), Shape(), 4, 1.5).permute_bytes, base + 4 * 512 * row);
}

using testing::H100Like;

// The experts' GEMMs are one launch per local expert, on min(4, experts) streams; their
// FLOPs are the grouped FLOPs.
TEST(MoeGroupedGemm, OneLaunchPerLocalExpertOnFourStreams) {
  const MoeKernels k = MoeLayerKernels(Moe(), Shape(), 4);  // 4 local experts
  ASSERT_EQ(k.experts.fwd.gemms.size(), 2u);
  const GemmShape& fc1 = k.experts.fwd.gemms[0];
  EXPECT_TRUE(fc1.launches_per_batch);
  EXPECT_DOUBLE_EQ(fc1.batch, 4);
  EXPECT_DOUBLE_EQ(fc1.streams, 4);
  EXPECT_DOUBLE_EQ(fc1.m, 256.0 * 4 / 4);  // 1024 received over 4 experts
  EXPECT_DOUBLE_EQ(k.experts.fwd.Flops(), MoeLayerCost(Moe(), Shape(), 4).experts.fwd_flops);
  EXPECT_DOUBLE_EQ(MoeLayerKernels(Moe(), Shape(), 8).experts.fwd.gemms[0].streams, 2);
  EXPECT_FALSE(MoeLayerKernels(Moe(), Shape(), 16).experts.fwd.gemms[0].launches_per_batch);
  // Backward too; a JAX-style plan's experts are one grouped kernel (megablox).
  EXPECT_TRUE(k.experts.wgrad.gemms[0].launches_per_batch);
  LayerShape jax = Shape();
  jax.xla_remat = true;
  EXPECT_FALSE(MoeLayerKernels(Moe(), jax, 4).experts.fwd.gemms[0].launches_per_batch);
}

// Few tokens per expert: 16 experts x 512 tokens, 2048 -> 1536 (compute-bound: 3.2 GFLOP
// against 9.9 MB per expert). One batched kernel packs 16 x 24 tiles (2 x 12 of 256 x 128)
// into 3 waves of 132 SMs at k 2048 (k / (k + 128) = 0.941): 3 x 2048 / 0.941 = 6,529
// tile-k-steps. Each of 16 separate launches is a wave of its own: alone, its 24 tiles split
// k 5 ways into one wave at k 409.6 (0.762), 537.6 (sharing the SMs with 3 others, a
// quarter of a wave at k 2048, 544, is no faster); 16 x 537.6 = 8,602: 1.32x slower.
TEST(MoeGroupedGemm, FewTokensPerExpertIsLessEfficientThanOneBatchedKernel) {
  const ShapeComputeModel model(H100Like());
  GemmShape batched{512, 1536, 2048, 16};
  GemmShape launched = batched;
  launched.launches_per_batch = true;
  launched.streams = 4;
  EXPECT_NEAR(model.GemmSeconds(launched) / model.GemmSeconds(batched), 8602.0 / 6529, 0.01);
  // Many tokens per expert: the two agree within a few per cent.
  GemmShape big{8192, 1536, 2048, 16};
  GemmShape big_launched = big;
  big_launched.launches_per_batch = true;
  big_launched.streams = 4;
  EXPECT_NEAR(model.GemmSeconds(big_launched) / model.GemmSeconds(big), 1.0, 0.05);
  // One launch of batch 1 is exactly that GEMM.
  GemmShape one{512, 1536, 2048, 1};
  GemmShape one_launched = one;
  one_launched.launches_per_batch = true;
  EXPECT_DOUBLE_EQ(model.GemmSeconds(one_launched), model.GemmSeconds(one));
}

// Routing imbalance: the rank whose experts receive 2x the average tokens runs its
// expert GEMMs on twice the rows: about twice as long, never shorter.
TEST(MoeGroupedGemm, ImbalanceLengthensTheExpertGemms) {
  const ShapeComputeModel model(H100Like());
  const ModelSpec m = Moe(8, 2048);
  LayerShape s = Shape(4096);
  double balanced = 0, skewed = 0;
  for (const GemmShape& g : MoeLayerKernels(m, s, 4).experts.fwd.gemms) {
    balanced += model.GemmSeconds(g);
  }
  for (const GemmShape& g : MoeLayerKernels(m, s, 4, 2.0).experts.fwd.gemms) {
    skewed += model.GemmSeconds(g);
  }
  EXPECT_GT(skewed, 1.8 * balanced);
  EXPECT_LT(skewed, 2.2 * balanced);
}

// cluster.efficiency.grouped_gemm: each GEMM of GroupedLinear's per-expert launches runs
// at that share of the GEMM rate; cluster.efficiency.fused_grouped_gemm likewise the fused
// grouped MLP's grouped kernel (grouped_rate). The compute-bound 16 x (8192 x 1536 x 2048)
// experts take 1 / 0.5 = 2x as long at 0.5 of their own knob and are untouched by the
// other's; a batched kernel without either (JAX's megablox) and a dense GEMM do not change.
TEST(MoeGroupedGemm, GroupedGemmEfficienciesSlowOnlyTheirOwnPath) {
  ShapeModelParams half = H100Like();
  half.grouped_gemm_efficiency = 0.5;
  const ShapeComputeModel full_model(H100Like()), half_model(half);
  GemmShape launched{8192, 1536, 2048, 16};
  launched.launches_per_batch = true;
  launched.streams = 4;
  EXPECT_NEAR(half_model.GemmSeconds(launched) / full_model.GemmSeconds(launched), 2.0, 1e-9);
  GemmShape fused{8192, 1536, 2048, 16};
  fused.grouped_rate = true;
  EXPECT_DOUBLE_EQ(half_model.GemmSeconds(fused), full_model.GemmSeconds(fused));
  ShapeModelParams fused_half = H100Like();
  fused_half.fused_grouped_gemm_efficiency = 0.5;
  const ShapeComputeModel fused_half_model(fused_half);
  EXPECT_NEAR(fused_half_model.GemmSeconds(fused) / full_model.GemmSeconds(fused), 2.0, 1e-9);
  EXPECT_DOUBLE_EQ(fused_half_model.GemmSeconds(launched), full_model.GemmSeconds(launched));
  const GemmShape batched{8192, 1536, 2048, 16};
  EXPECT_DOUBLE_EQ(half_model.GemmSeconds(batched), full_model.GemmSeconds(batched));
  const GemmShape dense{8192, 1536, 2048, 1};
  EXPECT_DOUBLE_EQ(half_model.GemmSeconds(dense), full_model.GemmSeconds(dense));
}

// The fused grouped MLP (LayerShape::fused_grouped_mlp): FC1 and FC2 each one grouped
// kernel over the 4 local experts (not one launch per expert), with the SwiGLU in FC1's
// epilogue: no activation kernel and none of its 1024 x 3 x 64 x 2 bytes; same FLOPs;
// every pass's GEMMs at the fused path's rate (grouped_rate), GroupedLinear's not.
TEST(MoeGroupedGemm, FusedGroupedMlpIsOneKernelPerGemmWithoutTheActivation) {
  LayerShape fused = Shape();
  fused.fused_grouped_mlp = true;
  const MoeKernels k = MoeLayerKernels(Moe(), fused, 4);
  ASSERT_EQ(k.experts.fwd.gemms.size(), 2u);
  EXPECT_FALSE(k.experts.fwd.gemms[0].launches_per_batch);
  EXPECT_FALSE(k.experts.wgrad.gemms[1].launches_per_batch);
  for (const KernelShapes* pass : {&k.experts.fwd, &k.experts.dgrad, &k.experts.wgrad}) {
    for (const GemmShape& g : pass->gemms) EXPECT_TRUE(g.grouped_rate);
  }
  EXPECT_FALSE(MoeLayerKernels(Moe(), Shape(), 4).experts.fwd.gemms[0].grouped_rate);
  EXPECT_DOUBLE_EQ(k.experts.fwd.gemms[0].batch, 4);
  const MoeCost unfused_cost = MoeLayerCost(Moe(), Shape(), 4);
  const MoeCost fused_cost = MoeLayerCost(Moe(), fused, 4);
  EXPECT_DOUBLE_EQ(unfused_cost.experts.fwd_bytes, 1024.0 * 3 * 64 * 2);
  EXPECT_DOUBLE_EQ(fused_cost.experts.fwd_bytes, 0);
  EXPECT_EQ(fused_cost.experts.fwd_kernels, unfused_cost.experts.fwd_kernels - 1);
  EXPECT_EQ(fused_cost.experts.weight_kernels, 2);
  EXPECT_DOUBLE_EQ(fused_cost.experts.fwd_flops, unfused_cost.experts.fwd_flops);
  // 16 local experts (ep 1): GroupedLinear's 2 slots per 4 experts, the fused MLP's 2.
  EXPECT_EQ(MoeLayerCost(Moe(), Shape(), 1).experts.weight_kernels, 8);
  EXPECT_EQ(MoeLayerCost(Moe(), fused, 1).experts.weight_kernels, 2);
}

// A GB200-like GPU under MXFP8 training with the fused grouped MLP's six kernels measured
// (or not): testing::Gb200Mxfp8Like.
ShapeModelParams Gb200Fused(bool measured) { return testing::Gb200Mxfp8Like(measured); }

// At the measured shape each kernel takes its measured time, FLOPs / (fraction x the FP8
// peak): FC1 forward 2 x 262144 x 2560 x 2560 / (0.4581 x 5e15) = 1.500 ms, the dSwiGLU
// kernel 2 x 262144 x 2560 x 1280 / (0.2488 x 5e15) = 1.381 ms; fused_grouped_gemm scales
// that rate; unmeasured, the same kernel runs at the dense FP8 rate (0.457), in another
// time (1.597 ms for FC1 forward, 0.789 ms for FC2's weight gradient against 0.784).
TEST(MoeGroupedGemm, FusedMlpKernelsTakeTheirMeasuredTimeAtTheMeasuredShape) {
  const ShapeComputeModel model(Gb200Fused(true));
  ShapeModelParams half_params = Gb200Fused(true);
  half_params.fused_grouped_gemm_efficiency = 0.5;
  const ShapeComputeModel half(half_params), unmeasured(Gb200Fused(false));
  const FusedMlpMeasurement m = Gb200Fused(true).fused_mlp;
  for (int i = 0; i < kFusedMlpKernels; ++i) {
    GemmShape g = m.Shape(static_cast<FusedMlpKernel>(i));
    g.grouped_rate = true;
    g.fused_kernel = i;
    const double measured_s = g.Flops() / (m.efficiency[i] * 5000e12);
    EXPECT_NEAR(model.GemmSeconds(g), measured_s, 1e-12 * measured_s) << i;
    EXPECT_NEAR(half.GemmSeconds(g), 2 * measured_s, 1e-12 * measured_s) << i;
    EXPECT_GT(std::abs(unmeasured.GemmSeconds(g) - measured_s), 1e-3 * measured_s) << i;
  }
  GemmShape fc1 = m.Shape(kFusedFc1Fwd);
  fc1.fused_kernel = kFusedFc1Fwd;
  EXPECT_NEAR(model.GemmSeconds(fc1), 1.500e-3, 1e-6);
  GemmShape dswiglu = m.Shape(kFusedFc2Dgrad);
  dswiglu.fused_kernel = kFusedFc2Dgrad;
  EXPECT_NEAR(model.GemmSeconds(dswiglu), 1.381e-3, 1e-6);
}

// Another shape (Qwen3-30B-A3B's experts at EP 8: 16 x 8192 tokens, hidden 2048, ffn 768)
// runs as the shape model carries the measurement: as a plain FP8 GEMM of that shape at
// the kernel's derived efficiency (FusedKernelEfficiency: the measured fraction over the
// model's own at the measured shape, here 0.4581 / (69.19 / 70 waves x 2560 / 2688)).
TEST(MoeGroupedGemm, FusedMlpMeasurementCarriesToOtherShapesByTheShapeModel) {
  const ShapeComputeModel model(Gb200Fused(true));
  EXPECT_NEAR(model.FusedKernelEfficiency(kFusedFc1Fwd),
              0.4581 / (10240.0 / 148 / 70 * 2560 / 2688), 1e-9);
  const FusedMlpMeasurement qwen{16, 8192, 2048, 768, {}};
  for (int i = 0; i < kFusedMlpKernels; ++i) {
    GemmShape g = qwen.Shape(static_cast<FusedMlpKernel>(i));
    ShapeModelParams plain_params = Gb200Fused(false);
    plain_params.fp8.matmul_efficiency =
        model.FusedKernelEfficiency(static_cast<FusedMlpKernel>(i));
    const double plain = ShapeComputeModel(plain_params).GemmSeconds(g);
    g.fused_kernel = i;
    EXPECT_NEAR(model.GemmSeconds(g), plain, 1e-12 * plain) << i;
  }
}

// In a layer: the fused grouped MLP's GEMMs are marked as its kernels (forward FC1, FC2;
// backward FC2, FC1), and FC2's input and FC1's output gradient, quantised in the epilogue
// of the kernel before, are not cast; GroupedLinear's GEMMs are none of them.
TEST(MoeGroupedGemm, FusedMlpGemmsAreItsKernelsAndSkipTheEpilogueCasts) {
  LayerShape fused = Shape();
  fused.fused_grouped_mlp = true;
  fused.dtype = Dtype::kFp8;
  const PassKernels k = MoeLayerKernels(Moe(), fused, 4).experts;
  ASSERT_EQ(k.fwd.gemms.size(), 2u);
  ASSERT_EQ(k.dgrad.gemms.size(), 2u);
  ASSERT_EQ(k.wgrad.gemms.size(), 2u);
  EXPECT_EQ(k.fwd.gemms[0].fused_kernel, kFusedFc1Fwd);
  EXPECT_EQ(k.fwd.gemms[1].fused_kernel, kFusedFc2Fwd);
  EXPECT_EQ(k.dgrad.gemms[0].fused_kernel, kFusedFc2Dgrad);
  EXPECT_EQ(k.dgrad.gemms[1].fused_kernel, kFusedFc1Dgrad);
  EXPECT_EQ(k.wgrad.gemms[0].fused_kernel, kFusedFc2Wgrad);
  EXPECT_EQ(k.wgrad.gemms[1].fused_kernel, kFusedFc1Wgrad);
  EXPECT_TRUE(k.fwd.gemms[0].casts_a);
  EXPECT_FALSE(k.fwd.gemms[1].casts_a);
  EXPECT_TRUE(k.dgrad.gemms[0].casts_a);
  EXPECT_FALSE(k.dgrad.gemms[1].casts_a);
  LayerShape unfused = fused;
  unfused.fused_grouped_mlp = false;
  const PassKernels u = MoeLayerKernels(Moe(), unfused, 4).experts;
  EXPECT_EQ(u.fwd.gemms[1].fused_kernel, kFusedNone);
  EXPECT_TRUE(u.fwd.gemms[1].casts_a);
}

}  // namespace
}  // namespace meshsim

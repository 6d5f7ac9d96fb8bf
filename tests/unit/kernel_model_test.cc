// The shape-aware kernel model (sim/workload/shape_compute_model.h) against hand-worked
// times, and the kernel shapes the step builder gives each compute op.
#include <gtest/gtest.h>

#include <cmath>

#include "sim/config/loader.h"
#include "sim/engine/simulation.h"
#include "sim/workload/layer_kernels.h"
#include "sim/workload/shape_compute_model.h"
#include "tests/unit/test_fixtures.h"

namespace meshsim {
namespace {

// A GPU of 4 SMs of 1e12 FLOP/s each, square 128 x 128 tiles, no small-k loss, full
// efficiency, and HBM fast enough never to bind.
ShapeModelParams FourSms() {
  ShapeModelParams p;
  p.peak_flops_per_s = 4e12;
  p.hbm_bytes_per_s = 1e18;
  p.matmul_efficiency = 1;
  p.memory_efficiency = 1;
  p.sms = 4;
  p.tile_m = p.tile_n = 128;
  p.k_half = 0;
  return p;
}

TEST(ShapeComputeModel, OneTileMoreThanTheSmsTakesASecondWave) {
  const ShapeComputeModel model(FourSms());
  // A tile: 2 x 128 x 128 x 1024 = 33,554,432 FLOPs on one SM at 1e12/s: 33.554432 us.
  // 4 tiles (512 x 128) fill the 4 SMs once; 5 tiles (640 x 128) need two waves, twice
  // the time for 1.25 times the FLOPs.
  EXPECT_DOUBLE_EQ(model.GemmSeconds({512, 128, 1024}), 33.554432e-6);
  EXPECT_DOUBLE_EQ(model.GemmSeconds({640, 128, 1024}), 2 * 33.554432e-6);
  // A batch of 2 such 4-tile GEMMs: 8 tiles, two full waves.
  EXPECT_DOUBLE_EQ(model.GemmSeconds({512, 128, 1024, 2}), 2 * 33.554432e-6);
}

TEST(ShapeComputeModel, PartialTilesCostWholeTiles) {
  const ShapeComputeModel model(FourSms());
  // 520 x 128: ceil(520 / 128) = 5 tiles, two waves, like 640 x 128.
  EXPECT_DOUBLE_EQ(model.GemmSeconds({520, 128, 1024}), 2 * 33.554432e-6);
}

TEST(ShapeComputeModel, SmallKLowersTheRate) {
  ShapeModelParams p = FourSms();
  p.k_half = 128;
  const ShapeComputeModel model(p);
  // 512 x 128 x 128: 4 tiles, one wave, each 2 x 128^3 = 4,194,304 FLOPs at
  // 1e12 x 128 / (128 + 128) = 5e11 FLOP/s: 8.388608 us.
  EXPECT_DOUBLE_EQ(model.GemmSeconds({512, 128, 128}), 8.388608e-6);
}

TEST(ShapeComputeModel, FewTilesSplitKOverIdleSms) {
  const ShapeComputeModel model(FourSms());
  // 128 x 128 x 4096: one tile; split-k over the 4 SMs (k_half 0 sets no floor): each
  // SM does a 1024-deep slice, 33.554432 us, in one wave.
  EXPECT_DOUBLE_EQ(model.GemmSeconds({128, 128, 4096}), 33.554432e-6);
}

TEST(ShapeComputeModel, GemmsOnSeveralStreamsShareTheirWaves) {
  const ShapeComputeModel model(FourSms());
  // 640 x 128 x 1024: 5 tiles, two waves alone (67.1 us, the fifth tile alone in the
  // second). Three such GEMMs on three streams at once: 15 tiles in 4 waves, a third of
  // it each, 4/3 of a wave.
  GemmShape g{640, 128, 1024};
  EXPECT_DOUBLE_EQ(model.GemmSeconds(g), 2 * 33.554432e-6);
  g.streams = 3;
  EXPECT_DOUBLE_EQ(model.GemmSeconds(g), 4.0 / 3 * 33.554432e-6);
  // Sharing never makes a GEMM slower than alone: one 128 x 128 x 4096 tile splits k
  // over the 4 SMs alone (33.6 us); three at once would leave one SM idle (44.7 us each).
  GemmShape one{128, 128, 4096};
  one.streams = 3;
  EXPECT_DOUBLE_EQ(model.GemmSeconds(one), 33.554432e-6);
}

TEST(ShapeComputeModel, SkinnyGemmIsMemoryBound) {
  const ShapeModelParams a100;  // 108 SMs, 256 x 128 tiles, k_half 128, 312 TFLOP/s
  const ShapeComputeModel model(a100);
  // 8192 x 8 x 8192: A is 8192^2 elements, B and C 8192 x 8 each, 2 bytes apiece:
  // 134,479,872 bytes at 2039e9 x 0.85 B/s = 77.59 us. Compute: tiles cut to 256 x 16,
  // 32 of them, k split 3 ways: 22.4 MFLOPs a tile at 2.21 TFLOP/s per SM, 10.1 us.
  const double memory = 134'479'872.0 / (2039e9 * 0.85);
  EXPECT_DOUBLE_EQ(model.GemmSeconds({8192, 8, 8192}), memory);
  // Ten times what its FLOPs take at the peak.
  EXPECT_GT(model.GemmSeconds({8192, 8, 8192}), 10 * 2.0 * 8192 * 8 * 8192 / 312e12);
}

TEST(ShapeComputeModel, MeasuredTableOverridesTheModel) {
  ShapeModelParams p = FourSms();
  p.gemm_table.Add({640, 128, 1024}, 2.0);  // measured: 2 TFLOP/s
  const ShapeComputeModel model(p);
  // 2 x 640 x 128 x 1024 = 167,772,160 FLOPs at 2e12/s: 83.88608 us (the model: 67.1 us).
  EXPECT_DOUBLE_EQ(model.GemmSeconds({640, 128, 1024}), 83.88608e-6);
  // Only the exact shape: another batch is modelled (10 tiles on 4 SMs: 3 waves).
  EXPECT_DOUBLE_EQ(model.GemmSeconds({640, 128, 1024, 2}), 3 * 33.554432e-6);
  EXPECT_DOUBLE_EQ(model.GemmSeconds({512, 128, 1024}), 33.554432e-6);
}

TEST(AttentionEfficiency, InterpolatesInLog2OfTheSequence) {
  AttentionEfficiency e;
  e.seq_lens = {1024, 4096};
  e.efficiency = {0.5, 0.7};
  EXPECT_DOUBLE_EQ(e.Forward(2048), 0.6);  // halfway in log2: 10, 11, 12
  EXPECT_DOUBLE_EQ(e.Forward(1024 * std::sqrt(2.0)), 0.55);
  EXPECT_DOUBLE_EQ(e.Forward(256), 0.5);  // outside: the nearest point
  EXPECT_DOUBLE_EQ(e.Forward(65536), 0.7);
  EXPECT_DOUBLE_EQ(AttentionEfficiency::HeadDimFactor(128), 1.0);
  // (1 + 20/128) / (1 + 20/64) = 1.15625 / 1.3125
  EXPECT_DOUBLE_EQ(AttentionEfficiency::HeadDimFactor(64), 1.15625 / 1.3125);
}

TEST(ShapeComputeModel, FlashAttentionByTheMeasuredCurve) {
  ShapeModelParams p;  // 312 TFLOP/s
  p.attention.seq_lens = {1024, 4096};
  p.attention.efficiency = {0.5, 0.7};
  p.attention.backward_factor = 0.9;
  p.attention.causal_factor = 0.8;
  const ShapeComputeModel model(p);
  // 16 heads of 2048 x 2048, head dim 128: 4 x 16 x 2048^2 x 128 = 34,359,738,368 FLOPs
  // counted; causal: half of them run, at 0.6 x 0.8 = 0.48 of the peak.
  const double flops = 34'359'738'368.0;
  EXPECT_DOUBLE_EQ(model.AttentionSeconds({16, 2048, 2048, 128, true, false, 1}),
                   0.5 * flops / (312e12 * 0.48));
  // Non-causal: all of them at 0.6.
  EXPECT_DOUBLE_EQ(model.AttentionSeconds({16, 2048, 2048, 128, false, false, 1}),
                   flops / (312e12 * 0.6));
  // A backward op of one pass: 1.25 x the FLOPs (scores recomputed) at 0.6 x 0.9.
  EXPECT_DOUBLE_EQ(model.AttentionSeconds({16, 2048, 2048, 128, false, true, 1}),
                   1.25 * flops / (312e12 * 0.54));
}

// A measured band (FlashAttentionSpec::Window) at 128 keys: its value at and below 128, the
// curve's from its first point (1024) on, linear in log2 between: 362 keys is 1.5 of the 3
// octaves from 128 to 1024 (2^8.5 = 362.04).
TEST(AttentionEfficiency, BandIsMeasuredBelowTheCurve) {
  AttentionEfficiency e;
  e.seq_lens = {1024, 4096};
  e.efficiency = {0.5, 0.7};
  e.backward_factor = 0.8;
  EXPECT_DOUBLE_EQ(e.Band(128, false), 0.5);  // not measured: the curve, clamped
  EXPECT_DOUBLE_EQ(e.Band(128, true), 0.4);
  e.band_keys = 128;
  e.band_forward = 0.1;
  e.band_backward = 0.2;
  EXPECT_DOUBLE_EQ(e.Band(128, false), 0.1);
  EXPECT_DOUBLE_EQ(e.Band(64, true), 0.2);
  EXPECT_DOUBLE_EQ(e.Band(2048, false), 0.6);
  EXPECT_DOUBLE_EQ(e.Band(1024, true), 0.4);
  EXPECT_NEAR(e.Band(std::pow(2.0, 8.5), false), 0.1 + 0.5 * (0.5 - 0.1), 1e-12);
  EXPECT_NEAR(e.Band(std::pow(2.0, 8.5), true), 0.2 + 0.5 * (0.4 - 0.2), 1e-12);
}

// GPT-OSS's windowed layer on a GB200 (2.5 PFLOP/s) with the measurement of
// topologies/gb200-nvl72.yaml: 256 heads (MBS 4 x 64) of 4096 queries against 128 keys at
// head dim 64 take cuDNN's measured 0.210 ms forward and 0.465 ms backward; without the
// measurement the curve's 512 point times them 5.9x and 4.4x faster.
TEST(ShapeComputeModel, BandKernelsAtTheMeasuredEfficiency) {
  ShapeModelParams p;
  p.peak_flops_per_s = 2500e12;
  p.attention.seq_lens = {512, 4096};
  p.attention.efficiency = {0.435, 0.597};
  p.attention.backward_factor = 0.84;
  AttentionShape fwd{256, 4096, 128, 64, false, false, 1};
  fwd.band = true;
  fwd.band_seq = 4096;
  AttentionShape bwd = fwd;
  bwd.backward = true;
  bwd.passes = 2;
  const double head = AttentionEfficiency::HeadDimFactor(64);
  const double flops = 4.0 * 256 * 4096 * 128 * 64;  // 34,359,738,368
  const ShapeComputeModel curve(p);
  EXPECT_DOUBLE_EQ(curve.AttentionSeconds(fwd), flops / (2500e12 * 0.435 * head));
  EXPECT_DOUBLE_EQ(curve.AttentionSeconds(bwd), 2.5 * flops / (2500e12 * 0.435 * 0.84 * head));
  p.attention.band_keys = 128;
  p.attention.band_forward = 0.0743;
  p.attention.band_backward = 0.0839;
  p.attention.fp8_band_backward_causal = 0.300;
  const ShapeComputeModel measured(p);
  EXPECT_NEAR(measured.AttentionSeconds(fwd), 0.210e-3, 0.001e-3);
  EXPECT_NEAR(measured.AttentionSeconds(bwd), 0.465e-3, 0.001e-3);
  // FP8 attention: the backward computes the causal triangle of all 4096 keys (0.5 x 32
  // times the band's FLOPs) at 0.300: cuDNN's measured 2.080 ms MXFP8 backward.
  AttentionShape fp8 = bwd;
  fp8.fp8 = true;
  EXPECT_DOUBLE_EQ(measured.AttentionSeconds(fp8),
                   2.5 * 0.5 * 32 * flops / (2500e12 * 0.300 * head));
  EXPECT_NEAR(measured.AttentionSeconds(fp8), 2.080e-3, 0.001e-3);
  // Its forward is the band's; a full-attention kernel never a band.
  AttentionShape fp8_fwd = fwd;
  fp8_fwd.fp8 = true;
  EXPECT_DOUBLE_EQ(measured.AttentionSeconds(fp8_fwd), measured.AttentionSeconds(fwd));
  const AttentionShape full{256, 4096, 4096, 64, true, false, 1};
  EXPECT_DOUBLE_EQ(measured.AttentionSeconds(full), curve.AttentionSeconds(full));
}

TEST(ShapeComputeModel, AnOpAddsItsKernelsBytesAndLaunches) {
  ShapeModelParams p = FourSms();
  p.hbm_bytes_per_s = 1e12;
  p.kernel_overhead_s = 5e-6;
  const ShapeComputeModel model(p);
  KernelShapes shapes;
  shapes.gemms = {{512, 128, 1024}, {640, 128, 1024}};
  shapes.fraction = 0.5;
  const KernelWork work{shapes.Flops(), 2e6, 3, 0};
  // 0.5 x (33.554432 + 67.108864) us + 2e6 B at 1e12 B/s (2 us) + 3 x 5 us.
  EXPECT_EQ(model.ShapedDuration(work, shapes),
            SimTime::Seconds(0.5 * 3 * 33.554432e-6 + 2e-6 + 15e-6));
  // Without shapes: every FLOP at the peak, as the roofline.
  EXPECT_EQ(model.Duration(work), SimTime::Seconds(work.flops / 4e12 + 2e-6 + 15e-6));
}

// Every compute op with FLOPs carries shapes, and they add up to its FLOPs.
void ExpectShapesCarryTheFlops(const Experiment& e) {
  const auto sim = Simulate(e, {}, testing::FakeModels());
  const Program& p = sim->program;
  int shaped = 0;
  for (const Op& op : p.ops()) {
    if (op.kind != OpKind::kCompute || p.WorkOf(op).flops == 0) continue;
    const KernelShapes* s = p.ShapesOf(p.WorkOf(op));
    ASSERT_NE(s, nullptr) << TagName(op.tag);
    EXPECT_NEAR(s->Flops(), p.WorkOf(op).flops, 1e-9 * p.WorkOf(op).flops) << TagName(op.tag);
    ++shaped;
  }
  EXPECT_GT(shaped, 0);
}

TEST(LayerKernels, ShapesCarryEachOpsFlops) {
  // Dense GeLU, TP 2 with sequence parallelism, selective recompute, 2 stages.
  Experiment dense = testing::SmallPipeline(2, 4, ScheduleKind::kOneFOneB);
  dense.cluster = testing::OneNode(4);
  dense.plan.tp = 2;
  dense.plan.sequence_parallel = true;
  dense.plan.recompute = Recompute::kSelective;
  ExpectShapesCarryTheFlops(dense);
  // SwiGLU with grouped-query attention, FlashAttention, ring attention (cp 2), full
  // recompute.
  Experiment cp = dense;
  cp.model.ffn_kind = FfnKind::kSwiglu;
  cp.model.kv_heads = 4;
  cp.training.flash_attention = true;
  cp.plan.pp = 1;
  cp.plan.cp = 2;
  cp.plan.global_batch = 1;
  cp.plan.recompute = Recompute::kFull;
  ExpectShapesCarryTheFlops(cp);
  // MoE with expert parallelism, skewed routing (two expert loads), shared experts.
  Experiment moe = dense;
  moe.model.experts = 8;
  moe.model.top_k = 2;
  moe.model.moe_ffn_hidden = 2048;
  moe.model.shared_experts = 1;
  moe.plan.pp = 1;
  moe.plan.tp = 1;
  moe.plan.sequence_parallel = false;
  moe.plan.dp = 4;
  moe.plan.ep = 4;
  moe.plan.moe_skew = 2.0;
  moe.plan.global_batch = 4;
  moe.plan.recompute = Recompute::kFull;
  ExpectShapesCarryTheFlops(moe);
}

TEST(LayerKernels, GemmsOfAnAttentionBlock) {
  ModelSpec m = testing::SmallModel();  // h 1024, 16 heads of 64, ffn 4096, seq 1024
  LayerShape shape;
  shape.seq = 1024;
  shape.micro_batch = 2;
  shape.tp = 2;
  const LayerKernels k = TransformerLayerKernels(m, shape);
  // T = 2048 tokens. QKV: 2048 x 1536 (3h / tp) x 1024; scores and context, batched over
  // 2 x 8 heads: 1024 x 1024 x 64 and 1024 x 64 x 1024; projection 2048 x 1024 x 512.
  // The linear layers' GEMMs are FP8 under FP8 training and cast their input first;
  // attention's stay BF16. QKV's input comes out of its LayerNormLinear's norm (amax_fused).
  const GemmShape qkv{2048, 1536, 1024, 1, true, true, 1, /*amax_fused=*/true};
  const std::vector<GemmShape> fwd = {
      qkv, {1024, 1024, 64, 16}, {1024, 64, 1024, 16}, {2048, 1024, 512, 1, true, true}};
  EXPECT_EQ(k.attention.block.fwd.gemms, fwd);
  // Weight gradients: dW = X^T dY, k = T.
  EXPECT_EQ(k.attention.block.wgrad.gemms.front(), (GemmShape{512, 1024, 2048, 1, true}));
  EXPECT_EQ(k.attention.block.wgrad.gemms.back(), (GemmShape{1024, 1536, 2048, 1, true}));
  // GeLU MLP: FC1 2048 x 2048 (ffn / tp) x 1024 (a LayerNormLinear too), FC2 2048 x 1024
  // x 2048.
  const std::vector<GemmShape> mlp = {{2048, 2048, 1024, 1, true, true, 1, true},
                                      {2048, 1024, 2048, 1, true, true}};
  EXPECT_EQ(k.mlp.fwd.gemms, mlp);
  EXPECT_TRUE(k.mlp.recompute.Empty());
}

}  // namespace
}  // namespace meshsim

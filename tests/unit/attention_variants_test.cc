// Attention beyond hidden/heads: sliding-window layers (fewer keys per query), Multi-head
// Latent Attention (low-rank Q and KV projections), head_dim apart from hidden/heads.
// Every expected value is derived by hand in the comment beside it.
#include <gtest/gtest.h>

#include "sim/workload/layer_kernels.h"
#include "sim/workload/model_spec.h"
#include "sim/workload/transformer.h"

namespace meshsim {
namespace {

// hidden 64, 4 heads of 16, MHA, GeLU MLP 256, seq 1024.
ModelSpec Small() {
  ModelSpec m;
  m.name = "small";
  m.layers = 2;
  m.hidden = 64;
  m.heads = 4;
  m.kv_heads = 4;
  m.ffn_hidden = 256;
  m.vocab = 1000;
  m.seq_len = 1024;
  return m;
}

LayerShape Shape(int64_t seq, int64_t window) {
  LayerShape s;
  s.seq = seq;
  s.window = window;
  return s;
}

// Core FLOPs 2*b*s*keys*(heads*qk + heads*v): full 2*1024*1024*(64+64) = 268,435,456;
// window 128: 2*1024*128*128 = 33,554,432. Stored softmax/dropout per score a*s*keys*b*
// (2*2+1) bytes: full 4*1024*1024*5 = 20,971,520, window 4*1024*128*5 = 2,621,440.
TEST(SlidingWindow, CoreFlopsAndActivationsUseTheWindow) {
  const ModelSpec m = Small();
  const LayerCost full = TransformerLayerCost(m, Shape(1024, 0));
  const LayerCost window = TransformerLayerCost(m, Shape(1024, 128));
  EXPECT_DOUBLE_EQ(full.attention.core_flops, 268435456.0);
  EXPECT_DOUBLE_EQ(window.attention.core_flops, 33554432.0);
  EXPECT_DOUBLE_EQ(full.attention.stored_act_bytes - window.attention.stored_act_bytes,
                   20971520.0 - 2621440.0);
  // The projections are the same: 2*1024*(64*192 + 64*64) = 33,554,432 either way.
  EXPECT_DOUBLE_EQ(full.attention.fwd_flops - full.attention.core_flops, 33554432.0);
  EXPECT_DOUBLE_EQ(window.attention.fwd_flops - window.attention.core_flops, 33554432.0);
  // A window longer than the sequence is full attention.
  EXPECT_DOUBLE_EQ(TransformerLayerCost(m, Shape(1024, 4096)).attention.core_flops, 268435456.0);
}

// The fused kernel of a windowed layer is a band (not causal: nothing skipped) of 128 keys.
TEST(SlidingWindow, KernelIsABandOfWindowKeys) {
  ModelSpec m = Small();
  LayerShape s = Shape(1024, 128);
  s.flash_attention = true;
  const LayerKernels k = TransformerLayerKernels(m, s);
  ASSERT_EQ(k.attention.block.fwd.attention.size(), 1u);
  EXPECT_EQ(k.attention.block.fwd.attention[0].seq_kv, 128);
  EXPECT_FALSE(k.attention.block.fwd.attention[0].causal);
  s.window = 0;
  EXPECT_TRUE(TransformerLayerKernels(m, s).attention.block.fwd.attention[0].causal);
}

// The band knows the causal sequence it lies in (an FP8 backward may compute all of it)
// and whether it runs in FP8; full attention is no band, nor are ring attention's blocks.
TEST(SlidingWindow, BandKernelKnowsItsSequenceAndPrecision) {
  ModelSpec m = Small();
  LayerShape s = Shape(1024, 128);
  s.flash_attention = true;
  s.fp8_attention = true;
  const LayerKernels k = TransformerLayerKernels(m, s);
  for (const KernelShapes* ks :
       {&k.attention.block.fwd, &k.attention.block.dgrad, &k.attention.block.wgrad}) {
    ASSERT_EQ(ks->attention.size(), 1u);
    EXPECT_TRUE(ks->attention[0].band);
    EXPECT_EQ(ks->attention[0].band_seq, 1024);
    EXPECT_TRUE(ks->attention[0].fp8);
  }
  EXPECT_FALSE(k.attention.ring_fwd.attention[0].band);
  s.window = 0;
  EXPECT_FALSE(TransformerLayerKernels(m, s).attention.block.fwd.attention[0].band);
}

// Two layers, pattern 2: layer 0 windowed, layer 1 full. The step's model FLOPs drop by 3 x
// (268,435,456 - 33,554,432) = 704,643,072 per sequence.
TEST(SlidingWindow, ModelFlopsCountWindowedLayers) {
  ModelSpec m = Small();
  const double full = ModelFlopsPerStep(m, 1);
  m.sliding_window = 128;
  m.sliding_window_pattern = 2;
  EXPECT_TRUE(m.IsWindowedLayer(0));
  EXPECT_FALSE(m.IsWindowedLayer(1));
  EXPECT_DOUBLE_EQ(full - ModelFlopsPerStep(m, 1), 704643072.0);
}

// hidden 64, 2 heads; MLA with q_lora 32, kv_lora 16, head_dim (nope) 16, rope 8, v 16.
ModelSpec Mla() {
  ModelSpec m = Small();
  m.heads = 2;
  m.kv_heads = 2;
  m.head_dim = 16;
  m.q_lora_rank = 32;
  m.kv_lora_rank = 16;
  m.qk_rope_head_dim = 8;
  return m;
}

// q_down 64*32 = 2048 (+ norm 32), q_up 32*2*24 = 1536, kv_down 64*(16+8) = 1536 (+ norm
// 16), kv_up 16*2*(16+16) = 1024, output 2*16*64 = 2048, two layer norms 128: 8368. On a
// TP rank of 2: down-projections and latent norms whole (3632), the rest halved (2368).
TEST(Mla, Parameters) {
  const ModelSpec m = Mla();
  EXPECT_EQ(m.QkHeadDim(), 24);
  EXPECT_EQ(m.VHeadDim(), 16);
  EXPECT_DOUBLE_EQ(AttentionParams(m), 8368.0);
  EXPECT_DOUBLE_EQ(AttentionParamsPerRank(m, 2), 6000.0);
}

// seq 10: projections 2*10*(2048+1536+1536+1024+2048) = 163,840; core
// 2*10*10*(2*24 + 2*16) = 16,000. The kernels hold the same FLOPs (fused head_dim
// (24+16)/2 = 20: 4*2*10*10*20 = 16,000). K and V of 10 tokens: 10*2*(24+16)*2 bytes = 1600.
TEST(Mla, FlopsKernelsAndKvBytes) {
  const ModelSpec m = Mla();
  LayerShape s = Shape(10, 0);
  s.flash_attention = true;
  const LayerCost c = TransformerLayerCost(m, s);
  EXPECT_DOUBLE_EQ(c.attention.core_flops, 16000.0);
  EXPECT_DOUBLE_EQ(c.attention.fwd_flops, 179840.0);
  EXPECT_EQ(c.attention.weight_kernels, 5);
  const LayerKernels k = TransformerLayerKernels(m, s);
  EXPECT_DOUBLE_EQ(k.attention.block.fwd.Flops(), 179840.0);
  EXPECT_EQ(k.attention.block.fwd.gemms.size(), 5u);
  EXPECT_DOUBLE_EQ(k.attention.block.dgrad.Flops() + k.attention.block.wgrad.Flops(), 2 * 179840.0);
  EXPECT_DOUBLE_EQ(KvBlockBytes(m, s), 1600.0);
}

// Ring attention's merges per block of 10 tokens: forward the output, 2 heads x v 16 = 32
// elements a token, read twice and written once at 2 bytes: 3*10*32*2 = 1920; backward dQ
// (2 x qk 24 = 48) and dK/dV (2 x (24 + 16) = 80): 3*10*128*2 = 7680; TP 2 halves both.
TEST(Mla, RingMergeBytesUseTheHeadDims) {
  const ModelSpec m = Mla();
  LayerShape s = Shape(10, 0);
  EXPECT_DOUBLE_EQ(RingMergeBytes(m, s, false), 1920.0);
  EXPECT_DOUBLE_EQ(RingMergeBytes(m, s, true), 7680.0);
  s.tp = 2;
  EXPECT_DOUBLE_EQ(RingMergeBytes(m, s, true), 3840.0);
}

// With TP 2 the down-projections run whole on each rank: 2*10*(2048+1536) = 71,680, the
// rest halved: 2*10*(1536+1024+2048)/2 + 16,000/2 = 46,080 + 8,000.
TEST(Mla, TensorParallelKeepsDownProjectionsWhole) {
  const ModelSpec m = Mla();
  LayerShape s = Shape(10, 0);
  s.tp = 2;
  EXPECT_DOUBLE_EQ(TransformerLayerCost(m, s).attention.fwd_flops, 71680.0 + 46080.0 + 8000.0);
}

// GPT-OSS-like head_dim: 64 heads of 64 on hidden 2880 (not a multiple): Q 2880*4096,
// K and V 2880*512 each, output 4096*2880, norms 2*2880: 26,547,840.
TEST(HeadDim, ParametersUseHeadDim) {
  ModelSpec m = Small();
  m.hidden = 2880;
  m.heads = 64;
  m.kv_heads = 8;
  m.head_dim = 64;
  EXPECT_DOUBLE_EQ(AttentionParams(m), 2880.0 * 4096 + 2 * 2880.0 * 512 + 4096.0 * 2880 + 5760);
  EXPECT_DOUBLE_EQ(AttentionParams(m), 26547840.0);
}

}  // namespace
}  // namespace meshsim

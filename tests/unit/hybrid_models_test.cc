// Hybrid Mamba-2 / attention / MoE models (model.layer_pattern) and multi-token
// prediction (model.mtp_layers): parameters, FLOPs, activations and kernel shapes of the
// Mamba-2 layer, the pattern's decoding and its errors, the per-stage costs that follow
// the pattern, and MTP on the last pipeline stage. Every expected value is derived by hand
// in the comment beside it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "sim/config/loader.h"
#include "sim/engine/simulation.h"
#include "sim/plan/mesh.h"
#include "sim/plan/validate.h"
#include "sim/schedule/memory_bound.h"
#include "sim/schedule/stage_costs.h"
#include "sim/schedule/step_builder.h"
#include "sim/workload/layer_kernels.h"
#include "sim/workload/mamba.h"
#include "sim/workload/param_count.h"
#include "sim/workload/transformer.h"
#include "tests/unit/test_fixtures.h"

namespace meshsim {
namespace {

namespace fs = std::filesystem;

// A tiny hybrid model: hidden 16; attention 2 heads of 8 (MHA); GeLU MLP 32; MoE 4
// experts of 8, top 2, one shared; Mamba-2 4 heads of 8 (d_inner 32), state 4, 2 groups,
// conv 4, chunk 8; vocab 100; layers M, *, -, E.
ModelSpec Tiny() {
  ModelSpec m;
  m.name = "tiny-hybrid";
  m.layers = 4;
  m.layer_pattern = "M*-E";
  m.hidden = 16;
  m.heads = 2;
  m.kv_heads = 2;
  m.ffn_hidden = 32;
  m.vocab = 100;
  m.seq_len = 64;
  m.experts = 4;
  m.top_k = 2;
  m.moe_ffn_hidden = 8;
  m.shared_experts = 1;
  m.mamba_heads = 4;
  m.mamba_head_dim = 8;
  m.mamba_state = 4;
  m.mamba_groups = 2;
  m.mamba_conv_kernel = 4;
  m.mamba_chunk = 8;
  return m;
}

LayerShape Shape(int64_t seq, int tp = 1) {
  LayerShape s;
  s.seq = seq;
  s.tp = tp;
  return s;
}

// in_proj: 16 x (2*32 + 2*2*4 + 4 = 84) = 1344; conv1d over 32 + 16 = 48 channels,
// 4 taps + bias: 240; A_log, D, dt_bias: 3 x 4 = 12; gated norm 32; out_proj 32 x 16 =
// 512; pre-norm 16. Total 2156; per TP rank of 2: (2156 - 16) / 2 + 16 = 1086.
TEST(Mamba, LayerParametersByHand) {
  const ModelSpec m = Tiny();
  EXPECT_EQ(m.MambaInProjDim(), 84);
  EXPECT_EQ(m.MambaConvDim(), 48);
  EXPECT_DOUBLE_EQ(MambaLayerParams(m), 2156.0);
  EXPECT_DOUBLE_EQ(MambaLayerParamsPerRank(m, 2), 1086.0);
}

// Chunk Q = 8, N = 4, P = 8, 4 heads, 2 groups: 2*8*(2*4 + 4*8) + 4*4*4*8 = 640 + 512 =
// 1152 per token; a 4-token sequence is one chunk of 4: 2*4*40 + 512 = 832.
TEST(Mamba, ScanFlopsFollowTheChunk) {
  const ModelSpec m = Tiny();
  EXPECT_DOUBLE_EQ(MambaScanFlopsPerToken(m, 64), 1152.0);
  EXPECT_DOUBLE_EQ(MambaScanFlopsPerToken(m, 4), 832.0);
}

// 64 tokens x (in_proj 2*16*84 = 2688 + scan 1152 + out_proj 2*32*16 = 1024) = 311,296;
// TP 2 halves it. Stored (BF16, no recomputation): norm and in_proj inputs 64*16*2*2 =
// 4096; in_proj output 84, conv output 48, scan output and out_proj input 2*32 elements of
// 2 bytes + 4 bytes of decay per head: 64 * (2*196 + 16) = 26,112. Total 30,208.
TEST(Mamba, BlockFlopsAndActivationsByHand) {
  const ModelSpec m = Tiny();
  const BlockCost b = MambaBlockCost(m, Shape(64));
  EXPECT_DOUBLE_EQ(b.fwd_flops, 311296.0);
  EXPECT_DOUBLE_EQ(MambaBlockCost(m, Shape(64, 2)).fwd_flops, 311296.0 / 2);
  EXPECT_DOUBLE_EQ(b.stored_act_bytes, 30208.0);
  EXPECT_DOUBLE_EQ(b.tp_comm_bytes, 64.0 * 16 * 2);
  EXPECT_EQ(b.weight_kernels, 2);
  // Full recomputation keeps the layer input only (64*16*2 bytes) and re-runs the forward.
  LayerShape full = Shape(64);
  full.recompute = Recompute::kFull;
  const BlockCost f = MambaBlockCost(m, full);
  EXPECT_DOUBLE_EQ(f.stored_act_bytes, 2048.0);
  EXPECT_DOUBLE_EQ(f.transient_act_bytes, 30208.0);
  EXPECT_DOUBLE_EQ(f.recompute_flops, 311296.0);
}

// The kernels hold the block's FLOPs: forward = fwd_flops, dgrad and wgrad one each (the
// backward is twice the forward). The scan's GEMMs: C B^T [8 x 8 x 4] per group and chunk
// (8 chunks x 2 groups = 16), then three [8|4 x 8 x ...] per head and chunk (32).
TEST(Mamba, KernelsCarryTheBlockFlops) {
  const ModelSpec m = Tiny();
  for (int tp : {1, 2}) {
    const PassKernels k = MambaLayerKernels(m, Shape(64, tp));
    const double flops = MambaBlockCost(m, Shape(64, tp)).fwd_flops;
    EXPECT_DOUBLE_EQ(k.fwd.Flops(), flops) << tp;
    EXPECT_DOUBLE_EQ(k.dgrad.Flops(), flops) << tp;
    EXPECT_DOUBLE_EQ(k.wgrad.Flops(), flops) << tp;
    EXPECT_TRUE(k.recompute.Empty());
  }
  const PassKernels k = MambaLayerKernels(m, Shape(64));
  ASSERT_EQ(k.fwd.gemms.size(), 6u);  // in_proj, 4 scan GEMMs, out_proj
  EXPECT_EQ(k.fwd.gemms[1], (GemmShape{8, 8, 4, 16}));
  EXPECT_EQ(k.fwd.gemms[2].batch, 32);
}

// M 2156; * attention 16 x (16 + 16 + 16) + 16 x 16 = 1024 + one norm 16 = 1040; - 16 +
// 2 x 16 x 32 = 1040; E 16 + router 64 + 4 experts x 256 + shared 256 = 1360 (active: 2
// experts, 848); embedding and output 2 x 100 x 16 = 3200; final norm 16.
// Total 2156 + 1040 + 1040 + 1360 + 3200 + 16 = 8812; active 8812 - 1360 + 848 = 8300.
TEST(HybridModel, ParametersByKind) {
  const ModelSpec m = Tiny();
  EXPECT_EQ(m.KindOf(0), LayerKind::kMamba);
  EXPECT_EQ(m.KindOf(1), LayerKind::kAttention);
  EXPECT_EQ(m.KindOf(2), LayerKind::kMlp);
  EXPECT_EQ(m.KindOf(3), LayerKind::kMoe);
  EXPECT_FALSE(m.IsMoeLayer(0) || m.IsMoeLayer(1) || m.IsMoeLayer(2));
  EXPECT_TRUE(m.IsMoeLayer(3));
  EXPECT_EQ(MoeLayerCount(m), 1);
  EXPECT_DOUBLE_EQ(LayerParamsOf(m, 1, false), 1040.0);
  EXPECT_DOUBLE_EQ(LayerParamsOf(m, 2, false), 1040.0);
  EXPECT_DOUBLE_EQ(LayerParamsOf(m, 3, false), 1360.0);
  EXPECT_DOUBLE_EQ(LayerParamsOf(m, 3, true), 848.0);
  const ParamCount c = CountParams(m);
  EXPECT_DOUBLE_EQ(c.total, 8812.0);
  EXPECT_DOUBLE_EQ(c.active, 8300.0);
}

// Model FLOPs per sequence of 64: 3 x forward. Forward: logits 2*64*16*100 = 204,800;
// M 311,296; * projections 2*64*(16*48 + 16*16) = 131,072 + core 2*64*64*(16 + 16) =
// 262,144; - 2*64*16*32*2 = 131,072; E router 2*64*16*4 = 8,192 + 2 experts 2*64*2*16*8*2
// = 65,536 + shared 2*64*16*8*2 = 32,768. Sum 1,146,880; x 3 = 3,440,640.
TEST(HybridModel, ModelFlopsByKind) { EXPECT_DOUBLE_EQ(ModelFlopsPerStep(Tiny(), 1), 3440640.0); }

// DeepSeek-V3's MTP module adds exactly one MoE layer (attention with MLA 187,121,664
// incl. its two norms, router 7168 x 256 = 1,835,008, 256 experts x 3 x 7168 x 2048 =
// 11,274,289,152, one shared expert 44,040,192: 11,507,286,016), three norms 3 x 7168 =
// 21,504 and the projection 2 x 7168 x 7168 = 102,760,448: 11,610,067,968. DeepSeek's
// README_WEIGHTS.md: "11.5B unique parameters (excluding the shared 0.9B Embedding and
// 0.9B Output Head)": 1.0 % below meshsim's count, whose layer alone is 11.507B.
TEST(Mtp, AddsOneLayerAndItsProjection) {
  Result<ModelSpec> loaded =
      LoadModelFile(std::string(MESHSIM_SOURCE_DIR) + "/workloads/models/deepseek-v3.yaml");
  ASSERT_TRUE(loaded.ok()) << loaded.error().ToString();
  ModelSpec m = loaded.value();
  const ParamCount without = CountParams(m);
  m.mtp_layers = 1;
  EXPECT_TRUE(m.IsMoeLayer(61));
  const ParamCount with = CountParams(m);
  EXPECT_DOUBLE_EQ(with.total - without.total, 11610067968.0);
  EXPECT_NEAR((with.total - without.total) / 11.5e9, 1.0, 0.01);
  // FLOPs: one more MoE layer, one more output layer and the projection per token.
  LayerShape one;
  one.seq = m.seq_len;
  ModelSpec plain = m;
  plain.mtp_layers = 0;
  const MoeCost moe = MoeLayerCost(m, one, 1);
  const double layer = TransformerLayerCost(m, one).attention.fwd_flops + moe.router.fwd_flops +
                       moe.experts.fwd_flops + moe.shared.fwd_flops;
  const double extra = 3 * (layer + LogitFlops(m, one) + 2.0 * 4096 * 2 * 7168 * 7168);
  EXPECT_NEAR(ModelFlopsPerStep(m, 1) - ModelFlopsPerStep(plain, 1), extra, 1e-6 * extra);
}

// LatentMoE, latent 8 on the tiny model: the E layer is norm 16 + router 64 + projections
// 2 x 16 x 8 = 256 + 4 experts x 2 x 8 x 8 = 512 + shared (on hidden) 2 x 16 x 8 = 256:
// 1104 (active: 2 experts, 848). Per 64 tokens: router 2*64*16*4 = 8,192 + projections
// 4*64*16*8 = 32,768; experts 2*128*8*8*2 = 32,768 (half of hidden-wide experts); the
// dispatch sends 128 copies of 8 elements of 2 bytes = 2,048 bytes.
TEST(LatentMoe, ParametersFlopsAndDispatchByHand) {
  ModelSpec m = Tiny();
  m.moe_latent_size = 8;
  EXPECT_DOUBLE_EQ(LayerParamsOf(m, 3, false), 1104.0);
  EXPECT_DOUBLE_EQ(LayerParamsOf(m, 3, true), 848.0);
  const MoeCost c = MoeLayerCost(m, Shape(64), 1);
  EXPECT_DOUBLE_EQ(c.router.fwd_flops, 8192.0 + 32768.0);
  EXPECT_DOUBLE_EQ(c.experts.fwd_flops, 32768.0);
  EXPECT_DOUBLE_EQ(c.dispatch_bytes, 2048.0);
  EXPECT_DOUBLE_EQ(c.expert_params, 512.0);
  EXPECT_DOUBLE_EQ(c.dense_params, 64.0 + 256.0 + 256.0 + 16.0);
  const MoeKernels k = MoeLayerKernels(m, Shape(64), 1);
  EXPECT_DOUBLE_EQ(k.router.fwd.Flops(), c.router.fwd_flops);
  EXPECT_DOUBLE_EQ(k.experts.fwd.Flops(), c.experts.fwd_flops);
}

// ---- YAML: the pattern and its errors ----

class HybridYaml : public ::testing::Test {
 protected:
  Result<ModelSpec> Load(const std::string& text) {
    const fs::path path =
        fs::temp_directory_path() / ("meshsim-hybrid-test-" + std::to_string(::getpid()) + ".yaml");
    {
      std::ofstream out(path, std::ios::binary);
      out << text;
    }
    Result<ModelSpec> m = LoadModelFile(path.string());
    fs::remove(path);
    return m;
  }
  // The tiny model's keys, Mamba-2 sizes `state` and `groups`, and `extra`.
  static std::string Base(const std::string& extra, int state = 4, int groups = 2) {
    return "name: h\nlayers: 4\nhidden: 16\nheads: 2\nffn_hidden: 32\nvocab: 100\nseq_len: 64\n"
           "mamba_heads: 4\nmamba_head_dim: 8\nmamba_state: " +
           std::to_string(state) + "\nmamba_groups: " + std::to_string(groups) + "\n" + extra;
  }
  // The load fails naming `key` (model keys have no prefix in a model file).
  void ExpectError(const std::string& text, const std::string& key, const std::string& says) {
    const Result<ModelSpec> m = Load(text);
    ASSERT_FALSE(m.ok()) << text;
    EXPECT_EQ(m.error().kind, ErrorKind::kBadInput);
    EXPECT_EQ(m.error().key, key) << m.error().ToString();
    EXPECT_NE(m.error().message.find(says), std::string::npos) << m.error().ToString();
    EXPECT_GT(m.error().line, 0) << m.error().ToString();
  }
};

TEST_F(HybridYaml, PatternLoads) {
  const Result<ModelSpec> m = Load(Base("layer_pattern: \"M*-M\"\n"));
  ASSERT_TRUE(m.ok()) << m.error().ToString();
  EXPECT_EQ(m.value().layer_pattern, "M*-M");
  EXPECT_EQ(m.value().mamba_chunk, 128);  // default
  EXPECT_EQ(m.value().mamba_conv_kernel, 4);
}

TEST_F(HybridYaml, PatternErrorsNameTheKey) {
  ExpectError(Base("layer_pattern: \"M*-X\"\n"), "layer_pattern", "found 'X' at position 3");
  ExpectError(Base("layer_pattern: \"M*-\"\n"), "layer_pattern",
              "expected layers = 4 characters, found 3");
  ExpectError(Base("layer_pattern: \"M*-E\"\n"), "layer_pattern", "experts >= 1");
  ExpectError(Base("layer_pattern: \"M*-M\"\nexperts: 4\ntop_k: 2\n"), "experts",
              "expected E (MoE) layers");
  ExpectError(Base("layer_pattern: \"M*EE\"\nexperts: 4\ntop_k: 2\ndense_layers: 1\n"),
              "dense_layers", "with layer_pattern");
  ExpectError(Base("layer_pattern: \"M*-M\"\n", 4, 3), "mamba_groups",
              "does not divide mamba_heads = 4");
  ExpectError(Base("layer_pattern: \"M*-M\"\n", 0), "mamba_state", "mamba_state >= 1");
  ExpectError(Base("mtp_layers: -1\n"), "mtp_layers", "");
}

// A model without M layers needs no Mamba keys.
TEST_F(HybridYaml, NoMambaKeysWithoutMambaLayers) {
  const Result<ModelSpec> m = Load(
      "name: h\nlayers: 2\nhidden: 16\nheads: 2\nffn_hidden: 32\nvocab: 100\nseq_len: 64\n"
      "layer_pattern: \"*-\"\n");
  ASSERT_TRUE(m.ok()) << m.error().ToString();
  EXPECT_DOUBLE_EQ(CountParams(m.value()).total, 1040.0 + 1040.0 + 3200.0 + 16.0);
}

// ---- Plans: TP over Mamba heads and groups, stage costs by kind, MTP on the last stage ----

Status Validate(const Experiment& e) {
  return ValidatePlan(e.plan, e.training, e.model, e.cluster);
}

Experiment HybridExperiment(const std::string& pattern, int pp, int tp = 1) {
  Experiment e;
  e.name = "hybrid";
  e.model = Tiny();
  e.model.experts = 0;
  e.model.top_k = 0;
  e.model.layer_pattern = pattern;
  e.model.layers = static_cast<int>(pattern.size());
  e.cluster = testing::OneNode(pp * tp);
  e.plan.tp = tp;
  e.plan.pp = pp;
  e.plan.micro_batch = 1;
  e.plan.global_batch = 4;
  return e;
}

TEST(HybridPlan, TensorParallelMustDivideMambaHeadsAndGroups) {
  Experiment e = HybridExperiment("M*M*", 1, 2);
  EXPECT_TRUE(Validate(e).ok());
  e.model.mamba_groups = 1;  // 2 does not divide 1 group
  e.cluster = testing::OneNode(2);
  const Status s = Validate(e);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().key, "plan.tp");
  EXPECT_NE(s.error().message.find("mamba_groups = 1"), std::string::npos) << s.error().message;
}

// "MMMM****" on pp 2: stage 0 holds the four Mamba layers (4 x 2156 + embedding 1600),
// stage 1 the four attention layers (4 x 1040 + output layer 1600); their forward FLOPs
// per micro-batch are 4 x 311,296 and 4 x 393,216 (+ logits 204,800) as the ops carry them.
TEST(HybridPlan, StageCostsFollowThePattern) {
  const Experiment e = HybridExperiment("MMMM****", 2);
  ASSERT_TRUE(Validate(e).ok());
  const StageCosts costs(e.model, e.plan, e.training);
  EXPECT_DOUBLE_EQ(costs.StageParams(0).dense, 4 * 2156.0 + 1600.0);
  EXPECT_DOUBLE_EQ(costs.StageParams(1).dense, 4 * 1040.0 + 1600.0);
  const Program p = BuildStepProgram(e.model, e.plan, e.training, Mesh(e.plan));
  double fwd[2] = {0, 0};
  for (const Op& op : p.ops()) {
    if (op.kind != OpKind::kCompute || op.micro_batch != 0) continue;
    if (op.tag == Tag::kAttentionFwd || op.tag == Tag::kLogitsFwd)
      fwd[op.rank] += p.WorkOf(op).flops;
  }
  EXPECT_DOUBLE_EQ(fwd[0], 4 * 311296.0);
  EXPECT_DOUBLE_EQ(fwd[1], 4 * 393216.0 + 204800.0);
}

// MTP on the last stage: its parameters (a transformer layer: attention 1024 + two norms
// 32 + MLP 1024 = 2080; three norms 48; the projection 2 x 16 x 16 = 512) are stage 1's,
// and its ops (projection, layer, logits: layer index 8) run there only.
TEST(HybridPlan, MtpLivesOnTheLastStage) {
  Experiment e = HybridExperiment("MMMM****", 2);
  e.model.mtp_layers = 1;
  ASSERT_TRUE(Validate(e).ok());
  const StageCosts costs(e.model, e.plan, e.training);
  EXPECT_DOUBLE_EQ(costs.StageParams(0).dense, 4 * 2156.0 + 1600.0);
  EXPECT_DOUBLE_EQ(costs.StageParams(1).dense, 4 * 1040.0 + 1600.0 + 2080.0 + 48.0 + 512.0);
  const Program p = BuildStepProgram(e.model, e.plan, e.training, Mesh(e.plan));
  int mtp_ops[2] = {0, 0};
  for (const Op& op : p.ops()) {
    if (op.kind == OpKind::kCompute && op.layer == 8) ++mtp_ops[op.rank];
  }
  EXPECT_EQ(mtp_ops[0], 0);
  EXPECT_GT(mtp_ops[1], 0);
  // The simulated step runs, and takes longer than without MTP (FLOPs-only compute).
  Experiment plain = e;
  plain.model.mtp_layers = 0;
  const auto with = Simulate(e, {}, testing::FakeModels());
  const auto without = Simulate(plain, {}, testing::FakeModels());
  EXPECT_GT(with->replay.step_time, without->replay.step_time);
}

// The sweep's memory bound (memory_bound.h) stays a lower bound of the replay's peak, and
// close to it, for hybrid stages and with the MTP modules on the last stage.
TEST(HybridPlan, MemoryBoundHoldsForHybridAndMtp) {
  for (const char* pattern : {"MMMM****", "M*M*-E-E"}) {
    for (int mtp : {0, 1}) {
      for (Recompute r : {Recompute::kNone, Recompute::kFull}) {
        Experiment e = HybridExperiment(pattern, 2);
        if (std::string(pattern).find('E') != std::string::npos) {
          e.model.experts = 4;
          e.model.top_k = 2;
        }
        e.model.mtp_layers = mtp;
        e.plan.recompute = r;
        ASSERT_TRUE(Validate(e).ok()) << pattern;
        const auto sim = Simulate(e, {}, testing::FakeModels());
        double peak = 0;
        for (const DeviceMemory& m : sim->replay.memory) peak = std::max(peak, m.peak_bytes);
        const double bound = EstimatePeakMemory(e).Total();
        EXPECT_LE(bound, peak * (1 + 1e-12)) << pattern << " mtp " << mtp;
        EXPECT_GT(bound, 0.75 * peak) << pattern << " mtp " << mtp;
      }
    }
  }
}

// The replay keeps an op's layer index in 16 bits: a model deeper than kMaxModelLayers
// (MTP layers count) is bad input, not an assert.
TEST_F(HybridYaml, LayersBeyondTheReplaysLimitNameTheKey) {
  std::string text = Base("mtp_layers: 2\n");
  text.replace(text.find("layers: 4"), 9, "layers: 31999");
  ExpectError(text, "layers", "expected layers + mtp_layers <= 32000, found 31999 + 2");
  text.replace(text.find("mtp_layers: 2"), 13, "mtp_layers: 1");
  const Result<ModelSpec> m = Load(text);
  ASSERT_TRUE(m.ok()) << m.error().ToString();
  EXPECT_EQ(m.value().layers + m.value().mtp_layers, kMaxModelLayers);
}

}  // namespace
}  // namespace meshsim

// Megatron-Core's per-module selective recomputation (plan.recompute_modules,
// transformer.h RecomputeModules): what each module drops and re-runs, against closed
// forms, in the layer costs, the replayed step (time, recomputed FLOPs, peak memory) and
// the config and import paths.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/config/import_megatron.h"
#include "sim/config/loader.h"
#include "sim/engine/simulation.h"
#include "sim/schedule/memory_bound.h"
#include "sim/workload/layer_kernels.h"
#include "sim/workload/transformer.h"
#include "tests/unit/test_fixtures.h"

namespace meshsim {
namespace {

RecomputeModules Only(bool RecomputeModules::*flag) {
  RecomputeModules m;
  m.core_attn = false;
  m.*flag = true;
  return m;
}

LayerShape Selective(const RecomputeModules& modules) {
  LayerShape s;
  s.seq = 1024;
  s.micro_batch = 2;
  s.flash_attention = true;
  s.recompute = Recompute::kSelective;
  s.recompute_modules = modules;
  return s;
}

LayerShape NoRecompute() {
  LayerShape s = Selective({});
  s.recompute = Recompute::kNone;
  return s;
}

// A small MoE model: 8 experts of 2048, top-2, SwiGLU.
ModelSpec SmallMoe() {
  ModelSpec m = testing::SmallModel();
  m.ffn_kind = FfnKind::kSwiglu;
  m.experts = 8;
  m.top_k = 2;
  m.moe_ffn_hidden = 2048;
  return m;
}

// Without core_attn selective recomputation keeps the attention core: the costs of no
// recomputation; the default list is today's selective.
TEST(RecomputeModules, CoreAttnIsTheDefaultAndCanBeLeftOut) {
  const ModelSpec m = testing::SmallModel();
  const LayerCost none = TransformerLayerCost(m, NoRecompute());
  const LayerCost off = TransformerLayerCost(m, Selective(Only(&RecomputeModules::layernorm)));
  EXPECT_DOUBLE_EQ(off.attention.stored_act_bytes, none.attention.stored_act_bytes);
  EXPECT_EQ(off.attention.recompute_flops, 0);
  EXPECT_TRUE(TransformerLayerKernels(m, Selective(Only(&RecomputeModules::layernorm)))
                  .attention.block.recompute.Empty());
  const LayerCost core = TransformerLayerCost(m, Selective({}));
  EXPECT_GT(core.attention.recompute_flops, 0);
  // Flash attention: the core's stored part is the fp32 softmax statistics, a*s*b*4.
  EXPECT_DOUBLE_EQ(none.attention.stored_act_bytes - core.attention.stored_act_bytes,
                   16.0 * 1024 * 2 * 4);
  // The fused norms of a dense layer (TE's LayerNormLinear) are not recomputed.
  EXPECT_DOUBLE_EQ(off.mlp.stored_act_bytes, none.mlp.stored_act_bytes);
  EXPECT_EQ(off.mlp.recompute_kernels, 0);
}

// mlp: the dense MLP keeps its input (s*b*h in bf16) and the residual add's dropout mask
// (s*b*h bytes), re-runs its forward (FLOPs, element-wise bytes, kernels and GEMMs) and
// re-materialises the rest during its backward.
TEST(RecomputeModules, MlpKeepsItsInputAndRerunsItsForward) {
  const ModelSpec m = testing::SmallModel();
  const LayerShape s = Selective(Only(&RecomputeModules::mlp));
  const LayerCost none = TransformerLayerCost(m, NoRecompute());
  const LayerCost c = TransformerLayerCost(m, s);
  const double sbh = 1024.0 * 2 * 1024;
  EXPECT_DOUBLE_EQ(c.mlp.stored_act_bytes, 3 * sbh);
  EXPECT_DOUBLE_EQ(c.mlp.transient_act_bytes, none.mlp.stored_act_bytes - 3 * sbh);
  EXPECT_DOUBLE_EQ(c.mlp.recompute_flops, c.mlp.fwd_flops);
  EXPECT_DOUBLE_EQ(c.mlp.recompute_bytes, c.mlp.fwd_bytes);
  EXPECT_EQ(c.mlp.recompute_kernels, c.mlp.fwd_kernels);
  EXPECT_EQ(TransformerLayerKernels(m, s).mlp.recompute, TransformerLayerKernels(m, s).mlp.fwd);
  // With sequence parallelism over tp 2 the kept input is split too.
  LayerShape sp = s;
  sp.tp = 2;
  sp.sequence_parallel = true;
  EXPECT_DOUBLE_EQ(TransformerLayerCost(m, sp).mlp.stored_act_bytes, 3 * sbh / 2);
  // Megatron's mlp is not a MoE layer's (nor its shared experts', Megatron's
  // shared_experts).
  ModelSpec moe = SmallMoe();
  moe.shared_experts = 1;
  const MoeCost mc = MoeLayerCost(moe, s, 1);
  EXPECT_DOUBLE_EQ(mc.shared.stored_act_bytes,
                   MoeLayerCost(moe, NoRecompute(), 1).shared.stored_act_bytes);
  EXPECT_EQ(mc.shared.recompute_kernels, 0);
  EXPECT_TRUE(MoeLayerKernels(moe, s, 1).shared.recompute.Empty());
}

// layernorm: a MoE layer's pre-MLP norm drops its output (s*b*h in bf16) and re-runs one
// norm kernel that reads its input and writes its output (2 x s*b*h x 2 bytes).
TEST(RecomputeModules, LayernormDropsTheMoeNormOutput) {
  const ModelSpec m = SmallMoe();
  const MoeCost none = MoeLayerCost(m, NoRecompute(), 1);
  const MoeCost c = MoeLayerCost(m, Selective(Only(&RecomputeModules::layernorm)), 1);
  const double sbh = 1024.0 * 2 * 1024;
  EXPECT_DOUBLE_EQ(none.router.stored_act_bytes - c.router.stored_act_bytes, 2 * sbh);
  EXPECT_DOUBLE_EQ(c.router.transient_act_bytes, 2 * sbh);
  EXPECT_DOUBLE_EQ(c.router.recompute_bytes, 4 * sbh);
  EXPECT_EQ(c.router.recompute_kernels, 1);
  EXPECT_EQ(c.router.recompute_flops, 0);
  EXPECT_DOUBLE_EQ(c.experts.stored_act_bytes, none.experts.stored_act_bytes);
}

// moe_act: the experts' activation output (FC2's input: received x moe_ffn, 2 bytes;
// FP8: Megatron makes FC2 save it instead of its FP8 copy, 1 byte as meshsim counts it)
// is dropped; SwiGLU is re-run reading 2f and writing f elements per token copy.
TEST(RecomputeModules, MoeActDropsTheActivationOutput) {
  const ModelSpec m = SmallMoe();
  const LayerShape s = Selective(Only(&RecomputeModules::moe_act));
  const MoeCost none = MoeLayerCost(m, NoRecompute(), 1);
  const MoeCost c = MoeLayerCost(m, s, 1);
  const double received = 1024.0 * 2 * 2, f = 2048;
  EXPECT_DOUBLE_EQ(none.experts.stored_act_bytes - c.experts.stored_act_bytes, received * f * 2);
  EXPECT_DOUBLE_EQ(c.experts.transient_act_bytes, received * f * 2);
  EXPECT_DOUBLE_EQ(c.experts.recompute_bytes, received * 3 * f * 2);
  EXPECT_EQ(c.experts.recompute_kernels, 1);
  EXPECT_DOUBLE_EQ(c.router.stored_act_bytes, none.router.stored_act_bytes);
  LayerShape fp8 = s;
  fp8.dtype = Dtype::kFp8;
  LayerShape fp8_none = NoRecompute();
  fp8_none.dtype = Dtype::kFp8;
  EXPECT_DOUBLE_EQ(MoeLayerCost(m, fp8_none, 1).experts.stored_act_bytes -
                       MoeLayerCost(m, fp8, 1).experts.stored_act_bytes,
                   received * f * 1);
}

// Each op's time: FLOPs and HBM bytes, a picosecond per thousand of either.
class FlopsAndBytesComputeModel final : public ComputeModel {
 public:
  SimTime Duration(const KernelWork& w) const override {
    return SimTime::Picoseconds(static_cast<int64_t>(w.flops / 1e3) +
                                static_cast<int64_t>(w.bytes / 1e3));
  }
};

struct Run {
  double step_ps, peak, bound, recompute_flops;
};

Run Replay(const Experiment& e) {
  const auto sim = Simulate(e, SimulationOptions{},
                            Models{std::make_unique<FlopsAndBytesComputeModel>(),
                                   std::make_unique<testing::FreeNetwork>()});
  EXPECT_TRUE(sim->replay.completed) << sim->replay.stall;
  return {static_cast<double>(sim->replay.step_time.picoseconds()),
          sim->replay.memory[0].peak_bytes, EstimatePeakMemory(e).Total(),
          sim->stats.ranks[0].recompute_flops};
}

// One GPU, two micro-batches of one sequence, flash attention, selective with `modules`.
Experiment OneGpu(const ModelSpec& m, const RecomputeModules& modules) {
  Experiment e;
  e.name = "recompute";
  e.model = m;
  e.cluster = testing::OneNode(1);
  e.plan.global_batch = 2;
  e.plan.recompute = Recompute::kSelective;
  e.plan.recompute_modules = modules;
  e.training.flash_attention = true;
  return e;
}

// In the replayed step, against the run without the module (core_attn only in both):
// every layer of every micro-batch re-runs the module once, serially on the one GPU
// (step time: its op's time, to the picosecond); the peak falls by what the layers in
// flight keep, less the one layer whose backward holds it again as working memory (the
// peak is in the first backward: L - 1 layers' worth); the memory bound agrees.
void ExpectModuleCosts(const ModelSpec& m, bool RecomputeModules::*flag, double op_ps,
                       double op_flops, double saved) {
  RecomputeModules with;
  with.*flag = true;
  const Run base = Replay(OneGpu(m, RecomputeModules{}));
  const Run run = Replay(OneGpu(m, with));
  const double ops = 2.0 * m.layers;
  EXPECT_NEAR(run.step_ps - base.step_ps, ops * op_ps, 2 * ops);  // whole ps per op
  EXPECT_DOUBLE_EQ(run.recompute_flops - base.recompute_flops, ops * op_flops);
  EXPECT_NEAR(base.peak - run.peak, (m.layers - 1) * saved, 1e-9 * base.peak);
  EXPECT_NEAR(base.bound - run.bound, (m.layers - 1) * saved, 1e-9 * base.bound);
}

TEST(RecomputeModules, ReplayedMlp) {
  const ModelSpec m = testing::SmallModel();
  LayerShape s = Selective(Only(&RecomputeModules::mlp));
  s.micro_batch = 1;
  const BlockCost mlp = TransformerLayerCost(m, s).mlp;
  ExpectModuleCosts(m, &RecomputeModules::mlp, mlp.fwd_flops / 1e3 + mlp.fwd_bytes / 1e3,
                    mlp.fwd_flops, mlp.transient_act_bytes);
}

TEST(RecomputeModules, ReplayedLayernorm) {
  const ModelSpec m = SmallMoe();
  LayerShape s = Selective(Only(&RecomputeModules::layernorm));
  s.micro_batch = 1;
  const BlockCost router = MoeLayerCost(m, s, 1).router;
  ExpectModuleCosts(m, &RecomputeModules::layernorm, router.recompute_bytes / 1e3, 0,
                    router.transient_act_bytes);
}

TEST(RecomputeModules, ReplayedMoeAct) {
  const ModelSpec m = SmallMoe();
  LayerShape s = Selective(Only(&RecomputeModules::moe_act));
  s.micro_batch = 1;
  const BlockCost experts = MoeLayerCost(m, s, 1).experts;
  ExpectModuleCosts(m, &RecomputeModules::moe_act, experts.recompute_bytes / 1e3, 0,
                    experts.transient_act_bytes);
}

// A small MLA model: hidden 1024, 16 heads, Q latent 256, KV latent 128, head dim (nope)
// 64, RoPE 32, v 64 (Q and K heads of 96).
ModelSpec SmallMla() {
  ModelSpec m = testing::SmallModel();
  m.head_dim = 64;
  m.q_lora_rank = 256;
  m.kv_lora_rank = 128;
  m.qk_rope_head_dim = 32;
  return m;
}

// mla_up_proj drops Q, K and V (s b x 16 heads x (96 + 96 + 64) x 2 bytes, split by TP)
// into working memory and re-runs the Q up-projection (256 -> 16 x 96) and the KV
// up-projection (128 -> 16 x (64 + 64)) with two RoPE-and-concatenate kernels that read
// their outputs and write Q, K and V; the latents stay. The kernels hold the same FLOPs.
TEST(RecomputeModules, MlaUpProjDropsQkvAndRerunsTheUpProjections) {
  const ModelSpec m = SmallMla();
  for (int tp : {1, 2}) {
    LayerShape none = NoRecompute();
    none.tp = tp;
    LayerShape up = Selective(Only(&RecomputeModules::mla_up_proj));
    up.tp = tp;
    const BlockCost a0 = TransformerLayerCost(m, none).attention;
    const BlockCost a = TransformerLayerCost(m, up).attention;
    const double tokens = 1024.0 * 2;
    const double qkv = tokens * 16 * (96 + 96 + 64) * 2.0 / tp;
    EXPECT_DOUBLE_EQ(a0.stored_act_bytes - a.stored_act_bytes, qkv) << tp;
    EXPECT_DOUBLE_EQ(a.transient_act_bytes, qkv) << tp;
    const double flops = 2 * tokens * (256.0 * 16 * 96 + 128.0 * 16 * 128) / tp;
    EXPECT_DOUBLE_EQ(a.recompute_flops, flops) << tp;
    EXPECT_DOUBLE_EQ(a.recompute_bytes, 2 * qkv) << tp;
    EXPECT_EQ(a.recompute_kernels, 4);
    const PassKernels k = TransformerLayerKernels(m, up).attention.block;
    EXPECT_EQ(k.recompute.gemms.size(), 2u);
    EXPECT_DOUBLE_EQ(k.recompute.Flops(), flops) << tp;
    // With the attention core as well: one op re-runs both.
    RecomputeModules both;
    both.mla_up_proj = true;
    LayerShape with_core = Selective(both);
    with_core.tp = tp;
    const BlockCost c = TransformerLayerCost(m, with_core).attention;
    const BlockCost core = TransformerLayerCost(m,
                                                [&] {
                                                  LayerShape s = Selective(RecomputeModules{});
                                                  s.tp = tp;
                                                  return s;
                                                }())
                               .attention;
    EXPECT_DOUBLE_EQ(c.recompute_flops, core.recompute_flops + flops) << tp;
    EXPECT_EQ(c.recompute_kernels, core.recompute_kernels + 4);
    EXPECT_DOUBLE_EQ(c.transient_act_bytes, core.transient_act_bytes + qkv) << tp;
  }
  // Without MLA nothing changes (the config refuses the module there; ValidatePlan).
  const ModelSpec plain = testing::SmallModel();
  EXPECT_DOUBLE_EQ(TransformerLayerCost(plain, Selective(Only(&RecomputeModules::mla_up_proj)))
                       .attention.stored_act_bytes,
                   TransformerLayerCost(plain, NoRecompute()).attention.stored_act_bytes);
}

TEST(RecomputeModules, ReplayedMlaUpProj) {
  const ModelSpec m = SmallMla();
  LayerShape s = Selective(Only(&RecomputeModules::mla_up_proj));
  s.micro_batch = 1;
  const BlockCost at = TransformerLayerCost(m, s).attention;
  ExpectModuleCosts(m, &RecomputeModules::mla_up_proj,
                    at.recompute_flops / 1e3 + at.recompute_bytes / 1e3, at.recompute_flops,
                    at.transient_act_bytes);
}

Result<Experiment> LoadPlan(const std::string& plan) {
  const std::string text =
      "name: x\nmodel: ../models/llama3-8b.yaml\ncluster: ../../topologies/dgx-h100.yaml\n"
      "cluster_overrides: {nodes: 1}\nplan: {tp: 8, global_batch: 8, " +
      plan + "}\n";
  return LoadExperimentText(text, std::string(MESHSIM_SOURCE_DIR) + "/workloads/experiments/x.yaml",
                            {});
}

TEST(RecomputeModules, ConfigReadsTheListAndRejectsBadOnes) {
  Result<Experiment> e = LoadPlan("recompute: selective, recompute_modules: [layernorm, moe_act]");
  ASSERT_TRUE(e.ok()) << e.error().ToString();
  RecomputeModules want;
  want.core_attn = false;
  want.layernorm = want.moe_act = true;
  EXPECT_EQ(e.value().plan.recompute_modules, want);
  Result<Experiment> empty = LoadPlan("recompute: selective, recompute_modules: []");
  ASSERT_TRUE(empty.ok()) << empty.error().ToString();
  EXPECT_EQ(empty.value().plan.recompute_modules, (RecomputeModules{false, false, false, false}));
  Result<Experiment> plain = LoadPlan("recompute: selective");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain.value().plan.recompute_modules, RecomputeModules{});
  // Under another granularity the list is read (and checked) but not used: a --set of
  // plan.recompute, or a sweep over it, runs on an experiment that names modules.
  Result<Experiment> full = LoadPlan("recompute: full, recompute_modules: [mlp]");
  ASSERT_TRUE(full.ok()) << full.error().ToString();
  EXPECT_EQ(full.value().plan.recompute, Recompute::kFull);
  // Megatron-Core refuses mla_up_proj without Multi-head Latent Attention; so does meshsim.
  Result<Experiment> no_mla = LoadPlan("recompute: selective, recompute_modules: [mla_up_proj]");
  ASSERT_FALSE(no_mla.ok());
  EXPECT_NE(no_mla.error().ToString().find("plan.recompute_modules"), std::string::npos);
  EXPECT_NE(no_mla.error().ToString().find("Multi-head Latent Attention"), std::string::npos)
      << no_mla.error().ToString();
  struct Bad {
    std::string plan, key, says;
  };
  for (const Bad& b : std::vector<Bad>{
           {"recompute: selective, recompute_modules: [mlp, attn]", "plan.recompute_modules[1]",
            "expected one of core_attn | layernorm | moe_act | mlp | mla_up_proj, found"},
           {"recompute: selective, recompute_modules: [moe]", "plan.recompute_modules[0]",
            "not modelled"},
           {"recompute: selective, recompute_modules: mlp", "plan.recompute_modules",
            "expected a list"},
           {"recompute: full, recompute_modules: [mlp, moe]", "plan.recompute_modules[1]",
            "not modelled"}}) {
    Result<Experiment> bad = LoadPlan(b.plan);
    ASSERT_FALSE(bad.ok()) << b.plan;
    const std::string msg = bad.error().ToString();
    EXPECT_NE(msg.find(b.key), std::string::npos) << msg;
    EXPECT_NE(msg.find(b.says), std::string::npos) << msg;
  }
}

// `import megatron`: --recompute-modules maps to plan.recompute_modules (the modules
// meshsim models; the others reported as not modelled) and into the emitted YAML.
TEST(RecomputeModules, ImportMegatronMapsTheList) {
  const std::string base =
      "--num-layers 8 --hidden-size 1024 --num-attention-heads 16 --seq-length 1024 "
      "--tensor-model-parallel-size 2 --bf16 --world-size 8 --recompute-granularity selective ";
  Result<MegatronImport> r = ParseMegatronArgs(base + "--recompute-modules layernorm moe_act");
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  RecomputeModules want{false, true, true, false};
  EXPECT_EQ(r.value().plan.recompute_modules, want);
  EXPECT_TRUE(r.value().not_modelled.empty());
  const std::string yaml = MegatronExperimentYaml(r.value(), "x", "c.yaml", 1, 0);
  EXPECT_NE(yaml.find("\n  recompute_modules: [layernorm, moe_act]\n"), std::string::npos) << yaml;
  Result<MegatronImport> moe = ParseMegatronArgs(base + "--recompute-modules moe mlp");
  ASSERT_TRUE(moe.ok());
  EXPECT_EQ(moe.value().plan.recompute_modules, (RecomputeModules{false, false, false, true}));
  ASSERT_EQ(moe.value().not_modelled.size(), 1u);
  EXPECT_NE(moe.value().not_modelled[0].find("--recompute-modules moe"), std::string::npos);
  Result<MegatronImport> mla = ParseMegatronArgs(base + "--recompute-modules mla_up_proj mlp");
  ASSERT_TRUE(mla.ok());
  EXPECT_EQ(mla.value().plan.recompute_modules,
            (RecomputeModules{false, false, false, true, true}));
  EXPECT_TRUE(mla.value().not_modelled.empty());
  // Without the flag: Megatron's default, core_attn; no key emitted.
  Result<MegatronImport> plain = ParseMegatronArgs(base);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain.value().plan.recompute_modules, RecomputeModules{});
  // Under another granularity the list is read (and checked) but not used: a --set of
  // plan.recompute, or a sweep over it, runs on an experiment that names modules.
  Result<Experiment> full = LoadPlan("recompute: full, recompute_modules: [mlp]");
  ASSERT_TRUE(full.ok()) << full.error().ToString();
  EXPECT_EQ(full.value().plan.recompute, Recompute::kFull);
  EXPECT_EQ(MegatronExperimentYaml(plain.value(), "x", "c.yaml", 1, 0).find("recompute_modules"),
            std::string::npos);
}

}  // namespace
}  // namespace meshsim

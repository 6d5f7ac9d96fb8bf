// Uneven pipeline stages (plan.stage_layers): the default split, the checks, the layer
// ranges, and the replay of uneven pipelines against hand-traced timelines.
#include "sim/plan/stages.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "sim/config/import_megatron.h"
#include "sim/config/loader.h"
#include "sim/engine/simulation.h"
#include "sim/plan/mesh.h"
#include "sim/plan/validate.h"
#include "sim/schedule/memory_bound.h"
#include "sim/schedule/stage_costs.h"
#include "sim/sweep/enumerate.h"
#include "sim/sweep/evaluate.h"
#include "sim/sweep/planner.h"
#include "sim/sweep/result_row.h"
#include "tests/unit/test_fixtures.h"

namespace meshsim {
namespace {

// `n` copies of `x` followed by `rest`.
std::vector<int> Repeat(int x, int n, std::vector<int> rest = {}) {
  std::vector<int> v(n, x);
  v.insert(v.end(), rest.begin(), rest.end());
  return v;
}

std::vector<int> Cat(std::vector<int> a, const std::vector<int>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(StageLayers, DefaultIsEvenWhenTheVirtualStagesDivideTheLayers) {
  EXPECT_EQ(DefaultStageLayers(96, 8, 1), Repeat(12, 8));
  EXPECT_EQ(DefaultStageLayers(96, 8, 3), Repeat(4, 24));
  EXPECT_EQ(DefaultStageLayers(8, 1, 1), Repeat(8, 1));
}

// Megatron-LM's split with both account-for flags: (layers + 2) / n units each, one layer
// fewer on the first and on the last virtual stage.
TEST(StageLayers, DefaultCountsTheEmbeddingAndTheLossAsALayerEach) {
  // Llama 3.1 405B: (126 + 2) / 16 = 8 units a stage: 7, 8 x 14, 7 (the Llama 3 paper's
  // "one Transformer layer fewer on the first and the last stage").
  EXPECT_EQ(DefaultStageLayers(126, 16, 1), Cat(Cat({7}, Repeat(8, 14)), {7}));
  // pp 16 x v 2: 128 / 32 = 4 units a virtual stage: 3, 4 x 30, 3.
  EXPECT_EQ(DefaultStageLayers(126, 16, 2), Cat(Cat({3}, Repeat(4, 30)), {3}));
  // pp 16 x v 8: one unit a virtual stage, the first holding only the embedding and the last
  // only the output layer and loss, as the Llama 3 paper describes its layout.
  EXPECT_EQ(DefaultStageLayers(126, 16, 8), Cat(Cat({0}, Repeat(1, 126)), {0}));
  // 70 layers on pp 12: 72 / 12 = 6: 5, 6 x 10, 5.
  EXPECT_EQ(DefaultStageLayers(70, 12, 1), Cat(Cat({5}, Repeat(6, 10)), {5}));
}

// Where Megatron would refuse (n does not divide layers + 2), the leftover units go one
// each to the first virtual stages (torchtitan's rule).
TEST(StageLayers, LeftoverUnitsGoToTheFirstVirtualStages) {
  // 7 layers, pp 4: 9 units = 2 each + 1 left: units 3, 2, 2, 2 -> layers 2, 2, 2, 1.
  EXPECT_EQ(DefaultStageLayers(7, 4, 1), (std::vector<int>{2, 2, 2, 1}));
  // 9 layers, pp 4: 11 units = 2 each + 3 left: units 3, 3, 3, 2 -> layers 2, 3, 3, 1.
  EXPECT_EQ(DefaultStageLayers(9, 4, 1), (std::vector<int>{2, 3, 3, 1}));
  // 105 layers (Turing 530B), pp 56: 107 units = 1 each + 51 left: units 2 x 51, 1 x 5
  // -> layers 1, 2 x 50, 1 x 4, 0 (the last stage holds only the output layer and loss).
  EXPECT_EQ(DefaultStageLayers(105, 56, 1), Cat(Cat({1}, Repeat(2, 50)), Repeat(1, 4, {0})));
}

TEST(StageLayers, DefaultNeedsAUnitForEveryVirtualStage) {
  // 4 layers + 2 = 6 units: pp 6 gives 0, 1, 1, 1, 1, 0; pp 7 has none.
  EXPECT_EQ(DefaultStageLayers(4, 6, 1), (std::vector<int>{0, 1, 1, 1, 1, 0}));
  EXPECT_EQ(DefaultStageLayers(4, 7, 1), std::nullopt);
  EXPECT_EQ(DefaultStageLayers(4, 2, 4), std::nullopt);  // 8 virtual stages
}

TEST(StageLayers, AccountedSplitCountsOnlyTheAccountedParts) {
  // Embedding only: 15 + 1 = 16 units over 4: 3, 4, 4, 4. Loss only: 4, 4, 4, 3.
  EXPECT_EQ(AccountedStageLayers(15, 4, 1, 0), (std::vector<int>{3, 4, 4, 4}));
  EXPECT_EQ(AccountedStageLayers(15, 4, 0, 1), (std::vector<int>{4, 4, 4, 3}));
  // One virtual stage holds everything; 0 layers over 2 stages with both accounted: -1.
  EXPECT_EQ(AccountedStageLayers(6, 1, 1, 1), (std::vector<int>{6}));
  EXPECT_EQ(AccountedStageLayers(0, 3, 1, 1), std::nullopt);
}

TEST(StageLayers, TextRoundTrips) {
  EXPECT_EQ(StageLayersText({7, 8, 0, 7}), "7/8/0/7");
  EXPECT_EQ(StageLayersText({}), "");
  std::vector<int> back;
  ASSERT_TRUE(ParseStageLayersText("7/8/0/7", &back));
  EXPECT_EQ(back, (std::vector<int>{7, 8, 0, 7}));
  ASSERT_TRUE(ParseStageLayersText("", &back));
  EXPECT_TRUE(back.empty());
  for (const char* bad : {"7//8", "7/", "-1/3", "a", "7 8", "1234567890"}) {
    EXPECT_FALSE(ParseStageLayersText(bad, &back)) << bad;
  }
}

// Chunk c of stage s is virtual stage c*pp + s; each holds a contiguous run of layers.
TEST(StageSplit, LayerRangesFollowTheVirtualStageOrder) {
  PlanSpec p;
  p.pp = 2;
  p.virtual_stages = 2;
  p.schedule = ScheduleKind::kInterleaved;
  p.stage_layers = {1, 2, 3, 2};
  ModelSpec m = testing::SmallModel();  // 8 layers
  const StageSplit split(p, m);
  EXPECT_EQ(split.VirtualStages(), 4);
  EXPECT_FALSE(split.Even());
  // Stage 0 holds virtual stages 0 (layer 0) and 2 (layers 3..5); stage 1 holds 1 (layers
  // 1..2) and 3 (layers 6..7).
  EXPECT_EQ(split.VirtualStage(1, 0), 2);
  EXPECT_EQ(split.FirstLayer(0), 0);
  EXPECT_EQ(split.EndLayer(0), 1);
  EXPECT_EQ(split.FirstLayer(1), 1);
  EXPECT_EQ(split.EndLayer(1), 3);
  EXPECT_EQ(split.FirstLayer(2), 3);
  EXPECT_EQ(split.EndLayer(2), 6);
  EXPECT_EQ(split.Layers(3), 2);
  EXPECT_EQ(split.EndLayer(3), 8);
  EXPECT_TRUE(split.IsFirst(0));
  EXPECT_TRUE(split.IsLast(3));
  // Without a list: the default, here even.
  p.stage_layers.clear();
  EXPECT_TRUE(StageSplit(p, m).Even());
  EXPECT_EQ(StageSplit(p, m).FirstLayer(3), 6);
}

// Parameters per stage follow the split: a stage's layers, plus the embedding on the first
// and the output layer on the last.
TEST(StageCosts, StageParametersFollowTheSplit) {
  ModelSpec m = testing::SmallModel();
  m.layers = 6;
  PlanSpec p;
  p.pp = 4;
  p.stage_layers = {1, 2, 2, 1};
  const StageCosts costs(m, p, TrainingSpec{});
  const double layer = costs.LayerParams(0).dense;
  // 4h^2 + 2 h * ffn + 2h (h 1024, ffn 4096): 12,584,960.
  EXPECT_DOUBLE_EQ(layer, 12584960.0);
  const double embedding = costs.EmbeddingParams();  // vocab 8 x h 1024 = 8192
  EXPECT_DOUBLE_EQ(embedding, 8192.0);
  EXPECT_DOUBLE_EQ(costs.StageParams(0).dense, layer + embedding);
  EXPECT_DOUBLE_EQ(costs.StageParams(1).dense, 2 * layer);
  EXPECT_DOUBLE_EQ(costs.StageParams(2).dense, 2 * layer);
  EXPECT_DOUBLE_EQ(costs.StageParams(3).dense, layer + embedding);  // untied output layer
}

Status Check(int layers, int pp, int v, std::vector<int> list) {
  PlanSpec p;
  p.pp = pp;
  p.virtual_stages = v;
  p.stage_layers = std::move(list);
  ModelSpec m = testing::SmallModel();
  m.layers = layers;
  return CheckStageLayers(p, m);
}

TEST(CheckStageLayers, BadListsNameTheEntryAtFault) {
  EXPECT_TRUE(Check(6, 4, 1, {1, 2, 2, 1}).ok());
  EXPECT_TRUE(Check(6, 4, 1, {0, 3, 3, 0}).ok());  // empty stages are allowed
  EXPECT_TRUE(Check(6, 4, 1, {}).ok());            // the default split
  Status s = Check(6, 4, 1, {1, 2, 2, 1, 0});      // one too many
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().key, "plan.stage_layers[4]");
  EXPECT_EQ(s.error().message, "expected pp = 4 entries, found 5");
  s = Check(6, 2, 2, {3, 3});  // too few
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().key, "plan.stage_layers[1]");
  EXPECT_EQ(s.error().message,
            "expected pp*virtual_stages = 2*2 = 4 entries (virtual-stage order: chunk c of "
            "stage s at c*pp + s), found 2");
  s = Check(6, 4, 1, {1, -1, 4, 2});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().key, "plan.stage_layers[1]");
  EXPECT_EQ(s.error().message, "expected a number of layers >= 0, found -1");
  s = Check(6, 4, 1, {1, 2, 4, 1});  // 1 + 2 + 4 = 7 > 6 at entry 2
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().key, "plan.stage_layers[2]");
  EXPECT_EQ(s.error().message, "the entries up to here sum to 7, more than the model's layers = 6");
  s = Check(6, 4, 1, {1, 2, 1, 1});  // 5 < 6
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().key, "plan.stage_layers[3]");
  EXPECT_EQ(s.error().message, "the entries sum to 5, fewer than the model's layers = 6");
  s = Check(4, 7, 1, {});  // no default split: 7 > 4 + 2
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().key, "plan.pp");
}

// A bad entry is exit 2 with the file, line and column of that entry.
TEST(CheckStageLayers, LoadingPointsAtTheEntryInTheFile) {
  const std::string path = std::string(MESHSIM_SOURCE_DIR) + "/workloads/experiments/x.yaml";
  const std::string text =
      "name: x\n"
      "model: ../models/llama3-405b.yaml\n"
      "cluster: ../../topologies/dgx-h100.yaml\n"
      "cluster_overrides: {nodes: 2, network_model: alpha_beta}\n"
      "plan:\n"
      "  tp: 1\n"
      "  pp: 16\n"
      "  global_batch: 16\n"
      "  stage_layers: [7, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, -8, 8, 8, 8, 7]\n";
  Result<Experiment> e = LoadExperimentText(text, path);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().key, "plan.stage_layers[11]");
  EXPECT_EQ(e.error().file, path);
  EXPECT_EQ(e.error().line, 9);
  EXPECT_EQ(e.error().column, 51);  // the '-8': '[' at column 17, entries 3 apart
  // Not a list, and an entry that is not an integer: the decoder.
  e = LoadExperimentText(text.substr(0, text.find("  stage_layers")) + "  stage_layers: 7\n", path);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().key, "plan.stage_layers");
  e = LoadExperimentText(text.substr(0, text.find("  stage_layers")) + "  stage_layers: [7, x]\n",
                         path);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().key, "plan.stage_layers[1]");
  EXPECT_EQ(e.error().message, "expected an integer, found 'x'");
}

// ---- Replays of uneven pipelines ----

// Compute time of one layer's forward (attention and MLP) on FLOPs-only compute: stage 0's
// forward kernels of micro-batch 0 on its first layer.
double LayerForward(const Simulation& sim, int rank, int layer) {
  double t = 0;
  for (OpId id : sim.program.StreamOps(rank, Stream::kCompute)) {
    const Op& op = sim.program.op(id);
    if (op.kind != OpKind::kCompute || op.micro_batch != 0 || op.layer != layer) continue;
    if (op.tag == Tag::kAttentionFwd || op.tag == Tag::kMlpFwd)
      t += (sim.replay.end[id] - sim.replay.start[id]).seconds();
  }
  return t;
}

// The layers whose kernels rank `rank` runs.
std::set<int> LayersOn(const Simulation& sim, int rank) {
  std::set<int> layers;
  for (OpId id : sim.program.StreamOps(rank, Stream::kCompute)) {
    const Op& op = sim.program.op(id);
    if (op.kind == OpKind::kCompute && op.layer >= 0) layers.insert(op.layer);
  }
  return layers;
}

std::set<int> Range(int first, int end) {
  std::set<int> s;
  for (int l = first; l < end; ++l) s.insert(l);
  return s;
}

Experiment UnevenPipeline(ScheduleKind schedule, std::vector<int> stage_layers, int m) {
  Experiment e = testing::SmallPipeline(4, m, schedule);
  e.model.layers = 6;
  e.plan.stage_layers = std::move(stage_layers);
  return e;
}

// 1F1B over stages of 1, 2, 2, 1 layers, 4 micro-batches, FLOPs-only compute (a layer's
// forward takes f, its backward 2f: dgrad and wgrad each redo the forward's FLOPs) and a
// free network. Stage forward times F = 1, 2, 2, 1 f, backward B = 2, 4, 4, 2 f. Traced by
// hand: each pass starts when its stage is free and its input has arrived (forward from
// the stage before, backward from the stage after), in 1F1B order (stage s: 3-s
// warm-up forwards, then forward/backward pairs, then the remaining backwards); times in f:
//   stage 0: F0 0-1  F1 1-2  F2 2-3  F3 3-4  B0 16-18 B1 22-24 B2 28-30 B3 32-34
//   stage 1: F0 1-3  F1 3-5  F2 5-7  B0 12-16 F3 16-18 B1 18-22 B2 24-28 B3 28-32
//   stage 2: F0 3-5  F1 5-7  B0 8-12  F2 12-14 B1 14-18 F3 18-20 B2 20-24 B3 24-28
//   stage 3: F0 5-6  B0 6-8  F1 8-9   B1 9-11  F2 14-15 B2 15-17 F3 20-21 B3 21-23
// The pipeline ends at 34 f. Busy: 4 * 3 * layers = 12, 24, 24, 12 f; idle 22, 10, 10, 22
// f; the bubble is their mean over the end, 16 / 34 = 8/17. (Even stages of 1.5 layers
// would end at (m + p - 1) * 4.5 f = 31.5 f.)
TEST(UnevenPipeline, OneFOneBMatchesAHandTrace) {
  const auto sim =
      Simulate(UnevenPipeline(ScheduleKind::kOneFOneB, {1, 2, 2, 1}, 4), {}, testing::FakeModels());
  ASSERT_TRUE(sim->replay.completed) << sim->replay.stall;
  EXPECT_EQ(LayersOn(*sim, 0), Range(0, 1));
  EXPECT_EQ(LayersOn(*sim, 1), Range(1, 3));
  EXPECT_EQ(LayersOn(*sim, 2), Range(3, 5));
  EXPECT_EQ(LayersOn(*sim, 3), Range(5, 6));
  const double f = LayerForward(*sim, 0, 0);
  ASSERT_GT(f, 0);
  // The output layer's kernels (vocabulary 8) add a few parts in 10^4 on the last stage.
  EXPECT_NEAR(sim->stats.pipeline_end_s / f, 34.0, 0.01);
  EXPECT_NEAR(sim->stats.bubble_fraction, 8.0 / 17.0, 1e-3);
  const double idle[] = {22, 10, 10, 22};
  for (int s = 0; s < 4; ++s) {
    EXPECT_NEAR(sim->stats.ranks[s].pipeline_idle_s / f, idle[s], 0.02) << "stage " << s;
  }
}

// GPipe over the same stages: all forwards flow through like a flow shop of identical jobs,
// ending on the last stage after sum(F) + (m-1) max(F) = 6 + 3*2 = 12 f; the backwards
// then flow back in sum(B) + (m-1) max(B) = 12 + 3*4 = 24 f: 36 f in all. Idle 24, 12, 12,
// 24 f: the bubble is 18 / 36 = 1/2.
TEST(UnevenPipeline, GpipeMatchesTheFlowShopBound) {
  const auto sim =
      Simulate(UnevenPipeline(ScheduleKind::kGpipe, {1, 2, 2, 1}, 4), {}, testing::FakeModels());
  ASSERT_TRUE(sim->replay.completed) << sim->replay.stall;
  const double f = LayerForward(*sim, 0, 0);
  EXPECT_NEAR(sim->stats.pipeline_end_s / f, 36.0, 0.01);
  EXPECT_NEAR(sim->stats.bubble_fraction, 0.5, 1e-3);
}

// The explicit default split builds the same program as no list at all.
TEST(UnevenPipeline, SeventyLayersOnTwelveStagesSplitFiveSixFive) {
  Experiment e = testing::SmallPipeline(12, 12, ScheduleKind::kOneFOneB);
  e.model.layers = 70;
  ASSERT_TRUE(ValidatePlan(e.plan, e.training, e.model, e.cluster).ok());
  const auto sim = Simulate(e, {}, testing::FakeModels());
  ASSERT_TRUE(sim->replay.completed) << sim->replay.stall;
  // 5, 6 x 10, 5: stage 0 layers 0..4, stage s in 1..10 layers 5 + 6(s-1) .. 10 + 6(s-1),
  // stage 11 layers 65..69.
  EXPECT_EQ(LayersOn(*sim, 0), Range(0, 5));
  for (int s = 1; s <= 10; ++s)
    EXPECT_EQ(LayersOn(*sim, s), Range(5 + 6 * (s - 1), 11 + 6 * (s - 1)));
  EXPECT_EQ(LayersOn(*sim, 11), Range(65, 70));
  e.plan.stage_layers = Cat(Cat({5}, Repeat(6, 10)), {5});
  const auto listed = Simulate(e, {}, testing::FakeModels());
  EXPECT_EQ(listed->replay.step_time, sim->replay.step_time);
  EXPECT_EQ(listed->program.OpCount(), sim->program.OpCount());
}

// Llama 3.1 405B (126 layers) on pp 16, and pp 16 x v 2 interleaved, at 8192 tokens: tp 8,
// 128 H100s, alpha-beta network.
Result<Experiment> Llama405B(const std::vector<std::string>& sets) {
  const std::string path = std::string(MESHSIM_SOURCE_DIR) + "/workloads/experiments/x.yaml";
  const std::string text =
      "name: llama405b-pp16\n"
      "model: ../models/llama3-405b.yaml\n"
      "cluster: ../../topologies/dgx-h100.yaml\n"
      "cluster_overrides: {nodes: 16, network_model: alpha_beta}\n"
      "plan: {tp: 8, pp: 16, dp: 1, sequence_parallel: true, recompute: full, global_batch: 16}\n"
      "training: {flash_attention: true}\n";
  std::vector<std::string> all = {"model.seq_len=8192"};
  all.insert(all.end(), sets.begin(), sets.end());
  return LoadExperimentText(text, path, all);
}

TEST(UnevenPipeline, Llama405BRunsOnSixteenStages) {
  const Result<Experiment> e = Llama405B({});
  ASSERT_TRUE(e.ok()) << e.error().ToString();
  const auto sim = Simulate(e.value());
  ASSERT_TRUE(sim->replay.completed) << sim->replay.stall;
  const Mesh mesh(e.value().plan);
  // 7, 8 x 14, 7: stage s in 1..14 holds layers 7 + 8(s-1) .. 14 + 8(s-1).
  EXPECT_EQ(LayersOn(*sim, mesh.RankOf(0, 0, 0, 0)), Range(0, 7));
  EXPECT_EQ(LayersOn(*sim, mesh.RankOf(0, 0, 0, 1)), Range(7, 15));
  EXPECT_EQ(LayersOn(*sim, mesh.RankOf(0, 0, 0, 14)), Range(111, 119));
  EXPECT_EQ(LayersOn(*sim, mesh.RankOf(0, 0, 0, 15)), Range(119, 126));
  EXPECT_GT(sim->stats.bubble_fraction, 0);
}

TEST(UnevenPipeline, Llama405BRunsOnSixteenStagesTimesTwoChunks) {
  const Result<Experiment> e = Llama405B({"plan.schedule=interleaved", "plan.virtual_stages=2"});
  ASSERT_TRUE(e.ok()) << e.error().ToString();
  const auto sim = Simulate(e.value());
  ASSERT_TRUE(sim->replay.completed) << sim->replay.stall;
  const Mesh mesh(e.value().plan);
  // 3, 4 x 30, 3 in virtual-stage order: virtual stage i >= 1 starts at layer 3 + 4(i-1).
  // Stage 0: virtual stages 0 (layers 0..2) and 16 (63..66); stage 15: 15 (59..62) and 31
  // (123..125).
  std::set<int> first = Range(0, 3), last = Range(59, 63);
  for (int l : Range(63, 67)) first.insert(l);
  for (int l : Range(123, 126)) last.insert(l);
  EXPECT_EQ(LayersOn(*sim, mesh.RankOf(0, 0, 0, 0)), first);
  EXPECT_EQ(LayersOn(*sim, mesh.RankOf(0, 0, 0, 15)), last);
}

// ---- The memory bound on uneven stages ----

Experiment MemoryExperiment() {
  Experiment e = testing::SmallPipeline(4, 8, ScheduleKind::kOneFOneB);
  e.model.vocab = 32000;  // embedding, output layer and logits count
  e.cluster = testing::OneNode(8);
  e.cluster.network_model = NetworkModelKind::kAlphaBeta;
  e.plan.dp = 2;
  e.plan.global_batch = 16;  // 8 micro-batches per pipeline
  return e;
}

double ReplayPeak(const Experiment& e) {
  const auto sim = Simulate(e);
  double peak = 0;
  for (const DeviceMemory& m : sim->replay.memory) peak = std::max(peak, m.peak_bytes);
  return peak;
}

// Stages of 1, 3, 3, 1 layers under 1F1B: stage 1 runs pp - s - 1 = 2 warm-up forwards
// and one more before its first backward, so 3 micro-batches of 3 layers are in flight (9
// layer-activations) against stage 0's 4 x 1: the fullest device is in the middle. Per layer (s
// 1024, h 1024, 16 heads, no recompute, tp 1) Korthikanti et al.'s s*h*(34 + 5*a*s/h) = 119,537,664
// B; stage 1's model states: 3 layers of 12,584,960 parameters at 16 B.
TEST(MemoryBound, FindsTheFullestStageInTheMiddle) {
  Experiment e = MemoryExperiment();
  e.plan.stage_layers = {1, 3, 3, 1};
  const MemoryBound b = EstimatePeakMemory(e);
  EXPECT_EQ(b.stage, 1);
  EXPECT_DOUBLE_EQ(b.weights + b.gradients + b.optimizer, 16 * 3 * 12584960.0);
  EXPECT_DOUBLE_EQ(b.activations, 9 * 119537664.0);
  EXPECT_DOUBLE_EQ(b.buffers, 0);
  EXPECT_LE(b.Total(), ReplayPeak(e) * (1 + 1e-12));
}

// An even split whose layers differ: MoE layers after two dense ones, so stage 0 holds the
// dense layers and stage 1 the first MoE layers, each with 4 experts of ffn 8192 (their
// weights alone are 4 x 3 x h x 8192 = 100.7M parameters a layer, against a dense layer's
// 12.6M): the fullest device is stage 1, which the bound must walk although the split is
// even.
TEST(MemoryBound, WalksTheMiddleStagesWhenLayersDiffer) {
  Experiment e = MemoryExperiment();
  e.model.experts = 4;
  e.model.top_k = 2;
  e.model.moe_ffn_hidden = 8192;
  e.model.dense_layers = 2;
  const MemoryBound b = EstimatePeakMemory(e);
  EXPECT_EQ(b.stage, 1);
  EXPECT_LE(b.Total(), ReplayPeak(e) * (1 + 1e-12));
  EXPECT_GT(b.Total(), 0.75 * ReplayPeak(e));
}

// Over uneven splits (empty stages included), schedules, recomputation and ZeRO stages: the
// bound never exceeds the replay's peak and stays close to it.
TEST(MemoryBound, NeverExceedsTheReplayOnUnevenStages) {
  const std::vector<std::vector<int>> splits = {
      {1, 3, 3, 1}, {3, 1, 1, 3}, {0, 4, 4, 0}, {2, 2, 1, 3}, {}};  // {}: 7 layers' default
  int checked = 0;
  for (const std::vector<int>& split : splits) {
    for (ScheduleKind schedule :
         {ScheduleKind::kGpipe, ScheduleKind::kOneFOneB, ScheduleKind::kInterleaved}) {
      for (Recompute recompute : {Recompute::kNone, Recompute::kFull}) {
        for (int zero : {0, 3}) {
          Experiment e = MemoryExperiment();
          e.plan.schedule = schedule;
          e.plan.recompute = recompute;
          e.plan.zero = zero;
          e.plan.stage_layers = split;
          if (split.empty()) e.model.layers = 7;  // default: 2, 2, 2, 1 (or 1, 1, 1, 1, 1, 1, 1, 0)
          if (schedule == ScheduleKind::kInterleaved) {
            e.plan.virtual_stages = 2;
            // Each entry split over two chunks: chunk 0 takes the first half (rounded up).
            std::vector<int> chunks(8, 0);
            for (size_t s = 0; s < split.size(); ++s) {
              chunks[s] = (split[s] + 1) / 2;
              chunks[4 + s] = split[s] / 2;
            }
            e.plan.stage_layers = split.empty() ? split : chunks;
          }
          ASSERT_TRUE(ValidatePlan(e.plan, e.training, e.model, e.cluster).ok());
          const double bound = EstimatePeakMemory(e).Total(), peak = ReplayPeak(e);
          EXPECT_LE(bound, peak * (1 + 1e-12)) << StageLayersText(e.plan.stage_layers);
          EXPECT_GT(bound, 0.75 * peak) << StageLayersText(e.plan.stage_layers);
          ++checked;
        }
      }
    }
  }
  EXPECT_EQ(checked, 60);
}

// ---- Sweeps, the planner, results.csv ----

SweepSpec OneGroup(const Experiment& e, const std::vector<std::string>& auto_keys) {
  SweepSpec spec;
  spec.name = "stages";
  for (const std::string& key : auto_keys) {
    SweepAxis a;
    a.key = key;
    a.is_auto = true;
    spec.axes.push_back(a);
  }
  spec.groups.push_back({std::vector<int>(auto_keys.size(), -1), e});
  return spec;
}

// A 126-layer model (small layers) on 16 GPUs.
Experiment Model126On16() {
  Experiment e = testing::SmallPipeline(1, 64, ScheduleKind::kOneFOneB);
  e.model.layers = 126;
  e.cluster = testing::OneNode(16);
  e.cluster.network_model = NetworkModelKind::kAlphaBeta;
  e.plan.dp = 16;
  return e;
}

TEST(SweepStageLayers, AutoWritesOutTheDefaultSplit) {
  const SweepSpec spec = OneGroup(Model126On16(), {"plan.pp", "plan.stage_layers"});
  std::map<int, std::vector<int>> by_pp;
  for (const Configuration& c : Enumerate(spec)) by_pp[c.plan.pp] = c.plan.stage_layers;
  // pp: every divisor of 16 (dp derived); pp 2 divides 126 evenly, 4, 8 and 16 do not:
  // (126 + 2) / pp units, one layer fewer on the first and last stage.
  EXPECT_EQ(by_pp.at(1), (std::vector<int>{126}));
  EXPECT_EQ(by_pp.at(2), (std::vector<int>{63, 63}));
  EXPECT_EQ(by_pp.at(4), (std::vector<int>{31, 32, 32, 31}));
  EXPECT_EQ(by_pp.at(16), Cat(Cat({7}, Repeat(8, 14)), {7}));
}

TEST(SweepStageLayers, AutoVirtualStagesRunMegatronsAccountedSplitEvenly) {
  Experiment e = Model126On16();
  e.plan.schedule = ScheduleKind::kInterleaved;
  const SweepSpec spec = OneGroup(e, {"plan.pp", "plan.virtual_stages"});
  std::map<int, std::vector<int>> v_by_pp;
  for (const Configuration& c : Enumerate(spec))
    v_by_pp[c.plan.pp].push_back(c.plan.virtual_stages);
  // pp 2 divides 126: v >= 2 dividing 63. pp 16 does not: v >= 2 dividing 128 / 16 = 8.
  EXPECT_EQ(v_by_pp.at(2), (std::vector<int>{3, 7, 9, 21, 63}));
  EXPECT_EQ(v_by_pp.at(16), (std::vector<int>{2, 4, 8}));
}

// The planner lists pp 16 plans for a model whose 126 layers 16 does not divide.
TEST(SweepStageLayers, PlannerRunsPipelinesThatDoNotDivideTheLayers) {
  const PlannerSpace space = MakePlannerSpace(Model126On16(), 16);
  int pp16 = 0;
  for (const Configuration& c : space.configs) {
    if (c.plan.pp != 16) continue;
    ++pp16;
    const Evaluation ev = Evaluate(ConfigurationExperiment(space.spec, c), c.invalid);
    EXPECT_EQ(ev.status, ConfigStatus::kOk) << ev.message;
    EXPECT_TRUE(ev.simulated);
  }
  EXPECT_EQ(pp16, 1);  // tp 1 (the 16 heads allow tp 16 only with pp 1), dp 1, ZeRO 0
}

TEST(SweepStageLayers, ResultsCsvCarriesTheList) {
  EXPECT_EQ(PlanColumns().back(), "plan.stage_layers");
  ResultRow row;
  row.plan.pp = 4;
  row.plan.stage_layers = {1, 2, 2, 1};
  row.message = "m";
  const CsvRecord cells = FormatRow(row);
  const CsvRecord header = ResultColumns({});
  const size_t at = std::find(header.begin(), header.end(), "plan.stage_layers") - header.begin();
  EXPECT_EQ(cells[at], "1/2/2/1");
  const Result<ResultRow> back = ParseRow(cells, header, "test");
  ASSERT_TRUE(back.ok()) << back.error().ToString();
  EXPECT_EQ(back.value().plan.stage_layers, row.plan.stage_layers);
  row.plan.stage_layers.clear();  // the default split: an empty cell
  EXPECT_EQ(FormatRow(row)[at], "");
}

// ---- import megatron ----

constexpr const char* k126 =
    "--num-layers 126 --hidden-size 16384 --num-attention-heads 128 --seq-length 8192 "
    "--tensor-model-parallel-size 8 --pipeline-model-parallel-size 16 --bf16 ";

MegatronImport Import(const std::string& args) {
  Result<MegatronImport> r = ParseMegatronArgs(args);
  EXPECT_TRUE(r.ok()) << args << ": " << (r.ok() ? "" : r.error().ToString());
  return r.ok() ? r.value() : MegatronImport{};
}

InputError ImportError(const std::string& args) {
  Result<MegatronImport> r = ParseMegatronArgs(args);
  EXPECT_FALSE(r.ok()) << args;
  return r.ok() ? InputError{} : r.error();
}

TEST(ImportMegatronStages, FirstAndLastStageLayers) {
  // 126 - 7 - 7 = 112 layers over the 14 middle stages: 8 each.
  MegatronImport run = Import(std::string(k126) +
                              "--decoder-first-pipeline-num-layers 7 "
                              "--decoder-last-pipeline-num-layers 7");
  const std::vector<int> expected = Cat(Cat({7}, Repeat(8, 14)), {7});
  EXPECT_EQ(run.plan.stage_layers, expected);
  EXPECT_TRUE(run.not_modelled.empty());
  const std::string yaml = MegatronExperimentYaml(run, "x", "c.yaml", 16, 0);
  EXPECT_NE(yaml.find("\n  stage_layers: [7, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 7]\n"),
            std::string::npos)
      << yaml;
  // The TransformerConfig names, and only the first: 126 - 6 = 120 over 15 stages.
  run = Import(std::string(k126) + "--num-layers-in-first-pipeline-stage 6");
  EXPECT_EQ(run.plan.stage_layers, Repeat(6, 1, Repeat(8, 15)));
  // Interleaved (v 2): first 6, last 8, middle (126 - 14) / 14 = 8 per stage; per chunk
  // 3, 4 x 14, 4 for each of the two chunks.
  run = Import(std::string(k126) +
               "--num-virtual-stages-per-pipeline-rank 2 --decoder-first-pipeline-num-layers 6 "
               "--decoder-last-pipeline-num-layers 8");
  const std::vector<int> chunk = Cat(Cat({3}, Repeat(4, 14)), {4});
  EXPECT_EQ(run.plan.stage_layers, Cat(chunk, chunk));
}

TEST(ImportMegatronStages, AccountForEmbeddingAndLoss) {
  const std::string both =
      "--account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split ";
  MegatronImport run = Import(std::string(k126) + both);
  EXPECT_EQ(run.plan.stage_layers, Cat(Cat({7}, Repeat(8, 14)), {7}));
  // With 4 layers per virtual stage: v = (126 + 2) / (16 * 4) = 2; 3, 4 x 30, 3.
  run = Import(std::string(k126) + both + "--num-layers-per-virtual-pipeline-stage 4");
  EXPECT_EQ(run.plan.virtual_stages, 2);
  EXPECT_EQ(run.plan.schedule, ScheduleKind::kInterleaved);
  EXPECT_EQ(run.plan.stage_layers, Cat(Cat({3}, Repeat(4, 30)), {3}));
  // The embedding alone: 127 layers + 1 = 128 units, 8 each, 7 on the first stage.
  run = Import(
      "--num-layers 127 --hidden-size 1024 --num-attention-heads 16 --seq-length 128 "
      "--pipeline-model-parallel-size 16 --account-for-embedding-in-pipeline-split");
  EXPECT_EQ(run.plan.stage_layers, Repeat(7, 1, Repeat(8, 15)));
}

TEST(ImportMegatronStages, WhatMegatronRefusesIsBadInput) {
  InputError e = ImportError(std::string(k126) +
                             "--decoder-first-pipeline-num-layers 7 "
                             "--account-for-loss-in-pipeline-split");
  EXPECT_EQ(e.key, "--decoder-first-pipeline-num-layers");
  // 126 - 5 = 121 layers over 15 stages.
  e = ImportError(std::string(k126) + "--decoder-first-pipeline-num-layers 5");
  EXPECT_EQ(e.key, "--decoder-first-pipeline-num-layers");
  EXPECT_EQ(e.message,
            "121 layers are left for the 15 middle stages (of 1 model chunks each) of "
            "--num-layers 126: Megatron-LM needs them to divide evenly");
  e = ImportError(std::string(k126) +
                  "--num-virtual-stages-per-pipeline-rank 2 --decoder-first-pipeline-num-layers 7");
  EXPECT_EQ(e.key, "--decoder-first-pipeline-num-layers");
  EXPECT_EQ(e.message, "7 layers are not divisible by the virtual stages 2");
  // 126 + 1 = 127 units over 16 stages.
  e = ImportError(std::string(k126) + "--account-for-loss-in-pipeline-split");
  EXPECT_EQ(e.key, "--account-for-loss-in-pipeline-split");
  EXPECT_EQ(e.message,
            "--num-layers 126 + 1 = 127 is not divisible by pp*virtual_stages = 16 "
            "(Megatron-LM refuses it)");
  e = ImportError(std::string(k126) +
                  "--num-layers-per-virtual-pipeline-stage 4 --decoder-last-pipeline-num-layers 6");
  EXPECT_EQ(e.key, "--num-layers-per-virtual-pipeline-stage");
}

// Without a flag Megatron refuses a pp that does not divide the layers; meshsim imports
// the run with its default split and says so.
TEST(ImportMegatronStages, NoFlagAndAnUnevenPipelineIsWarned) {
  const MegatronImport run = Import(k126);
  EXPECT_TRUE(run.plan.stage_layers.empty());
  ASSERT_EQ(run.warnings.size(), 1u);
  EXPECT_NE(run.warnings[0].find("Megatron-LM refuses --num-layers 126 over pp*virtual_stages = "
                                 "16 without an uneven-split flag"),
            std::string::npos)
      << run.warnings[0];
  EXPECT_NE(run.warnings[0].find(": [7, 8, "), std::string::npos) << run.warnings[0];
  EXPECT_EQ(MegatronFlagOf("plan.stage_layers[3]"), "--decoder-first-pipeline-num-layers");
}

}  // namespace
}  // namespace meshsim

// Sweep enumeration, the memory lower bound against the replay, CSV rows, the Pareto
// front, ordered parallel evaluation and the explorer's escaping.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "sim/config/loader.h"
#include "sim/engine/simulation.h"
#include "sim/plan/validate.h"
#include "sim/report/explorer_html.h"
#include "sim/report/summary.h"
#include "sim/schedule/memory_bound.h"
#include "sim/sweep/analysis.h"
#include "sim/sweep/enumerate.h"
#include "sim/sweep/evaluate.h"
#include "sim/sweep/planner.h"
#include "sim/sweep/result_row.h"
#include "sim/sweep/runner.h"
#include "test_fixtures.h"

namespace meshsim {
namespace {

// A small model with a realistic vocabulary (so that embedding, output layer and logits
// count) on one node of `gpus` GPUs.
Experiment SmallExperiment(int gpus, int global_batch = 16) {
  Experiment e;
  e.name = "small";
  e.model = testing::SmallModel();
  e.model.vocab = 32000;
  e.cluster = testing::OneNode(gpus);
  // The memory bound does not depend on the network; the alpha-beta model is the fast one.
  e.cluster.network_model = NetworkModelKind::kAlphaBeta;
  e.plan.global_batch = global_batch;
  e.plan.sequence_parallel = true;
  return e;
}

SweepAxis Auto(const std::string& key) {
  SweepAxis a;
  a.key = key;
  a.is_auto = true;
  return a;
}

SweepSpec OneGroup(const Experiment& e, const std::vector<SweepAxis>& axes) {
  SweepSpec s;
  s.name = "test";
  s.axes = axes;
  s.groups.push_back({std::vector<int>(axes.size(), -1), e});
  return s;
}

TEST(Divisors, AreAscendingAndComplete) {
  EXPECT_EQ(Divisors(1), (std::vector<int>{1}));
  EXPECT_EQ(Divisors(12), (std::vector<int>{1, 2, 3, 4, 6, 12}));
  EXPECT_EQ(Divisors(16), (std::vector<int>{1, 2, 4, 8, 16}));
  EXPECT_EQ(Divisors(5128), (std::vector<int>{1, 2, 4, 8, 641, 1282, 2564, 5128}));
}

TEST(Enumerate, AutoMeshAxesAreEveryFactorizationWithDpDerived) {
  const SweepSpec spec = OneGroup(SmallExperiment(8), {Auto("plan.tp"), Auto("plan.pp")});
  const std::vector<Configuration> configs = Enumerate(spec);
  // Sum over tp | 8 of the divisors of 8 / tp: 4 + 3 + 2 + 1.
  ASSERT_EQ(configs.size(), 10u);
  std::set<std::tuple<int, int, int>> seen;
  for (size_t i = 0; i < configs.size(); ++i) {
    const PlanSpec& p = configs[i].plan;
    EXPECT_EQ(configs[i].index, static_cast<int64_t>(i));
    EXPECT_EQ(p.tp * p.pp * p.dp * p.cp, 8);
    EXPECT_FALSE(configs[i].invalid);
    seen.insert({p.tp, p.pp, p.dp});
  }
  EXPECT_EQ(seen.size(), 10u);
  EXPECT_EQ(configs.front().plan.tp, 1);  // tp outermost, ascending
  EXPECT_EQ(configs.back().plan.tp, 8);
}

TEST(Enumerate, AllFourMeshAxesAutoGiveEveryOrderedFactorization) {
  const SweepSpec spec = OneGroup(
      SmallExperiment(4), {Auto("plan.tp"), Auto("plan.pp"), Auto("plan.cp"), Auto("plan.dp")});
  // Ordered factorizations of 4 = 2^2 into 4 factors: C(5, 3) = 10.
  EXPECT_EQ(Enumerate(spec).size(), 10u);
}

TEST(Enumerate, DerivedDpThatIsNotWholeIsInvalid) {
  Experiment e = SmallExperiment(8);
  e.plan.tp = 3;  // as an explicit axis value would set it
  SweepAxis tp;
  tp.key = "plan.tp";
  tp.values = {"3"};
  SweepSpec spec = OneGroup(e, {tp, Auto("plan.pp")});
  spec.groups[0].choice = {0, -1};
  const std::vector<Configuration> configs = Enumerate(spec);
  ASSERT_EQ(configs.size(), 1u);
  ASSERT_TRUE(configs[0].invalid);
  EXPECT_EQ(configs[0].invalid->key, "plan.dp");
  EXPECT_NE(configs[0].invalid->message.find("not a whole number"), std::string::npos);
  const Evaluation ev = Evaluate(ConfigurationExperiment(spec, configs[0]), configs[0].invalid);
  EXPECT_EQ(ev.status, ConfigStatus::kInvalid);
}

TEST(Enumerate, AutoMicroBatchIsEveryDivisorOfTheLocalBatch) {
  const SweepSpec spec =
      OneGroup(SmallExperiment(8, 48), {Auto("plan.tp"), Auto("plan.micro_batch")});
  for (const Configuration& c : Enumerate(spec)) {
    EXPECT_EQ((c.plan.global_batch / c.plan.dp) % c.plan.micro_batch, 0);
  }
  // dp = 8 / tp: local batches 6, 12, 24, 48 have 4 + 6 + 8 + 10 divisors.
  EXPECT_EQ(Enumerate(spec).size(), 28u);
}

TEST(Enumerate, AutoVirtualStagesOnlyForTheInterleavedSchedule) {
  Experiment e = SmallExperiment(4);
  e.plan.pp = 2;
  e.plan.dp = 2;
  const SweepSpec spec = OneGroup(e, {Auto("plan.schedule"), Auto("plan.virtual_stages")});
  std::vector<std::pair<ScheduleKind, int>> got;
  for (const Configuration& c : Enumerate(spec))
    got.push_back({c.plan.schedule, c.plan.virtual_stages});
  // 8 layers / pp 2 = 4 layers per stage: v in 2, 4 when interleaved (v = 1 would be
  // 1F1B).
  const std::vector<std::pair<ScheduleKind, int>> want = {{ScheduleKind::kGpipe, 1},
                                                          {ScheduleKind::kOneFOneB, 1},
                                                          {ScheduleKind::kInterleaved, 2},
                                                          {ScheduleKind::kInterleaved, 4}};
  EXPECT_EQ(got, want);
}

// A MoE version of SmallExperiment: 4 experts, top 2, every other layer.
Experiment SmallMoeExperiment(int gpus) {
  Experiment e = SmallExperiment(gpus);
  e.model.experts = 4;
  e.model.top_k = 2;
  e.model.moe_ffn_hidden = 2048;
  e.model.moe_every = 2;
  return e;
}

TEST(Enumerate, AutoEpIsEveryDivisorOfTpDpCpThatDividesTheExperts) {
  const SweepSpec spec =
      OneGroup(SmallMoeExperiment(8), {Auto("plan.tp"), Auto("plan.cp"), Auto("plan.ep")});
  std::vector<std::tuple<int, int, int, int>> got;  // tp, cp, dp, ep
  for (const Configuration& c : Enumerate(spec)) {
    const PlanSpec& p = c.plan;
    EXPECT_FALSE(c.invalid);
    EXPECT_EQ((p.tp * p.dp * p.cp) % p.ep, 0);
    EXPECT_EQ(4 % p.ep, 0);
    const Experiment& e = spec.groups[0].experiment;
    EXPECT_TRUE(ValidatePlan(p, e.training, e.model, e.cluster).ok())
        << "tp " << p.tp << " cp " << p.cp << " ep " << p.ep;
    got.push_back({p.tp, p.cp, p.dp, p.ep});
  }
  // Every (tp, cp) with tp x cp x dp = 8 has tp x dp x cp = 8 ranks a stage: ep 1, 2, 4 (of
  // 8's divisors, those dividing the 4 experts), nested inside the mesh, ascending.
  ASSERT_EQ(got.size(), 10u * 3u);
  EXPECT_EQ(got[0], std::make_tuple(1, 1, 8, 1));
  EXPECT_EQ(got[1], std::make_tuple(1, 1, 8, 2));
  EXPECT_EQ(got[2], std::make_tuple(1, 1, 8, 4));
  // A dense model has one expert degree: 1.
  const SweepSpec dense = OneGroup(SmallExperiment(8), {Auto("plan.tp"), Auto("plan.ep")});
  ASSERT_EQ(Enumerate(dense).size(), 4u);
  for (const Configuration& c : Enumerate(dense)) EXPECT_EQ(c.plan.ep, 1);
}

// results.csv has no plan column for ep: its axis column shows each configuration's ep,
// the chosen ones (auto) too, and reads back into the plan (resume, merge).
TEST(Enumerate, EpAxisColumnShowsTheChosenEpAndReadsBack) {
  const SweepSpec spec = OneGroup(SmallMoeExperiment(8), {Auto("plan.tp"), Auto("plan.ep")});
  const std::vector<std::string> axis_keys = NonPlanAxisKeys(spec);
  ASSERT_EQ(axis_keys, (std::vector<std::string>{"plan.ep"}));
  const CsvRecord header = ResultColumns(axis_keys);
  std::set<std::string> cells;
  for (const Configuration& c : Enumerate(spec)) {
    const ResultRow row = MakeResultRow(spec, c, Evaluation{});
    ASSERT_EQ(row.axes.size(), 1u);
    EXPECT_EQ(row.axes[0], std::to_string(c.plan.ep));
    cells.insert(row.axes[0]);
    const Result<ResultRow> back = ParseRow(FormatRow(row), header, "test");
    ASSERT_TRUE(back.ok()) << back.error().ToString();
    EXPECT_EQ(back.value().plan.ep, c.plan.ep);
    EXPECT_EQ(FormatRow(back.value()), FormatRow(row));
  }
  EXPECT_EQ(cells, (std::set<std::string>{"1", "2", "4"}));
}

// The planner varies ep for a MoE model, not for a dense one; a larger ep holds fewer
// experts' weights per GPU at the same split.
TEST(Planner, VariesExpertParallelismForAMoeModel) {
  const PlannerSpace dense = MakePlannerSpace(SmallExperiment(8), 8);
  for (const Configuration& c : dense.configs) EXPECT_EQ(c.plan.ep, 1);
  const PlannerSpace moe = MakePlannerSpace(SmallMoeExperiment(8), 8);
  // Each dense split once per ep that divides its tp x dp ranks and the 4 experts.
  size_t want = 0;
  for (const Configuration& c : dense.configs) {
    for (int ep : {1, 2, 4}) want += (c.plan.tp * c.plan.dp) % ep == 0 ? 1 : 0;
  }
  EXPECT_EQ(moe.configs.size(), want);
  std::set<int> eps;
  for (const Configuration& c : moe.configs) eps.insert(c.plan.ep);
  EXPECT_EQ(eps, (std::set<int>{1, 2, 4}));
  const PlannerResult result = RunPlanner(moe, 2);
  // Weights per GPU at tp 1, pp 1, dp 8, ZeRO 0, by ep: each doubling halves the experts a
  // GPU holds.
  std::map<int, double> weights;
  for (const ResultRow& r : result.table.rows) {
    if (r.plan.tp == 1 && r.plan.pp == 1 && r.plan.zero == 0 && r.status == ConfigStatus::kOk) {
      weights[r.plan.ep] = r.MemoryBreakdownShown().weights;
    }
  }
  ASSERT_EQ(weights.size(), 3u);
  EXPECT_GT(weights.at(1), weights.at(2));
  EXPECT_GT(weights.at(2), weights.at(4));
}

TEST(Enumerate, FingerprintChangesWithTheSpace) {
  const SweepSpec a = OneGroup(SmallExperiment(8), {Auto("plan.tp")});
  const SweepSpec b = OneGroup(SmallExperiment(8), {Auto("plan.tp"), Auto("plan.zero")});
  EXPECT_EQ(Fingerprint(a, Enumerate(a)), Fingerprint(a, Enumerate(a)));
  EXPECT_NE(Fingerprint(a, Enumerate(a)), Fingerprint(b, Enumerate(b)));
}

TEST(Enumerate, FingerprintSeesTheFp8RecipeAndNvlinkDomains) {
  Experiment e = SmallExperiment(8);
  const auto print = [](const Experiment& x) {
    const SweepSpec s = OneGroup(x, {Auto("plan.tp")});
    return Fingerprint(s, Enumerate(s));
  };
  const std::string bf16 = print(e);
  e.training.dtype = Dtype::kFp8;
  e.cluster.gpu.peak_tflops_fp8 = 624;
  const std::string delayed = print(e);
  e.training.fp8_recipe = Fp8Recipe::kCurrent;
  const std::string current = print(e);
  e.cluster.nvlink_domain_nodes = 2;
  const std::string domain = print(e);
  EXPECT_NE(bf16, delayed);
  EXPECT_NE(delayed, current);
  EXPECT_NE(current, domain);
}

// A resumed sweep must see a changed model variant, framework or TP overlap: each of
// these changes the fingerprint, and no two of them give the same one.
TEST(Enumerate, FingerprintSeesModelVariantsFrameworkAndTpOverlap) {
  const auto print = [](const Experiment& x) {
    const SweepSpec s = OneGroup(x, {Auto("plan.tp")});
    return Fingerprint(s, Enumerate(s));
  };
  const Experiment base = SmallExperiment(8);
  const std::string plain = print(base);
  std::vector<std::string> prints;
  for (int variant = 0; variant < 5; ++variant) {
    Experiment e = base;
    switch (variant) {
      case 0:
        e.model.head_dim = 32;
        break;
      case 1:
        e.model.sliding_window = 128;
        e.model.sliding_window_pattern = 2;
        break;
      case 2:
        e.model.kv_lora_rank = 64;
        e.model.qk_rope_head_dim = 16;
        break;
      case 3:
        e.plan.framework = Framework::kFsdp;
        break;
      default:
        e.plan.tp_comm_overlap = true;
        e.plan.sequence_parallel = true;
        break;
    }
    prints.push_back(print(e));
    EXPECT_NE(prints.back(), plain) << "variant " << variant;
  }
  EXPECT_EQ(std::set<std::string>(prints.begin(), prints.end()).size(), prints.size());
  EXPECT_EQ(print(base), plain);
}

// A resumed sweep must see a changed cluster efficiency, kernel model, link or what-if:
// each changes the fingerprint, and no two give the same one.
TEST(Enumerate, FingerprintSeesClusterEfficienciesLinksAndWhatIfs) {
  const auto print = [](const Experiment& x) {
    const SweepSpec s = OneGroup(x, {Auto("plan.tp")});
    return Fingerprint(s, Enumerate(s));
  };
  const Experiment base = SmallExperiment(8);
  const std::string plain = print(base);
  const std::vector<std::function<void(ClusterSpec&)>> changes = {
      [](ClusterSpec& k) { k.efficiency.matmul_fp8 = 0.5; },
      [](ClusterSpec& k) { k.efficiency.kernel_overhead_us = 4; },
      [](ClusterSpec& k) { k.efficiency.nic = 0.7; },
      [](ClusterSpec& k) { k.efficiency.kernel_model = KernelModelKind::kRoofline; },
      [](ClusterSpec& k) { k.efficiency.comm_interference.all_to_all = 0.3; },
      [](ClusterSpec& k) {
        k.efficiency.gemm_table.push_back({1024, 1024, 1024, 1, Dtype::kBf16, 500});
      },
      [](ClusterSpec& k) { k.gpu.sms = 132; },
      [](ClusterSpec& k) { k.inter_node.latency_us = 7; },
      [](ClusterSpec& k) { k.intra_node.latency_us = 3; },
      [](ClusterSpec& k) {
        k.what_if.stragglers.push_back({3, 1.5});
      },
      [](ClusterSpec& k) {
        k.what_if.links.push_back({"node0.nic1", 0.5, false});
      },
  };
  std::vector<std::string> prints;
  for (size_t i = 0; i < changes.size(); ++i) {
    Experiment e = base;
    changes[i](e.cluster);
    prints.push_back(print(e));
    EXPECT_NE(prints.back(), plain) << "change " << i;
  }
  EXPECT_EQ(std::set<std::string>(prints.begin(), prints.end()).size(), prints.size());
  EXPECT_EQ(print(base), plain);
}

// The pruning rule's premise: the bound never exceeds what the replay allocates, over a
// space that exercises every schedule (with every valid chunk count), recompute mode,
// ZeRO stage (0-3) and micro-batch size (1-16), on the alpha-beta network.
TEST(MemoryBound, NeverExceedsTheReplayPeak) {
  const SweepSpec spec =
      OneGroup(SmallExperiment(8, 16), {Auto("plan.tp"), Auto("plan.pp"), Auto("plan.schedule"),
                                        Auto("plan.virtual_stages"), Auto("plan.micro_batch"),
                                        Auto("plan.zero"), Auto("plan.recompute")});
  int checked = 0;
  double worst_gap = 1;
  for (const Configuration& c : Enumerate(spec)) {
    const Experiment e = ConfigurationExperiment(spec, c);
    if (!Evaluate(e).bound) continue;  // invalid
    const MemoryBound bound = EstimatePeakMemory(e);
    const auto sim = Simulate(e);
    double peak = 0;
    for (const DeviceMemory& m : sim->replay.memory) peak = std::max(peak, m.peak_bytes);
    ASSERT_LE(bound.Total(), peak * (1 + 1e-12))
        << "tp " << c.plan.tp << " pp " << c.plan.pp << " schedule "
        << static_cast<int>(c.plan.schedule) << " v " << c.plan.virtual_stages << " mb "
        << c.plan.micro_batch << " zero " << c.plan.zero << " recompute "
        << static_cast<int>(c.plan.recompute);
    worst_gap = std::min(worst_gap, bound.Total() / peak);
    ++checked;
  }
  // Every valid plan of the space: tp | 16 heads and tp * pp | 8 GPUs give 10 meshes;
  // micro-batches divide 16 / dp. GPipe and 1F1B: 2 x the divisors of 16 / dp summed over
  // the meshes = 2 x (2 + 3 + 4 + 5 + 3 + 4 + 5 + 4 + 5 + 5) = 80. Interleaved (pp >= 2,
  // v >= 2 with pp * v | 8 layers, micro-batches a multiple of pp): tp 1 pp 2: 2 v (2, 4)
  // x 2 micro-batch sizes; tp 1 pp 4: 1 x 2; tp 1 pp 8: none; tp 2 pp 2: 2 x 3; tp 2 pp
  // 4: 1 x 3; tp 4 pp 2: 2 x 4: 23. (80 + 23) x 4 ZeRO stages x 3 recompute modes = 1236.
  EXPECT_EQ(checked, 1236);
  // Tight enough to be useful: within 25% of the replay everywhere here.
  EXPECT_GT(worst_gap, 0.75);
}

// The README's example, Llama-2 7B tp 1 pp 2 dp 8 on 16 H100s (default.yaml), by hand:
// s = h = 4096, 32 heads, SwiGLU f = 11008, vocab 32000, 4 micro-batches of 1, selective
// recompute, 1F1B. Stage 0 holds 16 layers of 4h^2 + 3hf + 2h = 202,383,360 parameters and
// the embedding 32000 * 4096: Psi = 3,369,205,760. Activations: 2 micro-batches in flight
// x 16 layers x 34.125 sbh (attention 5 + 2 * (2 + 2) = 13, MLP 5 + 3 * 2 * 11008/4096 =
// 21.125; sbh = 16,777,216) = 18,320,719,872 B (17.0625 GiB); the recomputed core 32 *
// 4096^2 * 5 B = 2.5 GiB. Model states (Rajbhandari et al., 16 B/param) over dp 8: ZeRO-0
// 16 Psi -> 69.768 GiB in all; ZeRO-1 4 + 12/8 = 5.5 Psi -> 36.820; ZeRO-2 2 + 14/8 = 3.75
// Psi -> 31.329; ZeRO-3 16/8 Psi plus a gathered layer (2 B x 202,383,360) -> 26.215 for
// the bound, and the replay holds the prefetched next layer too -> 26.592.
TEST(MemoryBound, ReadmeExampleIsExactUpToZeroTwo) {
  const double gib = 1024.0 * 1024 * 1024;
  const double bound[] = {69.768, 36.820, 31.329, 26.215};
  const double replay[] = {69.768, 36.820, 31.329, 26.592};
  for (int zero = 0; zero <= 3; ++zero) {
    SCOPED_TRACE(zero);
    Result<Experiment> e = LoadExperimentFile(
        std::string(MESHSIM_SOURCE_DIR) + "/workloads/experiments/default.yaml",
        {"plan.tp=1", "plan.pp=2", "plan.dp=8", "plan.zero=" + std::to_string(zero)});
    ASSERT_TRUE(e.ok()) << e.error().ToString();
    const auto sim = Simulate(e.value());
    double peak = 0;
    for (const DeviceMemory& m : sim->replay.memory) peak = std::max(peak, m.peak_bytes);
    EXPECT_NEAR(EstimatePeakMemory(e.value()).Total() / gib, bound[zero], 1e-3);
    EXPECT_NEAR(peak / gib, replay[zero], 1e-3);
  }
}

// Every configuration the sweep prunes would have been over the budget in the replay.
TEST(MemoryBound, PrunedConfigurationsNeverFitInTheReplay) {
  Experiment base = SmallExperiment(8, 16);
  base.cluster.gpu.memory_gib = 3.0;  // about the median need of this space
  const SweepSpec spec = OneGroup(base, {Auto("plan.tp"), Auto("plan.pp"), Auto("plan.zero"),
                                         Auto("plan.recompute"), Auto("plan.micro_batch")});
  int pruned = 0, simulated = 0;
  for (const Configuration& c : Enumerate(spec)) {
    const Experiment e = ConfigurationExperiment(spec, c);
    const Evaluation ev = Evaluate(e);
    if (ev.status == ConfigStatus::kInvalid) continue;
    if (ev.simulated) {
      ++simulated;
      continue;
    }
    ASSERT_EQ(ev.status, ConfigStatus::kOom);
    ++pruned;
    const auto sim = Simulate(e);
    const nlohmann::ordered_json s = BuildSummary(*sim);
    EXPECT_GT(s["peak_memory_gib"].get<double>(), 3.0) << ev.message;
    EXPECT_FALSE(s["fits"].get<bool>());
  }
  EXPECT_GT(pruned, 10);
  EXPECT_GT(simulated, 10);
}

// The same with the flow-level network, where ZeRO-3 prefetches and frees may interleave
// differently: the bound still holds.
TEST(MemoryBound, HoldsWithTheFlowNetwork) {
  Experiment base = SmallExperiment(8, 16);
  base.cluster.network_model = NetworkModelKind::kFlow;
  const SweepSpec spec = OneGroup(base, {Auto("plan.tp"), Auto("plan.pp"), Auto("plan.zero")});
  int checked = 0;
  for (const Configuration& c : Enumerate(spec)) {
    const Experiment e = ConfigurationExperiment(spec, c);
    if (!Evaluate(e).bound) continue;
    const auto sim = Simulate(e);
    double peak = 0;
    for (const DeviceMemory& m : sim->replay.memory) peak = std::max(peak, m.peak_bytes);
    EXPECT_LE(EstimatePeakMemory(e).Total(), peak * (1 + 1e-12));
    ++checked;
  }
  EXPECT_GT(checked, 30);
}

// MoE layers (every other one, with a shared expert), expert and context parallelism,
// FlashAttention and a routing skew: the bound follows the builder's per-layer memory.
TEST(MemoryBound, HoldsForMoeContextParallelismAndFlashAttention) {
  int checked = 0;
  for (int tp : {1, 2}) {
    for (int pp : {1, 2}) {
      for (int cp : {1, 2}) {
        for (int ep : {1, 2}) {
          for (int zero : {0, 3}) {
            for (bool flash : {false, true}) {
              Experiment e = SmallExperiment(8, 16);
              e.model.experts = 4;
              e.model.top_k = 2;
              e.model.moe_ffn_hidden = 2048;
              e.model.shared_experts = 1;
              e.model.moe_every = 2;
              e.plan.tp = tp;
              e.plan.pp = pp;
              e.plan.cp = cp;
              e.plan.ep = ep;
              e.plan.dp = 8 / (tp * pp * cp);
              e.plan.zero = zero;
              e.plan.moe_skew = ep > 1 ? 1.5 : 1.0;
              e.plan.recompute = zero == 3 ? Recompute::kFull : Recompute::kSelective;
              e.training.flash_attention = flash;
              const Evaluation ev = Evaluate(e);
              if (!ev.bound) continue;  // invalid
              const auto sim = Simulate(e);
              double peak = 0;
              for (const DeviceMemory& m : sim->replay.memory) peak = std::max(peak, m.peak_bytes);
              EXPECT_LE(EstimatePeakMemory(e).Total(), peak * (1 + 1e-12))
                  << "tp " << tp << " pp " << pp << " cp " << cp << " ep " << ep << " zero " << zero
                  << " flash " << flash;
              EXPECT_GT(EstimatePeakMemory(e).Total(), 0.75 * peak);
              ++checked;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 40);
}

TEST(MemoryBound, ModelStatesOfOneGpuAre16BytesPerParameter) {
  Experiment e = SmallExperiment(1, 1);
  const MemoryBound b = EstimatePeakMemory(e);
  // The small model with vocabulary 32000: 8 layers of 4h^2 + 2 * h * 4096 + 2h =
  // 12,584,960 parameters (h = 1024), two embeddings of 32000 * 1024 = 32,768,000: Psi =
  // 166,215,680 (the final LayerNorm's 1024 are counted by TotalParams but allocated by no
  // stage), at 16 bytes each.
  EXPECT_DOUBLE_EQ(b.weights + b.gradients + b.optimizer, 16 * 166215680.0);
  // No recompute, s = 1024, 16 heads: Korthikanti et al.'s s*h * (34 + 5 * a * s / h) =
  // 1,048,576 * 114 = 119,537,664 B a layer, 8 layers; the peak is at the end of forward,
  // with the fp32 logits 4 * 1024 * 32000 = 131,072,000 B: 1,087,373,312 B, no buffers.
  EXPECT_DOUBLE_EQ(b.activations, 8 * 119537664.0 + 131072000.0);
  EXPECT_DOUBLE_EQ(b.buffers, 0);
}

TEST(ResultsTable, SummaryColumnsAreTheSummarysDeterministicScalars) {
  const Experiment e = SmallExperiment(8);
  const nlohmann::ordered_json s = BuildSummary(*Simulate(e));
  std::set<std::string> scalars;
  std::function<void(const nlohmann::ordered_json&, const std::string&)> walk =
      [&](const nlohmann::ordered_json& j, const std::string& prefix) {
        for (auto it = j.begin(); it != j.end(); ++it) {
          const std::string key = prefix.empty() ? it.key() : prefix + "." + it.key();
          if (it->is_object()) {
            walk(*it, key);
          } else if (!it->is_array()) {
            scalars.insert(key);
          }
        }
      };
  walk(s, "");
  for (const char* host : {"sim.wall_s", "sim.events_per_s", "sim.peak_rss_mib"})
    scalars.erase(host);
  const std::vector<std::string> listed = SummaryColumns();
  const std::set<std::string> columns(listed.begin(), listed.end());
  EXPECT_EQ(scalars, columns) << "a summary key was added or removed: update SummaryColumns()";
}

TEST(ResultsTable, CsvQuotesAndParsesBack) {
  const CsvRecord row = {"1", "a,b", "say \"hi\"", "", "line\nbreak"};
  const std::string text = CsvLine({"a", "b", "c", "d", "e"}) + CsvLine(row) + CsvLine(row);
  Result<CsvText> t = ParseCsv(text, "test");
  ASSERT_TRUE(t.ok()) << t.error().ToString();
  ASSERT_EQ(t.value().records.size(), 2u);
  EXPECT_EQ(t.value().records[0], row);
  // Lines: the header 1, the first record 2 and 3 (its cell holds a line break), so the
  // second record starts on line 4.
  EXPECT_EQ(t.value().lines, (std::vector<int>{2, 4}));
  EXPECT_FALSE(t.value().dropped_partial_line);
  EXPECT_EQ(t.value().complete_bytes, text.size());
}

TEST(ResultsTable, PartialLastLineIsDropped) {
  const std::string good = "config,status\n0,ok\n1,oom\n";
  Result<CsvText> t = ParseCsv(good + "2,inv", "test");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t.value().records.size(), 2u);
  EXPECT_TRUE(t.value().dropped_partial_line);
  EXPECT_EQ(t.value().complete_bytes, good.size());
  EXPECT_FALSE(ParseCsv("config,status\n0,ok,extra\n", "test").ok());
}

// A row with a status and, when simulated, a step time and peak memory.
ResultRow Row(int64_t config, ConfigStatus status, std::optional<double> step = {},
              double memory = 0) {
  ResultRow r;
  r.config = config;
  r.status = status;
  if (step) {
    r.summary = StepSummary{};
    r.summary->step_time_s = *step;
    r.summary->peak_memory_gib = memory;
  }
  return r;
}

TEST(Analysis, ParetoFrontAndRanking) {
  ResultTable t;
  t.rows = {Row(0, ConfigStatus::kOk, 3, 10),    // front (least memory)
            Row(1, ConfigStatus::kOk, 2, 20),    // front
            Row(2, ConfigStatus::kOk, 2.5, 25),  // dominated by 1
            Row(3, ConfigStatus::kOom, 1, 90),   // not ok
            Row(4, ConfigStatus::kOk, 1, 40),    // front (fastest)
            Row(5, ConfigStatus::kInvalid)};
  EXPECT_EQ(RankByStepTime(t), (std::vector<size_t>{4, 1, 2, 0}));
  EXPECT_EQ(ParetoFront(t), (std::vector<size_t>{4, 1, 0}));
}

// The one list of columns: every row a sweep writes (ok, pruned oom, invalid) reads back
// into the same typed row and is written again byte for byte.
TEST(ResultsTable, RowsReadBackAreWrittenAgainByteForByte) {
  Experiment e = SmallExperiment(8);
  // 166M parameters of 16 B: 2.5 GiB of model states without ZeRO, so the unsharded plans
  // do not fit in 2 GiB; the interleaved schedule with one chunk per stage is invalid.
  e.cluster.gpu.memory_gib = 2;
  SweepAxis seq;
  seq.key = "model.seq_len";
  seq.values = {"1024"};
  SweepSpec spec =
      OneGroup(e, {Auto("plan.tp"), Auto("plan.pp"), Auto("plan.zero"), Auto("plan.schedule")});
  spec.axes.insert(spec.axes.begin(), seq);
  for (SweepGroup& g : spec.groups) g.choice.insert(g.choice.begin(), 0);
  const std::vector<Configuration> configs = Enumerate(spec);
  const std::vector<std::string> header = ResultColumns(NonPlanAxisKeys(spec));
  ASSERT_EQ(header[2], "model.seq_len");
  std::set<ConfigStatus> seen;
  for (const Configuration& c : configs) {
    const ResultRow row =
        MakeResultRow(spec, c, Evaluate(ConfigurationExperiment(spec, c), c.invalid));
    seen.insert(row.status);
    const CsvRecord cells = FormatRow(row);
    ASSERT_EQ(cells.size(), header.size());
    Result<ResultRow> back = ParseRow(cells, header, "test");
    ASSERT_TRUE(back.ok()) << back.error().ToString();
    EXPECT_EQ(CsvLine(FormatRow(back.value())), CsvLine(cells));
    EXPECT_EQ(back.value().summary.has_value(), row.summary.has_value());
    EXPECT_EQ(back.value().estimate.has_value(), row.estimate.has_value());
  }
  EXPECT_EQ(seen, (std::set<ConfigStatus>{ConfigStatus::kOk, ConfigStatus::kOom,
                                          ConfigStatus::kInvalid}));
}

TEST(ResultsTable, ACellThatDoesNotParseIsNamed) {
  const std::vector<std::string> header = ResultColumns({});
  CsvRecord cells = FormatRow(Row(0, ConfigStatus::kInvalid));
  cells[2] = "two";  // plan.tp
  Result<ResultRow> back = ParseRow(cells, header, "results.csv line 2");
  ASSERT_FALSE(back.ok());
  EXPECT_EQ(back.error().ToString(), "results.csv line 2: plan.tp: cannot read 'two'");
}

TEST(Runner, RowsComeInConfigurationOrderWhateverTheThreads) {
  const SweepSpec spec =
      OneGroup(SmallExperiment(8), {Auto("plan.tp"), Auto("plan.pp"), Auto("plan.zero")});
  const std::vector<Configuration> configs = Enumerate(spec);
  std::vector<size_t> todo(configs.size());
  for (size_t i = 0; i < todo.size(); ++i) todo[i] = i;
  auto run = [&](int threads) {
    std::vector<CsvRecord> rows;
    EvaluateInOrder(spec, configs, todo, threads, [&](size_t pos, ResultRow row, const RowInfo&) {
      EXPECT_EQ(pos, rows.size());
      rows.push_back(FormatRow(row));
    });
    return rows;
  };
  const std::vector<CsvRecord> one = run(1);
  ASSERT_EQ(one.size(), configs.size());
  EXPECT_EQ(one, run(3));
}

TEST(ExplorerHtml, NamesCannotBreakOutOfTheScriptElement) {
  nlohmann::ordered_json data;
  data["title"] = "evil</script><script>alert(1)</script>";
  data["rows"] = nlohmann::ordered_json::array();
  const std::string json = ScriptSafeJson(data);
  EXPECT_EQ(json.find('<'), std::string::npos);
  EXPECT_EQ(nlohmann::ordered_json::parse(json), data);
  std::ostringstream page;
  WriteExplorerHtml(data, page);
  EXPECT_EQ(page.str().find("evil</script>"), std::string::npos);
  EXPECT_NE(page.str().find("evil&lt;/script&gt;"), std::string::npos);
  EXPECT_EQ(HtmlEscape("a<b>&\"'"), "a&lt;b&gt;&amp;&quot;&#39;");
}

}  // namespace
}  // namespace meshsim

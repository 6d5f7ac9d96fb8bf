// JAX-style plans beyond the plan itself (issue 15, items 1 and 7): XLA's overlap knobs
// (plan.xla), the layer-pipelined `stage` axis under every schedule, mesh sizes as sweep
// axes (auto: ICI/DCN splits), the JAX-style planner and the explorer's mesh columns.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "sim/config/loader.h"
#include "sim/config/sweep_loader.h"
#include "sim/engine/simulation.h"
#include "sim/sweep/analysis.h"
#include "sim/sweep/enumerate.h"
#include "sim/sweep/mesh_axes.h"
#include "sim/sweep/planner.h"
#include "sim/sweep/result_row.h"
#include "test_fixtures.h"

namespace meshsim {
namespace {

const std::string kDir = std::string(MESHSIM_SOURCE_DIR) + "/workloads/experiments/";
const std::string kSweepPath = std::string(MESHSIM_SOURCE_DIR) + "/workloads/sweeps/jax-x.yaml";

// Llama 2 7B on `nodes` DGX H100 nodes (alpha-beta network) with `plan` (YAML lines).
Result<Experiment> Load(int nodes, const std::string& plan) {
  return LoadExperimentText(
      "name: x\n"
      "model: ../models/llama2-7b.yaml\n"
      "cluster: ../../topologies/dgx-h100.yaml\n"
      "cluster_overrides: {nodes: " +
          std::to_string(nodes) +
          ", network_model: alpha_beta}\n"
          "plan:\n" +
          plan,
      kDir + "x.yaml");
}

// tp 2 x pp 4 x dp 2 with sequence parallelism on 16 GPUs (stage 2 in a node x 2 nodes).
const std::string kMegatronRules =
    "  mesh: {axes: [stage, data, tensor], ici: [2, 2, 2], dcn: [2, 1, 1]}\n"
    "  rules: {batch: data, sequence: tensor, heads: tensor, mlp: tensor, vocab: tensor,\n"
    "          layers: stage}\n"
    "  global_batch: 32\n";

// ---- plan.xla ----

TEST(JaxXla, DefaultsAreAsyncCollectivesWithoutCollectiveMatmul) {
  const Result<Experiment> e = Load(2, kMegatronRules);
  ASSERT_TRUE(e.ok()) << e.error().ToString();
  EXPECT_TRUE(e.value().plan.async_collectives);
  EXPECT_FALSE(e.value().plan.tp_comm_overlap);
}

TEST(JaxXla, KnobsSetTheirPlanFields) {
  const Result<Experiment> e =
      Load(2, kMegatronRules + "  xla: {async_collectives: false, collective_matmul: true}\n");
  ASSERT_TRUE(e.ok()) << e.error().ToString();
  EXPECT_FALSE(e.value().plan.async_collectives);
  EXPECT_TRUE(e.value().plan.tp_comm_overlap);  // collective matmul is TE's TP overlap
}

TEST(JaxXla, BadInputNamesTheKey) {
  const Result<Experiment> a = Load(2, kMegatronRules + "  xla: {async_collectives: maybe}\n");
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.error().key, "plan.xla.async_collectives");
  const Result<Experiment> b = Load(2, kMegatronRules + "  xla: {latency_hiding: true}\n");
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.error().key, "plan.xla.latency_hiding");
  const Result<Experiment> c = Load(2, kMegatronRules + "  tp_comm_overlap: true\n");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().key, "plan.tp_comm_overlap");
  EXPECT_NE(c.error().message.find("plan.xla.collective_matmul"), std::string::npos);
  // plan.xla alone makes a JAX-style plan, which needs a mesh.
  const Result<Experiment> d = Load(1, "  xla: {async_collectives: false}\n  global_batch: 8\n");
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error().key, "plan.mesh");
}

int RingShifts(const Program& p) {
  int n = 0;
  for (const Comm& c : p.comms()) n += c.op == CommOp::kRingShift;
  return n;
}

// Collective matmul is the decomposition of plan.tp_comm_overlap run bidirectionally
// (tp_overlap.cc): the same collectives but each ring shift split into two of half the
// bytes, one each way round the TP ring; on the GPUs' NVLink switch both halves share each
// GPU's ports. The explicit plan runs Transformer Engine's chunk GEMMs on two streams at
// once (GemmShape::streams), XLA's run one at a time, so the JAX plan is a little slower:
// within 1 % here, never faster.
TEST(JaxXla, CollectiveMatmulEqualsTpCommOverlap) {
  const Result<Experiment> jax = Load(2, kMegatronRules + "  xla: {collective_matmul: true}\n");
  const Result<Experiment> torch = Load(2,
                                        "  tp: 2\n  pp: 4\n  dp: 2\n  sequence_parallel: true\n"
                                        "  tp_comm_overlap: true\n  global_batch: 32\n");
  ASSERT_TRUE(jax.ok() && torch.ok());
  const auto a = Simulate(jax.value());
  const auto b = Simulate(torch.value());
  EXPECT_EQ(RingShifts(a->program), 2 * RingShifts(b->program));
  EXPECT_EQ(a->program.comms().size() - RingShifts(a->program),
            b->program.comms().size() - RingShifts(b->program));
  const double ratio = a->replay.step_time.seconds() / b->replay.step_time.seconds();
  EXPECT_GE(ratio, 1.0);
  EXPECT_LT(ratio, 1.01);
  // Off, the all-gathers and reduce-scatters are whole; on, ring steps (ring shifts).
  const auto plain = Simulate(Load(2, kMegatronRules).value());
  EXPECT_EQ(RingShifts(plain->program), 0);
  EXPECT_GT(RingShifts(a->program), 0);
}

// Every collective takes exactly 100 us; pipeline transfers are free.
class FixedTimeNetwork final : public Network {
 public:
  void Start(Simulator& sim, CommOp op, std::span<const int>, double, std::function<void()> done,
             std::span<const std::vector<int>>) override {
    const bool p2p = op == CommOp::kSendRecv;
    sim.Schedule(p2p ? SimTime::Zero() : SimTime::Microseconds(100), std::move(done));
  }
  std::vector<LinkUsage> Usage(double) const override { return {}; }
  double IntraNodeBytes() const override { return 0; }
  double InterNodeBytes() const override { return 0; }
};

Models FixedModels() {
  return Models{std::make_unique<testing::FlopsOnlyComputeModel>(),
                std::make_unique<FixedTimeNetwork>()};
}

// The collectives rank 0 takes part in.
int CollectivesOfRankZero(const Program& p) {
  int n = 0;
  for (const Op& op : p.ops()) n += op.rank == 0 && op.kind == OpKind::kComm;
  return n;
}

// Hand check: with async collectives off, nothing overlaps a collective, so on a
// symmetric plan (DP 2 x TP 2, one node, no pipeline) the step takes the compute time
// (the same plan on a free network) plus 100 us for each of rank 0's collectives. On,
// some of them (DP buckets, ZeRO gathers) hide behind compute: never slower.
TEST(JaxXla, AsyncOffAddsEveryCollectiveToTheStep) {
  const std::string plan =
      "  mesh: {axes: [data, tensor], ici: [4, 2]}\n"
      "  rules: {batch: data, embed: data, sequence: tensor, heads: tensor, mlp: tensor,\n"
      "          vocab: tensor}\n"
      "  global_batch: 8\n";
  const Experiment on = Load(1, plan).value();
  const Experiment off = Load(1, plan + "  xla: {async_collectives: false}\n").value();
  const auto free_run = Simulate(off, {}, testing::FakeModels());
  const auto on_run = Simulate(on, {}, FixedModels());
  const auto off_run = Simulate(off, {}, FixedModels());
  ASSERT_TRUE(free_run->replay.completed && on_run->replay.completed && off_run->replay.completed);
  const int n = CollectivesOfRankZero(off_run->program);
  EXPECT_GT(n, 0);
  const double compute_s = free_run->replay.step_time.seconds();
  EXPECT_NEAR(off_run->replay.step_time.seconds(), compute_s + n * 100e-6, 1e-9);
  EXPECT_LT(on_run->replay.step_time.seconds(), off_run->replay.step_time.seconds());
  EXPECT_GE(on_run->replay.step_time.seconds(), compute_s);
}

// Off is never faster on the real models either, with a pipeline (whose sends stay
// asynchronous) and FSDP.
TEST(JaxXla, AsyncOffIsNeverFasterWithAPipeline) {
  const Experiment on = Load(2, kMegatronRules).value();
  const Experiment off = Load(2, kMegatronRules + "  xla: {async_collectives: false}\n").value();
  const auto a = Simulate(on);
  const auto b = Simulate(off);
  ASSERT_TRUE(a->replay.completed && b->replay.completed);
  EXPECT_GE(b->replay.step_time.seconds(), a->replay.step_time.seconds());
}

// ---- the layer-pipelined stage axis under each schedule ----

TEST(JaxStage, StageAxisRunsEverySchedule) {
  for (const std::string schedule : {"gpipe", "1f1b", "interleaved"}) {
    const std::string v = schedule == "interleaved" ? "  virtual_stages: 2\n" : "";
    const Result<Experiment> jax = Load(2, kMegatronRules + "  schedule: " + schedule + "\n" + v);
    const Result<Experiment> torch = Load(2,
                                          "  tp: 2\n  pp: 4\n  dp: 2\n  sequence_parallel: true\n"
                                          "  global_batch: 32\n  schedule: " +
                                              schedule + "\n" + v);
    ASSERT_TRUE(jax.ok()) << schedule << ": " << jax.error().ToString();
    ASSERT_TRUE(torch.ok()) << schedule << ": " << torch.error().ToString();
    EXPECT_EQ(jax.value().plan.pp, 4);  // stage 2 (ICI) x 2 (DCN)
    const auto a = Simulate(jax.value());
    const auto b = Simulate(torch.value());
    // The same step, but for Megatron-Core's dense embedding gradient (filled and added to
    // the main gradient each micro-batch: StepBuilder::EmbeddingGradBytes), which the
    // torch plan runs and the JAX-style one does not: apart by at most its embedding
    // backward ops (either way: a longer embedding backward also moves the interleaved
    // schedule's gradient reductions).
    SimTime embedding_bwd = SimTime::Zero();
    for (OpId id : b->program.StreamOps(0, Stream::kCompute)) {
      if (b->program.op(id).tag == Tag::kEmbeddingBwd) {
        embedding_bwd = embedding_bwd + (b->replay.end[id] - b->replay.start[id]);
      }
    }
    const SimTime apart = b->replay.step_time > a->replay.step_time
                              ? b->replay.step_time - a->replay.step_time
                              : a->replay.step_time - b->replay.step_time;
    EXPECT_GT(embedding_bwd, SimTime::Zero()) << schedule;
    EXPECT_LE(apart, embedding_bwd) << schedule;
  }
}

// ---- mesh sizes as sweep axes ----

// 2 nodes x 4 GPUs, axes [data, tensor].
JaxPlan DataTensor() {
  JaxPlan j;
  j.axes = {{"data", 1, 1}, {"tensor", 1, 1}};
  return j;
}

ClusterSpec Nodes(int nodes, int gpus_per_node) {
  ClusterSpec c = testing::OneNode(gpus_per_node);
  c.nodes = nodes;
  return c;
}

TEST(MeshSizes, KeysNameAnAxisAndAKind) {
  const JaxPlan j = DataTensor();
  EXPECT_TRUE(IsMeshSizeKey("plan.mesh.ici.data"));
  EXPECT_FALSE(IsMeshSizeKey("plan.mesh.ici."));
  EXPECT_FALSE(IsMeshSizeKey("plan.mesh.axes"));
  const auto k = ParseMeshSizeKey("plan.mesh.dcn.tensor", j);
  ASSERT_TRUE(k.has_value());
  EXPECT_EQ(std::tie(k->axis, k->dcn), std::make_tuple(1, true));
  EXPECT_FALSE(ParseMeshSizeKey("plan.mesh.ici.fsdp", j).has_value());
}

TEST(MeshSizes, AutoEnumeratesIciThenDcnSplits) {
  // ICI: ordered pairs with product 4: (1,4) (2,2) (4,1); DCN: product 2: (1,2) (2,1).
  // 3 x 2 = 6, ICI outside, each first size ascending.
  const std::vector<MeshSizeKey> keys = {{0, false}, {1, false}, {0, true}, {1, true}};
  const std::vector<JaxPlan> all = ExpandMeshSizes(DataTensor(), keys, Nodes(2, 4));
  std::vector<std::string> got;
  for (const JaxPlan& j : all) got.push_back(MeshSizesText(j));
  EXPECT_EQ(got, (std::vector<std::string>{"data 1x1 tensor 4x2", "data 1x2 tensor 4x1",
                                           "data 2x1 tensor 2x2", "data 2x2 tensor 2x1",
                                           "data 4x1 tensor 1x2", "data 4x2 tensor 1x1"}));
}

TEST(MeshSizes, ThreeAxesOnEightChips) {
  // Ordered triples with product 8 = 2^3: C(3 + 2, 2) = 10.
  JaxPlan j = DataTensor();
  j.axes.insert(j.axes.begin(), MeshAxisSpec{"stage", 1, 1});
  const std::vector<MeshSizeKey> keys = {{0, false}, {1, false}, {2, false}};
  EXPECT_EQ(ExpandMeshSizes(j, keys, Nodes(1, 8)).size(), 10u);
  // Fixed sizes that leave a fraction: the plan once, as it is.
  j.axes[2].ici = 3;
  const std::vector<JaxPlan> once = ExpandMeshSizes(j, {{0, false}, {1, false}}, Nodes(1, 8));
  ASSERT_EQ(once.size(), 1u);
  EXPECT_EQ(MeshSizesText(once[0]), "stage 1x1 data 1x1 tensor 3x1");
}

Result<SweepSpec> LoadSweep(const std::string& axes) {
  return LoadSweepText("name: s\nbase: ../experiments/llama2-7b-jax.yaml\naxes:\n" + axes,
                       kSweepPath);
}

// The bundled llama2-7b-jax: stage (ici 2, dcn 2), data 2, tensor 2 on 2 nodes of 8.
TEST(JaxSweep, AutoIciSizesDeriveEachPlan) {
  const Result<SweepSpec> spec =
      LoadSweep("  plan.mesh.ici.data: auto\n  plan.mesh.ici.tensor: auto\n");
  ASSERT_TRUE(spec.ok()) << spec.error().ToString();
  const std::vector<Configuration> configs = Enumerate(spec.value());
  // 8 / stage 2 = 4 for data x tensor: (1,4) (2,2) (4,1).
  ASSERT_EQ(configs.size(), 3u);
  std::vector<std::tuple<int, int, int>> tp_dp_pp;
  for (const Configuration& c : configs) {
    EXPECT_FALSE(c.invalid.has_value());
    tp_dp_pp.emplace_back(c.plan.tp, c.plan.dp, c.plan.pp);
  }
  EXPECT_EQ(tp_dp_pp, (std::vector<std::tuple<int, int, int>>{{4, 1, 4}, {2, 2, 4}, {1, 4, 4}}));
  // results.csv shows the sizes run, auto or not.
  const ResultRow row = MakeResultRow(spec.value(), configs[0], Evaluation{});
  EXPECT_EQ(row.axes, (std::vector<std::string>{"1", "4"}));
}

TEST(JaxSweep, ExplicitSizesAreGroupsAndMisfitsAreInvalid) {
  const Result<SweepSpec> spec =
      LoadSweep("  plan.mesh.ici.tensor: [1, 2, 3]\n  plan.mesh.ici.data: auto\n");
  ASSERT_TRUE(spec.ok()) << spec.error().ToString();
  const std::vector<Configuration> configs = Enumerate(spec.value());
  // One configuration per group: data takes 8 / (2 * tensor) = 4, 2; tensor 3 leaves 8/6.
  ASSERT_EQ(configs.size(), 3u);
  EXPECT_EQ(std::tie(configs[0].plan.tp, configs[0].plan.dp), std::make_tuple(1, 4));
  EXPECT_EQ(std::tie(configs[1].plan.tp, configs[1].plan.dp), std::make_tuple(2, 2));
  ASSERT_TRUE(configs[2].invalid.has_value());
  EXPECT_EQ(configs[2].invalid->key, "plan.mesh");  // 2 x 2 x 3 x 2 = 24, not 16 GPUs
}

TEST(JaxSweep, DcnSplitsThatSplitAGroupAreInvalid) {
  const Result<SweepSpec> spec =
      LoadSweep("  plan.mesh.dcn.stage: auto\n  plan.mesh.dcn.data: auto\n");
  ASSERT_TRUE(spec.ok()) << spec.error().ToString();
  const std::vector<Configuration> configs = Enumerate(spec.value());
  // 2 nodes: (stage 1, data 2), (stage 2, data 1). The first puts data's ranks in ICI and
  // across nodes with stage's ICI ranks between: not one block, invalid.
  ASSERT_EQ(configs.size(), 2u);
  ASSERT_TRUE(configs[0].invalid.has_value());
  EXPECT_EQ(configs[0].invalid->key, "plan.mesh");
  EXPECT_FALSE(configs[1].invalid.has_value());
  EXPECT_EQ(std::tie(configs[1].plan.pp, configs[1].plan.dp), std::make_tuple(4, 2));
}

// A sweep's candidate is placed on the torus by its own mesh, not the base's: on the
// 4x4x8 slice of maxtext/v5p-256-128b-1x (fsdp 16, tensor 8: tensor on z, fsdp on x-y),
// tensor 4 takes x and fsdp 32 y-z (JAX's create_device_mesh, sim/plan/mesh_torus.h).
TEST(JaxSweep, EachCandidateIsPlacedOnTheTorusByItsOwnMesh) {
  const Result<SweepSpec> spec = LoadSweepText(
      "name: s\nbase: ../experiments/maxtext/v5p-256-128b-1x.yaml\naxes:\n"
      "  plan.mesh.ici.tensor: [8, 4]\n  plan.mesh.ici.fsdp: auto\n",
      kSweepPath);
  ASSERT_TRUE(spec.ok()) << spec.error().ToString();
  const std::vector<Configuration> configs = Enumerate(spec.value());
  ASSERT_EQ(configs.size(), 2u);
  using Placement = std::vector<std::pair<int, int>>;  // (dim, size), innermost axis first
  const auto placement = [&](const Configuration& c) {
    Placement out;
    const Experiment e = ConfigurationExperiment(spec.value(), c);
    for (const TorusFactor& f : e.cluster.intra_node.torus.placement) {
      out.emplace_back(f.dim, f.size);
    }
    return out;
  };
  EXPECT_EQ(configs[0].plan.tp, 8);
  // Inside an axis its last dimension varies fastest (listed first): fsdp on x-y is (y, x).
  EXPECT_EQ(placement(configs[0]), (Placement{{2, 8}, {1, 4}, {0, 4}}));  // the base's
  EXPECT_EQ(configs[1].plan.tp, 4);
  EXPECT_EQ(placement(configs[1]), (Placement{{0, 4}, {2, 8}, {1, 4}}));
}

TEST(JaxSweep, TheFingerprintSeesTheMesh) {
  const SweepSpec spec = LoadSweep("  plan.mesh.ici.tensor: [2]\n").value();
  std::vector<Configuration> configs = Enumerate(spec);
  const std::string before = Fingerprint(spec, configs);
  configs[0].plan.jax.axes[0].dcn = 1;  // same degrees would not show it
  EXPECT_NE(Fingerprint(spec, configs), before);
}

TEST(JaxSweep, BadMeshAxesNameTheAxis) {
  const Result<SweepSpec> a = LoadSweep("  plan.mesh.ici.fsdp: [2]\n");
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.error().key, "axes.plan.mesh.ici.fsdp");
  EXPECT_NE(a.error().message.find("stage, data, tensor"), std::string::npos);
  const Result<SweepSpec> b = LoadSweep("  plan.mesh.ici.data: [2, 0]\n");
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.error().key, "axes.plan.mesh.ici.data");
  EXPECT_EQ(b.error().line, 4);
  const Result<SweepSpec> c = LoadSweep("  plan.tp: auto\n");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().key, "axes.plan.tp");
  const Result<SweepSpec> d = LoadSweepText(
      "name: s\nbase: ../experiments/default.yaml\naxes:\n  plan.mesh.ici.x: auto\n", kSweepPath);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error().key, "axes.plan.mesh.ici.x");
}

TEST(JaxSweep, ExplorerDataCarriesTheMeshColumns) {
  const SweepSpec spec =
      LoadSweep("  plan.mesh.ici.data: auto\n  plan.mesh.ici.tensor: auto\n").value();
  ResultTable t;
  t.axis_keys = NonPlanAxisKeys(spec);
  for (const Configuration& c : Enumerate(spec)) {
    Evaluation ev;
    ev.status = ConfigStatus::kOom;
    t.rows.push_back(MakeResultRow(spec, c, ev));
  }
  const nlohmann::ordered_json data = ExplorerData(t, "t", "s");
  ASSERT_TRUE(data.contains("mesh_dims"));
  EXPECT_EQ(data["mesh_dims"].dump(),
            R"([["plan.mesh.ici.data","ICI data"],["plan.mesh.ici.tensor","ICI tensor"]])");
  EXPECT_EQ(data["rows"][1]["plan.mesh.ici.data"], "2");
  EXPECT_EQ(data["rows"][1]["tp"], 2);
}

// ---- the planner ----

TEST(JaxPlanner, FourChipsOfOneNode) {
  const std::string model = std::string(MESHSIM_SOURCE_DIR) + "/workloads/models/llama2-7b.yaml";
  const std::string cluster = std::string(MESHSIM_SOURCE_DIR) + "/topologies/dgx-h100.yaml";
  const ClusterSpec c = LoadClusterFile(cluster).value();
  PlannerOptions o;
  o.gpus = 4;
  o.jax = true;
  const Result<Experiment> base =
      ComposeExperiment("plan", model, cluster, PlannerKeys(c, o).value(), "test", {});
  ASSERT_TRUE(base.ok()) << base.error().ToString();
  const PlannerSpace space = MakePlannerSpace(base.value(), 4);
  // ICI (stage, data, tensor) with product 4: C(2 + 2, 2) = 6 with embed []; with embed on
  // data only those with data > 1: (1,2,2) (1,4,1) (2,2,1). 9 in all, one node: no DCN.
  ASSERT_EQ(space.configs.size(), 9u);
  int fsdp = 0;
  for (const Configuration& cfg : space.configs) {
    EXPECT_FALSE(cfg.invalid.has_value()) << MeshSizesText(cfg.plan.jax);
    EXPECT_EQ(cfg.plan.tp * cfg.plan.pp * cfg.plan.dp, 4);
    fsdp += cfg.plan.zero == 3;
  }
  EXPECT_EQ(fsdp, 3);
  const PlannerResult result = RunPlanner(space, 1);
  EXPECT_EQ(result.invalid, 0);
  ASSERT_EQ(result.ranked.size(), 9u);
  // Pure replication of 6.7B parameters (16 B each: 108 GB) cannot fit in 80 GB.
  for (const ResultRow& row : result.table.rows) {
    if (row.plan.tp == 1 && row.plan.pp == 1 && row.plan.zero == 0) {
      EXPECT_EQ(row.status, ConfigStatus::kOom);
    }
  }
  const ResultRow& best = result.table.rows[result.ranked.front()];
  EXPECT_EQ(best.status, ConfigStatus::kOk);
  EXPECT_FALSE(best.plan.jax.Empty());
}

}  // namespace
}  // namespace meshsim

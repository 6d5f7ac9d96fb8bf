// Expert-parallel plans replay one pipeline (expert_mirrors.h): the same step time and
// link bytes as replaying every rank, on the alpha-beta and the flow network.
#include <gtest/gtest.h>

#include "sim/config/loader.h"
#include "sim/engine/expert_mirrors.h"
#include "sim/engine/simulation.h"
#include "sim/report/summary.h"

namespace meshsim {
namespace {

// Mixtral 8x7B cut to 2 layers and 16 micro-batches: dp 32 x ep 8 on four DGX H100
// nodes (EP groups are nodes; each expert-data group spans the four nodes).
Experiment Load(const std::vector<std::string>& sets) {
  std::vector<std::string> all{"model.layers=2", "plan.global_batch=32"};
  all.insert(all.end(), sets.begin(), sets.end());
  Result<Experiment> e = LoadExperimentFile(
      std::string(MESHSIM_SOURCE_DIR) + "/workloads/experiments/mixtral-8x7b-ep8.yaml", all);
  EXPECT_TRUE(e.ok()) << (e.ok() ? "" : e.error().message);
  return e.value();
}

struct Replayed {
  nlohmann::ordered_json summary;
  size_t replayed = 0;
};

Replayed RunOf(const Experiment& e, bool full, const std::vector<int>& traced = {}) {
  SimulationOptions options;
  options.full_replay = full;
  options.memory_curve_ranks = traced;
  const auto sim = Simulate(e, options);
  return {BuildSummary(*sim, SummaryOptions{true}), sim->simulated_ranks.size()};
}

// Step time within `tolerance` (relative; 0: the same bits) and the same bytes on every
// link class, after checking that the default run replayed one pipeline.
void ExpectLikeFullReplay(const Experiment& e, double tolerance) {
  const Replayed symmetric = RunOf(e, false), full = RunOf(e, true);
  const Mesh mesh(e.plan);
  EXPECT_EQ(symmetric.replayed, static_cast<size_t>(mesh.Degree(Axis::kPp)));
  EXPECT_EQ(full.replayed, static_cast<size_t>(mesh.Size()));
  const double a = symmetric.summary["step_time_s"].get<double>();
  const double b = full.summary["step_time_s"].get<double>();
  if (tolerance == 0) {
    EXPECT_EQ(a, b);
  } else {
    EXPECT_NEAR(a, b, tolerance * b);
  }
  const auto& sl = symmetric.summary["links"];
  const auto& fl = full.summary["links"];
  ASSERT_EQ(sl.size(), fl.size());
  for (size_t i = 0; i < sl.size(); ++i) {
    const std::string name = sl[i]["name"].get<std::string>();
    if (name.find("->") != std::string::npos) continue;  // the busiest links: ties differ
    const double x = sl[i]["bytes"].get<double>(), y = fl[i]["bytes"].get<double>();
    EXPECT_NEAR(x, y, 1e-9 * y) << name;
  }
}

TEST(ExpertSymmetry, AlphaBetaMatchesFullReplay) {
  ExpectLikeFullReplay(Load({"cluster.network_model=alpha_beta"}), 0);
}

TEST(ExpertSymmetry, FlowNetworkMatchesFullReplay) {
  ExpectLikeFullReplay(Load({}), 0.005);
  ExpectLikeFullReplay(Load({"cluster.mirror_traffic=full"}), 0.005);
}

// EP folds over TP (Megatron-Core's expert-tensor-parallel 1): with tp 2, dp 4 and ep 4 a
// stage's EP groups are {tp 0-1 of dp 0-1} and {tp 0-1 of dp 2-3}, which no translate
// along dp maps onto each other; two pipeline stages, one node each.
TEST(ExpertSymmetry, FoldedOverTensorParallelMatchesFullReplay) {
  const std::vector<std::string> plan{"plan.tp=2", "plan.pp=2",       "plan.dp=4",
                                      "plan.ep=4", "model.experts=8", "cluster.nodes=2"};
  std::vector<std::string> alpha_beta = plan;
  alpha_beta.push_back("cluster.network_model=alpha_beta");
  ExpectLikeFullReplay(Load(alpha_beta), 0);
  ExpectLikeFullReplay(Load(plan), 0.005);
}

// DeepEP / HybridEP's dispatch (plan.moe_dispatcher flex) with EP groups across two nodes
// (ep 16 of 16 experts on 8-GPU nodes) and with node-limited routing: its mirrors carry
// the same RDMA and NVLink traffic as a full replay's groups.
TEST(ExpertSymmetry, FlexDispatchAcrossNodesMatchesFullReplay) {
  const std::vector<std::string> plan{"plan.moe_dispatcher=flex", "plan.ep=16", "model.experts=16",
                                      "model.moe_router_num_groups=4",
                                      "model.moe_router_group_topk=2"};
  std::vector<std::string> alpha_beta = plan;
  alpha_beta.push_back("cluster.network_model=alpha_beta");
  ExpectLikeFullReplay(Load(alpha_beta), 0);
  ExpectLikeFullReplay(Load(plan), 0.005);
}

// A traced rank in another EP group (9: EP group 8..15, expert-data group 1, 9, 17, 25)
// adds its pipeline; the groups that mirror both replayed groups count once.
TEST(ExpertSymmetry, TracedRanksInOtherExpertGroupsMatchFullReplay) {
  const Experiment e = Load({"cluster.network_model=alpha_beta"});
  const Replayed symmetric = RunOf(e, false, {0, 9}), full = RunOf(e, true, {0, 9});
  EXPECT_EQ(symmetric.replayed, 2u);
  EXPECT_EQ(symmetric.summary["step_time_s"], full.summary["step_time_s"]);
  for (size_t i = 0; i < full.summary["links"].size(); ++i) {
    const double x = symmetric.summary["links"][i]["bytes"].get<double>();
    const double y = full.summary["links"][i]["bytes"].get<double>();
    EXPECT_NEAR(x, y, 1e-9 * y) << i;
  }
}

TEST(ExpertSymmetry, MirrorsAreTheFamilysOtherGroups) {
  PlanSpec p;
  p.tp = 2;
  p.dp = 4;
  p.pp = 2;
  p.ep = 4;
  const Mesh mesh(p);
  std::vector<bool> replayed(mesh.Size(), false);
  for (int r : mesh.Pipeline(0)) replayed[r] = true;
  const std::vector<int> ep = mesh.ExpertGroup(0), edp = mesh.ExpertDataGroup(0);
  EXPECT_EQ(ep, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(edp, (std::vector<int>{0, 4}));
  ASSERT_EQ(FamilyOf(mesh, ep), ExpertFamily::kExpert);
  ASSERT_EQ(FamilyOf(mesh, edp), ExpertFamily::kExpertData);
  EXPECT_EQ(FamilyOf(mesh, mesh.Group(0, Axis::kTp)), ExpertFamily::kNone);
  EXPECT_EQ(ExpertMirrors(mesh, ep, ExpertFamily::kExpert, replayed),
            (std::vector<std::vector<int>>{{4, 5, 6, 7}}));
  EXPECT_EQ(ExpertMirrors(mesh, edp, ExpertFamily::kExpertData, replayed),
            (std::vector<std::vector<int>>{{1, 5}, {2, 6}, {3, 7}}));
  EXPECT_TRUE(ExpertGroupsAlike(mesh, 8));
  EXPECT_TRUE(ExpertGroupsAlike(mesh, 4));
  EXPECT_FALSE(ExpertGroupsAlike(mesh, 6));  // {0..3} on one domain, {4..7} on two
}

// Expert groups that straddle nodes unlike each other (ep 12 on 8-GPU nodes), and any
// what-if, still replay every rank.
TEST(ExpertSymmetry, UnlikeGroupsAndWhatIfsReplayEveryRank) {
  const Experiment straddling =
      Load({"plan.dp=24", "plan.ep=12", "model.experts=24", "cluster.nodes=3",
            "plan.global_batch=24", "cluster.network_model=alpha_beta"});
  EXPECT_TRUE(NeedsFullReplay(straddling, {}));
  EXPECT_EQ(RunOf(straddling, false).replayed, 24u);
  Experiment slow = Load({"cluster.network_model=alpha_beta"});
  EXPECT_FALSE(NeedsFullReplay(slow, {}));
  slow.cluster.what_if.stragglers.push_back({3, 1.5});
  EXPECT_TRUE(NeedsFullReplay(slow, {}));
  EXPECT_EQ(RunOf(slow, false).replayed, 32u);
}

}  // namespace
}  // namespace meshsim

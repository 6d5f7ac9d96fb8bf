// cluster.mirror_traffic: the near mirrors (sim/net/mirror_traffic.h) against all of them.
// The step time stays within the documented 0.5 % of `full` (bit-identical in these cases)
// on small and medium clusters, also with degraded and failed links under the mirrors and
// with a straggler; a mirror that meets replayed traffic only through another mirror is
// simulated; the mirrors that are counted instead keep their bytes in the link statistics.
#include <gtest/gtest.h>

#include "sim/config/loader.h"
#include "sim/engine/simulation.h"
#include "sim/hw/topology.h"
#include "sim/net/flow_collectives.h"
#include "tests/unit/test_fixtures.h"

namespace meshsim {
namespace {

Experiment Load(const std::string& file, std::vector<std::string> sets) {
  Result<Experiment> e =
      LoadExperimentFile(std::string(MESHSIM_SOURCE_DIR) + "/workloads/experiments/" + file, sets);
  EXPECT_TRUE(e.ok()) << e.error().ToString();
  return e.value();
}

struct Step {
  double step_s = 0;
  double inter_bytes = 0, intra_bytes = 0;
  std::vector<LinkUsage> usage;
  int replayed_ranks = 0;
};

// The experiment's step on the flow network with `mirrors`; the network's fabric takes
// `what_if_links` (the replay stays symmetric: what-ifs set on the experiment replay every
// rank, which leaves no mirrors).
Step Run(Experiment e, MirrorTraffic mirrors, const std::vector<LinkChange>& what_if_links = {}) {
  e.cluster.mirror_traffic = mirrors;
  ClusterSpec fabric = e.cluster.NetworkView();
  fabric.what_if.links = what_if_links;
  auto topology = Topology::Build(fabric);
  EXPECT_TRUE(topology.ok()) << topology.error().ToString();
  auto network = std::make_unique<FlowCollectiveNetwork>(fabric, topology.value(),
                                                         NcclOptions{e.plan.allreduce_algorithm});
  const auto sim = Simulate(e, {}, Models{MakeComputeModel(e), std::move(network)});
  Step s;
  s.step_s = sim->replay.step_time.seconds();
  s.inter_bytes = sim->replay.inter_node_bytes;
  s.intra_bytes = sim->replay.intra_node_bytes;
  s.usage = sim->replay.links;
  s.replayed_ranks = static_cast<int>(sim->simulated_ranks.size());
  return s;
}

void ExpectSameStep(const Experiment& e, const std::vector<LinkChange>& what_if_links = {}) {
  const Step near = Run(e, MirrorTraffic::kNear, what_if_links);
  const Step full = Run(e, MirrorTraffic::kFull, what_if_links);
  EXPECT_LT(near.replayed_ranks, e.plan.tp * e.plan.pp * e.plan.dp * e.plan.cp)
      << "the replay should be symmetric";
  EXPECT_NEAR(near.step_s, full.step_s, 0.005 * full.step_s);
  EXPECT_EQ(near.step_s, full.step_s) << "bit-identical on these clusters";
  // Counted mirrors keep their bytes (flows still in flight when the step ends count only
  // up to their last rate change, so the totals agree closely, not to the bit).
  EXPECT_NEAR(near.inter_bytes, full.inter_bytes, 1e-6 * full.inter_bytes);
  EXPECT_NEAR(near.intra_bytes, full.intra_bytes, 1e-6 * full.intra_bytes);
  ASSERT_EQ(near.usage.size(), full.usage.size());
  for (size_t i = 0; i < full.usage.size(); ++i) {
    if (full.usage[i].links == 1) continue;  // single links: tied busiest may swap
    EXPECT_EQ(near.usage[i].name, full.usage[i].name);
    EXPECT_NEAR(near.usage[i].bytes, full.usage[i].bytes, 1e-6 * full.usage[i].bytes)
        << full.usage[i].name;
  }
}

TEST(MirrorTraffic, SameStepOnASmallCluster) {
  ExpectSameStep(Load("default.yaml", {"cluster.nodes=4", "plan.dp=4"}));
}

TEST(MirrorTraffic, SameStepOnAMediumClusterAcrossLeaves) {
  // 32 nodes of 8 GPUs on a 2:1 fat tree of 8 leaves, tp 8, pp 4, dp 8: pipeline sends and
  // data-parallel rings cross leaves and spines, where mirrors share links with the
  // replayed pipeline.
  ExpectSameStep(
      Load("llama2-70b-h100.yaml",
           {"cluster.nodes=32", "plan.dp=8", "plan.pp=4", "plan.global_batch=64",
            "cluster.inter_node.kind=fat_tree", "cluster.inter_node.oversubscription=2"}));
}

TEST(MirrorTraffic, SameStepWithDegradedAndFailedLinksUnderTheMirrors) {
  // 8 nodes on a fat tree of 4 leaves (16 NIC ports each) and 16 spines.
  const Experiment e =
      Load("default.yaml", {"cluster.nodes=8", "plan.dp=8", "cluster.inter_node.kind=fat_tree",
                            "cluster.inter_node.switch_ports=16"});
  LinkChange degraded;
  degraded.link = "node1.nic2";
  degraded.bandwidth_factor = 0.5;
  LinkChange failed;
  failed.link = "leaf0.spine0";
  failed.failed = true;
  ExpectSameStep(e, {degraded});
  ExpectSameStep(e, {degraded, failed});
}

TEST(MirrorTraffic, StragglersReplayEveryRankAndLeaveNothingToCull) {
  Experiment e = Load("default.yaml", {"cluster.nodes=4", "plan.dp=4"});
  e.cluster.what_if.stragglers.push_back({5, 1.3});
  e.cluster.mirror_traffic = MirrorTraffic::kNear;
  const double near = Simulate(e)->replay.step_time.seconds();
  e.cluster.mirror_traffic = MirrorTraffic::kFull;
  EXPECT_EQ(near, Simulate(e)->replay.step_time.seconds());
}

// Six one-GPU nodes, one NIC each, two per leaf. Replayed: a sendrecv 0 -> 1 (leaf0).
// Mirrors: A = 2 -> 1 shares 1's NIC downlink with it; B = 2 -> 3 shares only 2's NIC
// (degraded to half) with A; C = 4 -> 5 shares nothing. B slows A on 2's NIC, which leaves
// the replayed transfer more of 1's downlink: B matters, through A, and near simulates it;
// C is counted.
class ChainOfMirrors : public ::testing::Test {
 protected:
  static ClusterSpec Fabric(MirrorTraffic mirrors) {
    ClusterSpec c = testing::OneNode(1);
    c.nodes = 6;
    c.inter_node.kind = InterNodeKind::kFatTree;
    c.inter_node.nics_per_node = 1;
    c.inter_node.switch_ports = 2;
    LinkChange half;
    half.link = "node2.nic0";
    half.bandwidth_factor = 0.5;
    c.what_if.links = {half};
    c.mirror_traffic = mirrors;
    return c;
  }
  // When the replayed transfer ends (the network then runs until every mirror has ended).
  static double SendSeconds(FlowCollectiveNetwork& net, std::vector<std::vector<int>> mirrors) {
    Simulator sim;
    double done_s = -1;
    const std::vector<int> replayed{0, 1};
    net.Start(
        sim, CommOp::kSendRecv, replayed, 1e9, [&] { done_s = sim.Now().seconds(); }, mirrors);
    sim.Run();
    return done_s;
  }
  static std::unique_ptr<FlowCollectiveNetwork> Network(MirrorTraffic mirrors) {
    const ClusterSpec c = Fabric(mirrors);
    return std::make_unique<FlowCollectiveNetwork>(c, Topology::Build(c).value(),
                                                   NcclOptions{AllReduceAlgorithm::kRing});
  }
};

TEST_F(ChainOfMirrors, AMirrorReachedThroughAnotherIsSimulated) {
  const std::vector<std::vector<int>> a{{2, 1}}, ab{{2, 1}, {2, 3}}, abc{{2, 1}, {2, 3}, {4, 5}};
  const double with_a = SendSeconds(*Network(MirrorTraffic::kFull), a);
  const double with_ab = SendSeconds(*Network(MirrorTraffic::kFull), ab);
  ASSERT_LT(with_ab, 0.9 * with_a) << "B should matter to the replayed transfer";
  EXPECT_EQ(SendSeconds(*Network(MirrorTraffic::kNear), ab), with_ab);
  EXPECT_EQ(SendSeconds(*Network(MirrorTraffic::kNear), abc), with_ab);
}

TEST_F(ChainOfMirrors, CountedMirrorsKeepTheirBytesOffTheFlowNetwork) {
  const std::vector<std::vector<int>> abc{{2, 1}, {2, 3}, {4, 5}};
  auto near = Network(MirrorTraffic::kNear);
  auto full = Network(MirrorTraffic::kFull);
  const double step_s = SendSeconds(*full, abc);
  SendSeconds(*near, abc);
  double simulated_near = 0, simulated_full = 0;
  for (size_t l = 0; l < near->flows().topology().links().size(); ++l) {
    simulated_near += near->flows().LinkBytes(static_cast<int>(l));
    simulated_full += full->flows().LinkBytes(static_cast<int>(l));
  }
  EXPECT_LT(simulated_near, simulated_full) << "C should be counted, not simulated";
  EXPECT_DOUBLE_EQ(near->InterNodeBytes(), full->InterNodeBytes());
  EXPECT_DOUBLE_EQ(near->IntraNodeBytes(), full->IntraNodeBytes());
  const auto un = near->Usage(step_s), uf = full->Usage(step_s);
  ASSERT_EQ(un.size(), uf.size());
  for (size_t i = 0; i < uf.size(); ++i) {
    if (uf[i].links == 1) continue;
    EXPECT_DOUBLE_EQ(un[i].bytes, uf[i].bytes) << uf[i].name;
  }
}

}  // namespace
}  // namespace meshsim

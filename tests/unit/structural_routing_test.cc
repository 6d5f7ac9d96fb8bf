// Structural hop counts (no link failed) against breadth-first searches over the whole
// graph: the same hop count from every vertex to every GPU, hence the same routes, on
// every kind of fabric and node, with NICs shared by GPUs and nodes straddling leaves;
// and the same step on a small experiment simulated both ways.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "sim/config/loader.h"
#include "sim/engine/resource_estimate.h"
#include "sim/engine/simulation.h"
#include "sim/hw/topology.h"
#include "sim/net/flow_collectives.h"
#include "tests/unit/test_fixtures.h"

namespace meshsim {
namespace {

ClusterSpec Fabric(InterNodeKind kind, IntraNodeKind intra, int nodes, int gpus, int nics,
                   int ports) {
  ClusterSpec c = testing::OneNode(gpus);
  c.nodes = nodes;
  c.intra_node.kind = intra;
  c.inter_node.kind = kind;
  c.inter_node.nics_per_node = nics;
  c.inter_node.switch_ports = ports;
  c.inter_node.oversubscription = 2.0;
  return c;
}

// Every vertex to every GPU, and every GPU pair's route under a few flow keys.
void ExpectSameAsSearches(const ClusterSpec& c) {
  auto structural = Topology::Build(c).value();
  auto searched = Topology::Build(c, /*searches=*/true).value();
  ASSERT_TRUE(structural->Structural());
  ASSERT_FALSE(searched->Structural());
  ASSERT_EQ(structural->Vertices(), searched->Vertices());
  for (int dst = 0; dst < c.TotalGpus(); ++dst) {
    for (int v = 0; v < structural->Vertices(); ++v) {
      ASSERT_EQ(structural->Hops(v, dst), searched->Hops(v, dst))
          << structural->VertexName(v) << " -> GPU " << dst;
    }
    for (int src = 0; src < c.TotalGpus(); ++src) {
      if (src == dst) continue;
      for (uint64_t key : {0ull, 1ull, 77ull}) {
        ASSERT_EQ(structural->Route(src, dst, key), searched->Route(src, dst, key))
            << src << " -> " << dst << " key " << key;
      }
    }
  }
}

TEST(StructuralRouting, FatTreeNvswitchNodesStraddlingLeaves) {
  // 8 NICs per node, 12 ports per leaf: node 1's NICs sit on leaves 0 and 1.
  ExpectSameAsSearches(Fabric(InterNodeKind::kFatTree, IntraNodeKind::kNvswitch, 5, 8, 8, 12));
}

TEST(StructuralRouting, FatTreeNicsSharedByGpus) {
  // 4 NICs for 8 GPUs: GPUs sharing a NIC are two hops apart both ways (ties).
  ExpectSameAsSearches(Fabric(InterNodeKind::kFatTree, IntraNodeKind::kNvswitch, 4, 8, 4, 4));
}

TEST(StructuralRouting, RailOptimizedAndSingleSwitch) {
  ExpectSameAsSearches(Fabric(InterNodeKind::kRailOptimized, IntraNodeKind::kNvswitch, 6, 4, 4, 4));
  ExpectSameAsSearches(Fabric(InterNodeKind::kSingleSwitch, IntraNodeKind::kNvswitch, 3, 4, 2, 8));
}

// InfiniBand's d-mod-k routing numbers destinations by their leaf port: from one rail
// switch, the same rail's GPUs on 4 nodes of the other group (ports 0-3 of their rail
// switch) take 4 different spines. Numbered by GPU (8, 10, 12, 14 mod 4 spines) they
// would share 2 of them: on a rail every destination has the same local rank.
TEST(StructuralRouting, RailDestinationsSpreadOverTheSpines) {
  ClusterSpec c = Fabric(InterNodeKind::kRailOptimized, IntraNodeKind::kNvswitch, 8, 2, 2, 4);
  c.inter_node.oversubscription = 1.0;  // 4 spines
  auto t = Topology::Build(c).value();
  std::set<std::string> spines;
  for (int node = 4; node < 8; ++node) {
    for (int id : t->Route(0, 2 * node, 0)) {
      const std::string name = t->VertexName(t->links()[id].dst);
      if (name.starts_with("spine")) spines.insert(name);
    }
  }
  EXPECT_EQ(spines.size(), 4u);
}

TEST(StructuralRouting, RingAndFullMeshNodes) {
  // A ring of 8 with 2 NICs: some GPUs are closer through the NIC than around the ring.
  ExpectSameAsSearches(Fabric(InterNodeKind::kFatTree, IntraNodeKind::kRing, 4, 8, 2, 4));
  ExpectSameAsSearches(Fabric(InterNodeKind::kRailOptimized, IntraNodeKind::kRing, 3, 2, 2, 2));
  ExpectSameAsSearches(Fabric(InterNodeKind::kFatTree, IntraNodeKind::kFullMesh, 3, 4, 4, 4));
  ExpectSameAsSearches(testing::OneNode(8));
}

TEST(StructuralRouting, TwoNicsPerGpu) {
  // 8 NICs for 4 GPUs (GPU l owns NICs 2l, 2l+1): a GPU reaches another node through
  // either of its NICs (ties), on leaves of 6 ports that nodes straddle, and on rails.
  ExpectSameAsSearches(Fabric(InterNodeKind::kFatTree, IntraNodeKind::kNvswitch, 3, 4, 8, 6));
  ExpectSameAsSearches(Fabric(InterNodeKind::kRailOptimized, IntraNodeKind::kNvswitch, 3, 4, 8, 2));
}

TEST(StructuralRouting, OneLeafWithoutSpines) {
  ExpectSameAsSearches(Fabric(InterNodeKind::kFatTree, IntraNodeKind::kNvswitch, 2, 8, 8, 16));
}

TEST(StructuralRouting, CountMatchesTheBuiltGraph) {
  for (const ClusterSpec& c :
       {Fabric(InterNodeKind::kFatTree, IntraNodeKind::kNvswitch, 5, 8, 8, 12),
        Fabric(InterNodeKind::kRailOptimized, IntraNodeKind::kRing, 3, 8, 4, 2),
        Fabric(InterNodeKind::kSingleSwitch, IntraNodeKind::kFullMesh, 3, 4, 2, 8),
        Fabric(InterNodeKind::kFatTree, IntraNodeKind::kNvswitch, 3, 4, 8, 6),
        testing::OneNode(8)}) {
    auto t = Topology::Build(c).value();
    int64_t vertices = 0, links = 0;
    Topology::Count(c, &vertices, &links);
    EXPECT_EQ(vertices, t->Vertices());
    EXPECT_EQ(links, static_cast<int64_t>(t->links().size()));
  }
}

// A bundled experiment's step on the structural fabric and on searches: the same bits,
// also with a degraded link (bandwidth only: still structural) and a straggler.
TEST(StructuralRouting, SameStepAsSearches) {
  Result<Experiment> loaded =
      LoadExperimentFile(std::string(MESHSIM_SOURCE_DIR) + "/workloads/experiments/default.yaml",
                         {"cluster.nodes=4", "plan.dp=4", "cluster.network_model=flow",
                          "cluster.what_if.links=[{link: node1.nic2, bandwidth_factor: 0.5}]",
                          "cluster.what_if.stragglers=[{gpu: 5, slowdown: 1.1}]"});
  ASSERT_TRUE(loaded.ok()) << loaded.error().ToString();
  const Experiment& e = loaded.value();
  auto step = [&](bool searches) {
    Models m{MakeComputeModel(e), std::make_unique<FlowCollectiveNetwork>(
                                      e.cluster, Topology::Build(e.cluster, searches).value(),
                                      NcclOptions{e.plan.allreduce_algorithm})};
    return Simulate(e, {}, std::move(m))->replay.step_time.seconds();
  };
  EXPECT_EQ(step(false), step(true));
}

}  // namespace
}  // namespace meshsim

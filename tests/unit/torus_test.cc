// TPU slices (intra_node.kind torus): decoding, the ICI links and dimension-order routes
// of sim/hw/topology, the torus collectives (sim/net/torus_collectives) in both network
// models against their closed forms, mesh axes placed on torus dimensions
// (sim/plan/mesh_torus), and the bundled MaxText v5p experiment end to end.
//
// Clusters: one slice of 4x4x4 chips (or as stated), ICI links of 100 GB/s per direction
// x network efficiency 0.85 = kIci = 85e9 B/s, 1 us per hop. B = 2^30 bytes.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "sim/config/loader.h"
#include "sim/engine/simulation.h"
#include "sim/hw/topology.h"
#include "sim/net/alpha_beta.h"
#include "sim/net/torus_collectives.h"
#include "sim/plan/mesh_torus.h"
#include "sim/report/step_summary.h"
#include "tests/unit/test_fixtures.h"

namespace meshsim {
namespace {

constexpr double kB = 1 << 30, kIci = 85e9, kHop = 1e-6;

ClusterSpec Slice(std::vector<int> dims, bool wrap = true, int slices = 1) {
  ClusterSpec c = testing::OneNode(1);
  c.intra_node.kind = IntraNodeKind::kTorus;
  c.intra_node.torus.dims = dims;
  c.intra_node.torus.wraparound.assign(dims.size(), wrap);
  c.intra_node.gbps_per_link = 100;
  c.intra_node.latency_us = 1;
  c.gpus_per_node = static_cast<int>(c.intra_node.torus.Chips());
  c.nodes = slices;
  c.inter_node.nics_per_node = c.gpus_per_node / 4;
  c.inter_node.gbps_per_nic = 25;
  c.inter_node.latency_us = 10;
  c.efficiency.network = 0.85;
  c.efficiency.nic = 0.85;
  return c;
}

int IciLinks(const Topology& t) {
  int n = 0;
  for (const Link& l : t.links()) n += l.cls == LinkClass::kIci;
  return n;
}

// 4x4x4 with wrap-around: every chip has 6 neighbours, 64 x 6 / 2 = 192 links, 384
// directed. Without: 3 dimensions x 16 lines x 3 links = 144, 288 directed. 2x2x2: each
// dimension of 2 has one link per line (no wrap-around): 3 x 4 x 1 = 12, 24 directed.
TEST(Torus, LinkCountsMatchTheHandCount) {
  for (const auto& [dims, wrap, directed] : std::vector<std::tuple<std::vector<int>, bool, int>>{
           {{4, 4, 4}, true, 384}, {{4, 4, 4}, false, 288}, {{2, 2, 2}, true, 24}}) {
    const ClusterSpec c = Slice(dims, wrap);
    const auto t = Topology::Build(c);
    ASSERT_TRUE(t.ok());
    EXPECT_EQ(IciLinks(*t.value()), directed);
    int64_t vertices = 0, links = 0;
    Topology::Count(c, &vertices, &links);
    EXPECT_EQ(links, directed);
    EXPECT_EQ(vertices, c.gpus_per_node);
  }
}

// Chip 0 = (0,0,0) to chip 27 = (3,2,1): x the short way, -1 over the wrap-around link
// (named after chip 3, the ring's last), then y +2 (a tie on a ring of 4: the + way), then
// z +1.
TEST(Torus, RoutesAreDimensionOrderAndShortestRoundEachRing) {
  const auto t = Topology::Build(Slice({4, 4, 4})).value();
  const std::vector<int>& route = t->Route(0, 27, 0);
  std::vector<std::string> names;
  for (int l : route) names.push_back(t->LinkName(l));
  EXPECT_EQ(names, (std::vector<std::string>{"slice0.chip3.x+", "slice0.chip3.y+",
                                             "slice0.chip7.y+", "slice0.chip11.z+"}));
  EXPECT_EQ(t->VertexName(t->links()[route.back()].dst), "slice0.chip27");
  EXPECT_EQ(t->Hops(0, 27), 4);
  // Without wrap-around x runs the long way: 3 hops.
  const auto mesh = Topology::Build(Slice({4, 4, 4}, false)).value();
  EXPECT_EQ(mesh->Route(0, 27, 0).size(), 6u);
}

// Structural routes (coordinates inside a slice, the NIC tables across slices) are as
// short as breadth-first searches over the graph, for every pair of chips of two 4x2x2
// slices (4 NICs each, all on one leaf).
TEST(Torus, StructuralRoutesAreShortest) {
  const ClusterSpec c = Slice({4, 2, 2}, true, 2);
  const auto structural = Topology::Build(c).value();
  const auto searched = Topology::Build(c, /*searches=*/true).value();
  ASSERT_TRUE(structural->Structural());
  for (int a = 0; a < structural->Gpus(); ++a) {
    for (int b = 0; b < structural->Gpus(); ++b) {
      if (a == b) continue;
      EXPECT_EQ(structural->Route(a, b, 0).size(), searched->Route(a, b, 0).size())
          << a << " " << b;
      EXPECT_EQ(structural->Hops(a, b), searched->Hops(a, b)) << a << " " << b;
    }
  }
}

// A failed ICI link: routes go round it (breadth-first over the surviving links).
TEST(Torus, WhatIfNamesAndFailsIciLinks) {
  ClusterSpec c = Slice({4, 4, 4});
  c.what_if.links.push_back({"slice0.chip0.x+", 1.0, true});
  const auto t = Topology::Build(c);
  ASSERT_TRUE(t.ok()) << t.error().ToString();
  EXPECT_EQ(t.value()->Route(0, 1, 0).size(), 3u);  // round via y (or x the long way)
  c.what_if.links[0].link = "slice0.chip0.w+";
  EXPECT_FALSE(Topology::Build(c).ok());
}

double TimeOf(const ClusterSpec& c, NetworkModelKind kind, CommOp op, const std::vector<int>& gpus,
              double bytes, const std::vector<std::vector<int>>& mirrors = {}) {
  Experiment e;
  e.cluster = c;
  e.cluster.network_model = kind;
  auto net = MakeNetwork(e);
  EXPECT_TRUE(net.ok());
  Simulator sim;
  double end = -1;
  net.value()->Start(
      sim, op, gpus, bytes, [&] { end = sim.Now().seconds(); }, mirrors);
  sim.Run();
  return end;
}

std::vector<int> Range(int first, int count, int stride = 1) {
  std::vector<int> v;
  for (int i = 0; i < count; ++i) v.push_back(first + i * stride);
  return v;
}

// The bidirectional ring along x (4 chips, wrap-around): 2(n-1)/n B / (2 kIci) + 2(n-1)
// hops = 1.5 x 1073741824 / 170e9 + 6 us = 9.474193 ms + 6 us = 9.480193 ms. The same
// group on a 4x4x4 mesh (no wrap-around) is a line: 1.5 B / kIci + 6 us = 18.954385 ms.
TEST(Torus, AllReduceAlongOneDimensionIsTheBidirectionalRingClosedForm) {
  for (const NetworkModelKind kind : {NetworkModelKind::kAlphaBeta, NetworkModelKind::kFlow}) {
    const double ring = TimeOf(Slice({4, 4, 4}), kind, CommOp::kAllReduce, Range(0, 4), kB);
    EXPECT_NEAR(ring, 0.009480192564705882, 1e-9);
    EXPECT_NEAR(ring, 2.0 * 3 / 4 * kB / (2 * kIci) + 6 * kHop, 1e-9);
    const double line = TimeOf(Slice({4, 4, 4}, false), kind, CommOp::kAllReduce, Range(0, 4), kB);
    EXPECT_NEAR(line, 0.018954385129411764, 1e-9);
  }
}

// The x-y plane (16 chips, both rings): reduce-scatter along x (3/4 B / (2 kIci) + 3 us),
// along y on quarters (3/4 B/4 / (2 kIci) + 3 us), all-gather back: 15/16 B / kIci + 12 us
// = 11.842741 ms + 12 us = 11.854741 ms. The whole cube (64 chips) adds z on sixteenths:
// (15/16 + 3/64) B / kIci + 18 us = 12.435 ms + 18 us = 12.453 ms (63/64 B / kIci).
TEST(Torus, AllReduceAcrossDimensionsIsTheMultiDimensionalClosedForm) {
  for (const NetworkModelKind kind : {NetworkModelKind::kAlphaBeta, NetworkModelKind::kFlow}) {
    const double plane = TimeOf(Slice({4, 4, 4}), kind, CommOp::kAllReduce, Range(0, 16), kB);
    EXPECT_NEAR(plane, 0.011854740705882353, 1e-9);
    const double cube = TimeOf(Slice({4, 4, 4}), kind, CommOp::kAllReduce, Range(0, 64), kB);
    EXPECT_NEAR(cube, 63.0 / 64 * kB / kIci + 18 * kHop, 1e-9);
  }
}

// The two models agree within 2 % on an all-reduce over the y-z plane placed by a mesh
// (ranks 0, 4, 8, ... on a placed slice), and on one across two slices (DCN ring between
// the x rings' reduce-scatter and all-gather).
TEST(Torus, AlphaBetaAndFlowModelsAgree) {
  ClusterSpec c = Slice({4, 4, 4}, true, 2);
  c.intra_node.torus.placement = PlaceAxesOnTorus({4, 4, 4}, {4, 16});
  for (const std::vector<int>& group :
       {Range(0, 16, 4), std::vector<int>{0, 1, 2, 3, 64, 65, 66, 67}}) {
    const double ab = TimeOf(c, NetworkModelKind::kAlphaBeta, CommOp::kAllReduce, group, kB);
    const double flow = TimeOf(c, NetworkModelKind::kFlow, CommOp::kAllReduce, group, kB);
    EXPECT_NEAR(flow / ab, 1.0, 0.02) << ab << " " << flow;
  }
}

// A ring of 8 chips split as (pairs 4 apart, 4 such pairs): each pair's 2 members are 4
// hops apart (both ways the + way: a tie), and the 4 pairs share every + link. Alpha-beta:
// a line of 2 at b / 4 with 4 hops a step: 2 x (B/2 x 4 / kIci + 4 us) = 4 B / kIci + 8 us
// = 50.529 ms + 8 us = 50.537 ms. The flow model gets the same with the other 3 pairs as mirrors.
TEST(Torus, InterleavedGroupsShareTheirLinks) {
  const ClusterSpec c = Slice({8});
  const std::vector<std::vector<int>> others = {{1, 5}, {2, 6}, {3, 7}};
  const double expected = 4 * kB / kIci + 8 * kHop;
  EXPECT_NEAR(expected, 0.050537027, 1e-9);
  EXPECT_NEAR(TimeOf(c, NetworkModelKind::kAlphaBeta, CommOp::kAllReduce, {0, 4}, kB), expected,
              1e-9);
  EXPECT_NEAR(TimeOf(c, NetworkModelKind::kFlow, CommOp::kAllReduce, {0, 4}, kB, others), expected,
              1e-9);
  const TorusGroup g = LocateTorusGroup(c, std::vector<int>{0, 4});
  EXPECT_EQ(g.stages[0].stride, 4);
  EXPECT_FALSE(g.stages[0].ring);
}

// Across two slices: reduce-scatter along the x ring (3/4 B / (2 kIci) + 3 us), a DCN
// ring of the quarter-shards (2 slices: B/4 per chip over the DCN share of a chip, 16 NICs
// of 25 GB/s x 0.85 for 64 chips = 5.3125e9 B/s, plus 2 steps of 10 us), all-gather back:
// 9.480193 ms + 50.529027 ms + 20 us = 60.029220 ms.
TEST(Torus, AllReduceAcrossSlicesIsHierarchical) {
  const ClusterSpec c = Slice({4, 4, 4}, true, 2);
  const std::vector<int> group = {0, 1, 2, 3, 64, 65, 66, 67};
  EXPECT_NEAR(TimeOf(c, NetworkModelKind::kAlphaBeta, CommOp::kAllReduce, group, kB),
              0.06002921957647059, 1e-9);
}

// XLA's bidirectional collective matmul step (tp_overlap.cc): a ring shift over a TP ring
// of 16 chips along z of a 4x8x16 slice and one over the same ring in reverse order, at
// once. Each chip sends B to its + neighbour and B to its - neighbour over the wrap-around
// ring: no directed link carries two transfers, so both end after B / kIci + 1 hop =
// 12.633257 ms, as one shift alone (flow model). Alpha-beta prices each alone the same.
TEST(Torus, RingShiftsBothWaysRoundARingShareNoLink) {
  const ClusterSpec c = Slice({4, 8, 16});
  std::vector<int> ring;
  for (int z = 0; z < 16; ++z)
    ring.push_back(static_cast<int>(c.intra_node.torus.ChipAt({0, 0, z})));
  const std::vector<int> back(ring.rbegin(), ring.rend());
  const double expected = kB / kIci + kHop;
  EXPECT_NEAR(expected, 0.012633257, 1e-9);
  Experiment e;
  e.cluster = c;
  e.cluster.network_model = NetworkModelKind::kFlow;
  auto net = MakeNetwork(e);
  ASSERT_TRUE(net.ok());
  Simulator sim;
  double ends[2] = {-1, -1};
  net.value()->Start(sim, CommOp::kRingShift, ring, kB, [&] { ends[0] = sim.Now().seconds(); }, {});
  net.value()->Start(sim, CommOp::kRingShift, back, kB, [&] { ends[1] = sim.Now().seconds(); }, {});
  sim.Run();
  EXPECT_NEAR(ends[0], expected, 1e-9);
  EXPECT_NEAR(ends[1], expected, 1e-9);
  EXPECT_NEAR(TimeOf(c, NetworkModelKind::kAlphaBeta, CommOp::kRingShift, back, kB), expected,
              1e-9);
}

// The group analysis: 4 consecutive ranks of the identity placement are an x ring; 2 of a
// 4-wide dimension a line.
TEST(Torus, LocatesGroupsOnTheTorus) {
  const ClusterSpec c = Slice({4, 4, 4});
  const TorusGroup x = LocateTorusGroup(c, Range(0, 4));
  ASSERT_EQ(x.stages.size(), 1u);
  EXPECT_TRUE(x.grid);
  EXPECT_EQ(x.stages[0].dim, 0);
  EXPECT_TRUE(x.stages[0].ring);
  const TorusGroup pair = LocateTorusGroup(c, std::vector<int>{0, 1});
  EXPECT_FALSE(pair.stages[0].ring);
}

// jax.experimental.mesh_utils.create_device_mesh's assignment, innermost axis first:
// (fsdp 16, tensor 4) on 4x4x4: tensor on x, fsdp on (y, z), z fastest inside it;
// (data 16, tensor 8) on 4x4x8: tensor on z; (2, 32) on 4x4x4: no whole dimension of 2,
// so tensor takes half of x and the rest of x, y and z go to the other axis.
TEST(Torus, MeshAxesArePlacedAsCreateDeviceMeshPlacesThem) {
  auto same = [](const std::vector<TorusFactor>& got, const std::vector<TorusFactor>& want) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].dim, want[i].dim) << i;
      EXPECT_EQ(got[i].size, want[i].size) << i;
    }
  };
  same(PlaceAxesOnTorus({4, 4, 4}, {4, 16}), {{0, 4}, {2, 4}, {1, 4}});
  same(PlaceAxesOnTorus({4, 4, 8}, {8, 16}), {{2, 8}, {1, 4}, {0, 4}});
  same(PlaceAxesOnTorus({4, 4, 4}, {2, 32}), {{0, 2}, {2, 4}, {1, 4}, {0, 2}});
  // Rank 5 under the first: x = 5 mod 4 = 1, z = (5 / 4) mod 4 = 1, y = 5 / 16 = 0.
  TorusSpec t;
  t.dims = {4, 4, 4};
  t.placement = PlaceAxesOnTorus({4, 4, 4}, {4, 16});
  EXPECT_EQ(t.CoordsOfRank(5), (std::array<int, 3>{1, 0, 1}));
}

const std::string kExperiment =
    std::string(MESHSIM_SOURCE_DIR) + "/workloads/experiments/maxtext-32b-v5p-128.yaml";

// The bundled experiment: its tensor groups are x rings, its FSDP groups y-z planes.
TEST(Torus, MaxTextExperimentPlacesTensorOnARing) {
  const Result<Experiment> e = LoadExperimentFile(kExperiment);
  ASSERT_TRUE(e.ok()) << e.error().ToString();
  const ClusterSpec& c = e.value().cluster;
  EXPECT_EQ(e.value().plan.tp, 4);
  EXPECT_EQ(e.value().plan.dp, 16);
  const TorusGroup tensor = LocateTorusGroup(c, Range(0, 4));
  ASSERT_EQ(tensor.stages.size(), 1u);
  EXPECT_TRUE(tensor.stages[0].ring);
  const TorusGroup fsdp = LocateTorusGroup(c, Range(0, 16, 4));
  ASSERT_EQ(fsdp.stages.size(), 2u);
  EXPECT_EQ(fsdp.stages[0].dim, 1);
  EXPECT_EQ(fsdp.stages[1].dim, 2);
  EXPECT_TRUE(fsdp.grid);
}

TEST(Torus, MaxTextExperimentRunsEndToEnd) {
  const Result<Experiment> e = LoadExperimentFile(kExperiment);
  ASSERT_TRUE(e.ok()) << e.error().ToString();
  const auto sim = Simulate(e.value());
  const StepSummary s = SummarizeStep(*sim);
  EXPECT_GT(s.step_time_s, 0);
  EXPECT_GT(s.tflops_per_gpu, 100);
  EXPECT_LT(s.tflops_per_gpu, 459);
  // remat minimal as recompute projections: per layer and token the layer input and the
  // attention output projection's output (2 x 10240 / 4 on tensor with sequence
  // parallelism) and Q, K, V, MLP wi (3 x 8192 + 32768, / 4), 2 bytes each: 38912 B; 32
  // sequences of 2048 per chip (512 over fsdp 16), 32 layers: 76.0 GiB, plus the model
  // states (32.55 B x 18 B / 64 = 8.5 GiB): the run fits in the 95 GiB, as on the real slice.
  EXPECT_GT(s.peak_memory_gib, 76.0 + 8.5);
  EXPECT_TRUE(s.fits);
}

// The same plan written PyTorch-style (tp 4, dp 16, ZeRO-3, sequence parallel) is placed
// the same way (tp innermost: an x ring) and takes the same step.
// (Collective matmul off in both: XLA's runs bidirectionally, Transformer Engine's, which
// the PyTorch-style plan names, one way round the ring.)
TEST(Torus, PyTorchStylePlanIsPlacedAsTheJaxMesh) {
  Result<Experiment> jax = LoadExperimentFile(kExperiment);
  ASSERT_TRUE(jax.ok());
  jax.value().plan.jax.xla.collective_matmul = jax.value().plan.tp_comm_overlap = false;
  Experiment torch = jax.value();
  torch.plan.jax = JaxPlan{};
  torch.plan.mesh_order = PlanSpec{}.mesh_order;
  torch.cluster.intra_node.torus.placement.clear();
  PlaceRanksOnTorus(torch.plan, &torch.cluster);
  const auto& a = jax.value().cluster.intra_node.torus.placement;
  const auto& b = torch.cluster.intra_node.torus.placement;
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].dim, b[i].dim);
    EXPECT_EQ(a[i].size, b[i].size);
  }
  EXPECT_EQ(SummarizeStep(*Simulate(jax.value())).step_time_s,
            SummarizeStep(*Simulate(torch)).step_time_s);
}

// Bad input: exit 2 with the key named.
TEST(Torus, BadSliceShapesNameTheKey) {
  auto load = [](const std::string& intra) {
    return LoadExperimentText(
        "name: x\nmodel: ../models/llama2-7b.yaml\n"
        "cluster: {name: t, gpu: {kind: T, memory_gib: 95, peak_tflops: {bf16: 459},\n"
        "  hbm_gbps: 2765}, nodes: 1, gpus_per_node: 64, intra_node: " +
            intra +
            "}\n"
            "plan: {dp: 64, global_batch: 64}\n",
        std::string(MESHSIM_SOURCE_DIR) + "/workloads/experiments/x.yaml");
  };
  const auto ok = load("{kind: torus, torus: [4, 4, 4], gbps_per_link: 100}");
  ASSERT_TRUE(ok.ok()) << ok.error().ToString();
  const auto product = load("{kind: torus, torus: [4, 4, 8], gbps_per_link: 100}");
  ASSERT_FALSE(product.ok());
  EXPECT_EQ(product.error().key, "cluster.intra_node.torus");
  EXPECT_GT(product.error().line, 0);
  const auto link = load("{kind: torus, torus: [4, 4, 4]}");
  ASSERT_FALSE(link.ok());
  EXPECT_EQ(link.error().key, "cluster.intra_node.gbps_per_link");
  const auto wrap =
      load("{kind: torus, torus: [4, 4, 4], wraparound: [true, false], gbps_per_link: 100}");
  ASSERT_FALSE(wrap.ok());
  EXPECT_EQ(wrap.error().key, "cluster.intra_node.wraparound");
  const auto both = load("{kind: torus, torus: [4, 4, 4], gbps_per_link: 100, gbps_per_gpu: 600}");
  ASSERT_FALSE(both.ok());
  EXPECT_EQ(both.error().key, "cluster.intra_node.gbps_per_gpu");
}

}  // namespace
}  // namespace meshsim

// The flow-level network: max-min sharing, contention, oversubscription, routing,
// collectives against their closed forms (and, as a regression check, the nccl-tests
// figures their efficiencies were fitted to), and what-ifs.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>
#include <set>

#include "sim/config/loader.h"
#include "sim/engine/collective_bench.h"
#include "sim/engine/simulation.h"
#include "sim/hw/topology.h"
#include "sim/net/flow_collectives.h"
#include "sim/net/flow_network.h"
#include "sim/net/flow_phases.h"
#include "tests/unit/test_fixtures.h"

namespace meshsim {
namespace {

ClusterSpec Bundled(const std::string& name) {
  Result<ClusterSpec> c = LoadClusterFile(std::string(MESHSIM_SOURCE_DIR) + "/topologies/" + name);
  EXPECT_TRUE(c.ok());
  return c.value();
}

int LinkNamed(const Topology& t, const std::string& src, const std::string& dst) {
  for (size_t l = 0; l < t.links().size(); ++l) {
    if (t.VertexName(t.links()[l].src) == src && t.VertexName(t.links()[l].dst) == dst) {
      return static_cast<int>(l);
    }
  }
  ADD_FAILURE() << "no link " << src << " -> " << dst;
  return 0;
}

// Two nodes of one GPU-pair each: a 10 GB/s GPU link and one 6 GB/s NIC per node.
ClusterSpec TwoBottlenecks() {
  ClusterSpec c = testing::OneNode(2);
  c.nodes = 2;
  c.intra_node.gbps_per_gpu = 10;
  c.inter_node.nics_per_node = 1;
  c.inter_node.gbps_per_nic = 6;
  return c;
}

// Three flows, two bottlenecks, on two links of capacities 10 and 6 (GB/s): flow A on
// link 1, flow B on links 1 and 2, flow C on link 2. Progressive filling: link 2's fair
// share 3 is the smallest, so B and C get 3; A gets what link 1 has left, 7. When B and
// C end, A alone gets 10.
TEST(FlowNetwork, MaxMinRatesOnHandComputedGraph) {
  const ClusterSpec c = TwoBottlenecks();
  auto topo = Topology::Build(c).value();
  const int l1 = LinkNamed(*topo, "node0.gpu0", "node0.nvswitch");
  const int l2 = LinkNamed(*topo, "node0.nic0", "leaf0");
  FlowNetwork net(topo, std::vector<double>(kLinkClassCount, 1.0));
  const std::vector<int> route_a{l1}, route_b{l1, l2}, route_c{l2};
  Simulator sim;
  SimTime end_a, end_b, end_c;
  // A: 17 GB; B: 3 GB; C: 6 GB.
  net.StartFlowOnRoute(sim, &route_a, 17e9, [&] { end_a = sim.Now(); });
  net.StartFlowOnRoute(sim, &route_b, 3e9, [&] { end_b = sim.Now(); });
  net.StartFlowOnRoute(sim, &route_c, 6e9, [&] { end_c = sim.Now(); });
  sim.Schedule(SimTime::Seconds(0.5), [&] {
    EXPECT_NEAR(net.LinkRate(l1), 10e9, 1);  // A 7 + B 3
    EXPECT_NEAR(net.LinkRate(l2), 6e9, 1);   // B 3 + C 3
  });
  sim.Run();
  // B: 3 GB at 3 GB/s -> 1 s. Then C alone on link 2 at 6: 3 GB left -> 1.5 s.
  EXPECT_NEAR(end_b.seconds(), 1.0, 1e-9);
  EXPECT_NEAR(end_c.seconds(), 1.5, 1e-9);
  // A: 7 GB in the first second, then 10 GB/s for the remaining 10 GB -> 2 s.
  EXPECT_NEAR(end_a.seconds(), 2.0, 1e-9);
  EXPECT_NEAR(net.LinkBytes(l1), 20e9, 1e3);
  EXPECT_NEAR(net.LinkBusySeconds(l1), 2.0, 1e-9);
}

// A coflow's route crosses a link once per transfer through it; a long one (an expert
// all-to-all's) keeps each link once with its count. Hand computed: coflow D crosses link 1
// 50 times and link 2 30 times (80 crossings, past the short-route walk), flow A crosses
// link 1 once. Link 1 (10 GB/s) has 51 crossings, share 10/51; link 2 (6 GB/s) 30,
// share 6/30 = 0.2 > 10/51: link 1 freezes both at 10/51 GB/s a crossing. D's 1 GB per
// crossing ends at 5.1 s; then A alone takes all of link 1: its 2 GB (1 GB moved by then)
// end at 5.1 + 1/10 = 5.2 s. Link 1 carries 50 + 2 GB, link 2 30 GB.
TEST(FlowNetwork, LongCoflowCrossingALinkManyTimesTakesAShareEachTime) {
  const ClusterSpec c = TwoBottlenecks();
  auto topo = Topology::Build(c).value();
  const int l1 = LinkNamed(*topo, "node0.gpu0", "node0.nvswitch");
  const int l2 = LinkNamed(*topo, "node0.nic0", "leaf0");
  FlowNetwork net(topo, std::vector<double>(kLinkClassCount, 1.0));
  std::vector<int> route_d;
  for (int i = 0; i < 50; ++i) {
    route_d.push_back(l1);
    if (i % 5 < 3) route_d.push_back(l2);  // interleaved, as a coflow's transfers come
  }
  ASSERT_EQ(route_d.size(), 80u);
  const std::vector<int> route_a{l1};
  Simulator sim;
  SimTime end_a, end_d;
  net.StartFlowOnRoute(sim, &route_d, 1e9, [&] { end_d = sim.Now(); });
  net.StartFlowOnRoute(sim, &route_a, 2e9, [&] { end_a = sim.Now(); });
  sim.Schedule(SimTime::Seconds(1), [&] {
    EXPECT_NEAR(net.LinkRate(l1), 10e9, 1);
    EXPECT_NEAR(net.LinkRate(l2), 30 * 10e9 / 51, 1);
  });
  sim.Run();
  EXPECT_NEAR(end_d.seconds(), 5.1, 1e-9);
  EXPECT_NEAR(end_a.seconds(), 5.2, 1e-9);
  EXPECT_NEAR(net.LinkBytes(l1), 52e9, 1e3);
  EXPECT_NEAR(net.LinkBytes(l2), 30e9, 1e3);
  EXPECT_EQ(net.ActiveFlows(), 0u);
}

// A route's crossings gathered once (GatheredRoute, as a routed plan's coflow keeps them):
// the second and third flows on it reuse them and run as the first, which gathered them;
// a short route keeps nothing to reuse and is walked as it is.
TEST(FlowNetwork, GatheredRouteIsReusedByTheNextFlowsOnIt) {
  const ClusterSpec c = TwoBottlenecks();
  auto topo = Topology::Build(c).value();
  const int l1 = LinkNamed(*topo, "node0.gpu0", "node0.nvswitch");
  const int l2 = LinkNamed(*topo, "node0.nic0", "leaf0");
  std::vector<int> route;
  for (int i = 0; i < 50; ++i) {
    route.push_back(l1);
    if (i % 5 < 3) route.push_back(l2);
  }
  const std::vector<int> short_route{l1, l2};
  GatheredRoute gathered, short_gathered;
  FlowNetwork net(topo, std::vector<double>(kLinkClassCount, 1.0));
  Simulator sim;
  std::vector<double> ends;
  const auto start = [&](const std::vector<int>& r, GatheredRoute* g) {
    net.StartFlowOnRoute(
        sim, std::span<const int>(r), 1e9, [&] { ends.push_back(sim.Now().seconds()); }, g);
  };
  start(route, &gathered);
  EXPECT_TRUE(gathered.gathered);
  ASSERT_EQ(gathered.links.size(), 2u);
  EXPECT_EQ(gathered.links[0].link, l1);
  EXPECT_EQ(gathered.links[0].count, 50u);
  EXPECT_EQ(gathered.links[1].link, l2);
  EXPECT_EQ(gathered.links[1].count, 30u);
  sim.Run();
  start(route, &gathered);
  sim.Run();
  start(route, nullptr);
  sim.Run();
  ASSERT_EQ(ends.size(), 3u);
  EXPECT_DOUBLE_EQ(ends[1] - ends[0], ends[0]);  // each alone, at 10 GB/s / 50 crossings
  EXPECT_DOUBLE_EQ(ends[2] - ends[1], ends[0]);
  EXPECT_NEAR(ends[0], 5.0, 1e-9);
  start(short_route, &short_gathered);
  sim.Run();
  EXPECT_TRUE(short_gathered.gathered);
  EXPECT_TRUE(short_gathered.links.empty());
  EXPECT_NEAR(net.LinkBytes(l2), 3 * 30e9 + 1e9, 1e3);
}

double AllReduceSeconds(const ClusterSpec& c, const std::vector<std::vector<int>>& groups,
                        double bytes) {
  auto topo = Topology::Build(c).value();
  FlowCollectiveNetwork net(c, topo, NcclOptions{AllReduceAlgorithm::kRing});
  Simulator sim;
  SimTime last;
  for (const auto& g : groups) {
    net.Start(sim, CommOp::kAllReduce, g, bytes, [&] { last = std::max(last, sim.Now()); }, {});
  }
  sim.Run();
  return last.seconds();
}

// The same three flows started between Hold and Release: settled in Release, at once,
// with the same rates and completion times; the replay then runs only completion events
// (one per distinct completion time), and a completion that leaves its links empty needs
// no settle event of its own.
TEST(FlowNetwork, HeldFlowsSettleInReleaseWithTheSameRates) {
  const ClusterSpec c = TwoBottlenecks();
  auto topo = Topology::Build(c).value();
  const int l1 = LinkNamed(*topo, "node0.gpu0", "node0.nvswitch");
  const int l2 = LinkNamed(*topo, "node0.nic0", "leaf0");
  const std::vector<int> route_a{l1}, route_b{l1, l2}, route_c{l2};
  auto run = [&](bool held, std::vector<SimTime>* ends) {
    FlowNetwork net(topo, std::vector<double>(kLinkClassCount, 1.0));
    Simulator sim;
    ends->assign(3, SimTime::Zero());
    if (held) net.Hold();
    net.StartFlowOnRoute(sim, &route_a, 17e9, [&] { (*ends)[0] = sim.Now(); });
    net.StartFlowOnRoute(sim, &route_b, 3e9, [&] { (*ends)[1] = sim.Now(); });
    net.StartFlowOnRoute(sim, &route_c, 6e9, [&] { (*ends)[2] = sim.Now(); });
    if (held) {
      net.Release(sim);
      EXPECT_NEAR(net.LinkRate(l1), 10e9, 1);  // settled already: A 7 + B 3
      EXPECT_NEAR(net.LinkRate(l2), 6e9, 1);
    }
    return sim.Run();
  };
  std::vector<SimTime> free_ends, held_ends;
  // Unheld: a settle event, B's completion (its links keep A and C: settled at once),
  // C's (link 2 left empty: nothing to settle), A's.
  EXPECT_EQ(run(false, &free_ends), 4u);
  EXPECT_EQ(run(true, &held_ends), 3u);
  EXPECT_EQ(free_ends, held_ends);
  EXPECT_NEAR(held_ends[0].seconds(), 2.0, 1e-9);
  EXPECT_NEAR(held_ends[1].seconds(), 1.0, 1e-9);
  EXPECT_NEAR(held_ends[2].seconds(), 1.5, 1e-9);
}

// Max-min rates the textbook way: every unfrozen flow rises at one level until a link
// is full ((capacity - frozen load) / unfrozen crossings is the smallest); its flows
// freeze there. A flow crossing a link k times takes k times its rate on it.
std::vector<double> WaterFill(const std::vector<std::vector<int>>& routes,
                              const std::vector<double>& capacity) {
  const size_t n = routes.size();
  std::vector<double> rate(n, 0), load(capacity.size(), 0);
  std::vector<bool> frozen(n, false);
  for (size_t left = n; left > 0;) {
    std::vector<int> crossings(capacity.size(), 0);
    for (size_t f = 0; f < n; ++f) {
      for (int l : routes[f]) crossings[l] += frozen[f] ? 0 : 1;
    }
    double level = std::numeric_limits<double>::infinity();
    int tight = -1;
    for (size_t l = 0; l < capacity.size(); ++l) {
      if (crossings[l] == 0) continue;
      const double share = (capacity[l] - load[l]) / crossings[l];
      if (share < level) level = share, tight = static_cast<int>(l);
    }
    for (size_t f = 0; f < n; ++f) {
      const auto& r = routes[f];
      if (frozen[f] || std::find(r.begin(), r.end(), tight) == r.end()) continue;
      frozen[f] = true;
      rate[f] = level;
      --left;
      for (int l : r) load[l] += level;
    }
  }
  return rate;
}

// A component far larger than its flows (a few long coflows over hundreds of links, and
// short flows), as the filling sorts it a part at a time and stops once every flow
// is frozen: each link's total rate is the water-filling's.
TEST(FlowNetwork, LargeComponentMatchesWaterFilling) {
  ClusterSpec c = testing::OneNode(8);
  c.nodes = 16;
  c.inter_node.nics_per_node = 8;
  c.inter_node.switch_ports = 8;
  c.inter_node.oversubscription = 2.0;
  auto topo = Topology::Build(c).value();
  uint64_t seed = 12345;
  auto next_gpu = [&] {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<int>((seed >> 33) % c.TotalGpus());
  };
  std::vector<std::vector<int>> routes;
  for (int f = 0; f < 16; ++f) {
    std::vector<int>& route = routes.emplace_back();
    const int legs = f < 10 ? 30 : 1;  // 10 coflows of 30 transfers each
    for (int k = 0; k < legs; ++k) {
      const int src = next_gpu(), dst = next_gpu();
      if (src == dst) continue;
      const std::vector<int>& leg = topo->Route(src, dst, static_cast<uint64_t>(k));
      route.insert(route.end(), leg.begin(), leg.end());
    }
    if (route.empty()) routes.pop_back();
  }
  std::vector<double> capacity;
  for (const Link& l : topo->links()) capacity.push_back(l.bytes_per_s);
  FlowNetwork net(topo, std::vector<double>(kLinkClassCount, 1.0));
  Simulator sim;
  net.Hold();
  for (const auto& r : routes) net.StartFlowOnRoute(sim, &r, 1e12, nullptr);
  net.Release(sim);
  const std::vector<double> rate = WaterFill(routes, capacity);
  std::set<int> used;
  for (const auto& r : routes) used.insert(r.begin(), r.end());
  ASSERT_GT(used.size(), 256u);  // more than the first part FillRates sorts
  for (int l : used) {
    double expected = 0;
    for (size_t f = 0; f < routes.size(); ++f) {
      expected += rate[f] * std::count(routes[f].begin(), routes[f].end(), l);
    }
    EXPECT_NEAR(net.LinkRate(l), expected, 1e-9 * capacity[l]) << topo->LinkName(l);
  }
}

TEST(FlowNetwork, AllReducesSharingNicsSlowEachOther) {
  ClusterSpec c = Bundled("selene-a100.yaml");
  c.nodes = 2;
  c.inter_node.nics_per_node = 1;  // both groups leave their node through one NIC
  const std::vector<int> a{0, 8}, b{1, 9};
  const double alone = AllReduceSeconds(c, {a}, 1 << 28);
  const double together = AllReduceSeconds(c, {a, b}, 1 << 28);
  EXPECT_GT(together, 1.8 * alone);
  // On separate NICs they do not interfere.
  c.inter_node.nics_per_node = 8;
  EXPECT_NEAR(AllReduceSeconds(c, {a, b}, 1 << 28), AllReduceSeconds(c, {a}, 1 << 28), 1e-9);
}

TEST(FlowNetwork, OversubscribedFatTreeHalvesCrossLeafBandwidth) {
  ClusterSpec c = Bundled("selene-a100.yaml");
  c.nodes = 2;
  c.inter_node.switch_ports = 8;  // one node per leaf: node 0 and node 1 on different leaves
  std::vector<int> all(16);
  std::iota(all.begin(), all.end(), 0);
  const double bytes = 1 << 30;
  c.inter_node.oversubscription = 1.0;
  const double full = AllReduceSeconds(c, {all}, bytes);
  c.inter_node.oversubscription = 2.0;
  const double half = AllReduceSeconds(c, {all}, bytes);
  // The ring is NIC-bound at 1:1 (8 x 25 GB/s x 0.94 < NVLink 231 GB/s); at 2:1 the leaf
  // has half the uplinks, each carrying two channels: the inter-node part takes twice
  // as long.
  EXPECT_NEAR(half / full, 2.0, 0.05);
}

TEST(Topology, RoutesStayOnOneRailAndReroutesAroundFailures) {
  ClusterSpec c = Bundled("dgx-h100.yaml");
  c.nodes = 2;
  auto topo = Topology::Build(c).value();
  // GPU 3 -> GPU 11 (same local rank): NIC 3 -> rail switch 3 -> NIC 3.
  EXPECT_EQ(topo->Route(3, 11, 0).size(), 4u);
  c.what_if.links.push_back({"node0.nic3", 1.0, true});
  auto failed = Topology::Build(c);
  ASSERT_TRUE(failed.ok());
  const auto& route = failed.value()->Route(3, 11, 0);
  ASSERT_FALSE(route.empty());
  for (int l : route) EXPECT_NE(failed.value()->LinkName(l), "node0.nic3");
  EXPECT_GT(route.size(), 4u);  // around, through NVLink and another NIC
}

TEST(Topology, UnknownOrDisconnectingLinkIsAnInputError) {
  ClusterSpec c = Bundled("selene-a100.yaml");
  c.nodes = 2;
  c.what_if.links.push_back({"node9.nic0", 0.5, false});
  auto unknown = Topology::Build(c);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("no link named 'node9.nic0'"), std::string::npos);
  c.what_if.links.clear();
  c.inter_node.nics_per_node = 1;
  c.what_if.links.push_back({"node1.nic0", 1.0, true});
  auto cut = Topology::Build(c);
  ASSERT_FALSE(cut.ok());
  EXPECT_NE(cut.error().message.find("disconnected"), std::string::npos);
}

double Busbw(const std::string& cluster, CommOp op, int gpus, double bytes, bool per_nic = false,
             NcclOptions nccl = {}) {
  auto rows = BenchCollective(Bundled(cluster), op, gpus, bytes, bytes, nccl);
  EXPECT_TRUE(rows.ok());
  return per_nic ? rows.value().front().nic_gbps : rows.value().front().busbw_gbps;
}

// A regression check, not a validation: the efficiencies were fitted to these very
// nccl-tests figures (selene-a100 network 0.77 = 230 / 300 GB/s, dgx-h100 0.82 = 370 /
// 450, nic 0.94 = 47 / 50), so the simulated bus bandwidth returns its input, less what
// NCCL's latencies cost at 1 GiB. Validation needs sizes and scales that were not fitted
// (results/nccl.md). The expected values are the ring/Simple closed form: launch 8.4 us,
// 2(n-1) = 14 steps of 3.4 us (NCCL's per-hop Simple latency on NVLink) and of S/n =
// 2^30 / 8 B for 8 GPUs at the fitted NVLink rate; busbw = S / time x 2(n-1)/n.
//   A100: 56 us + 14 x 134,217,728 / 231e9 = 8190.4 us -> 131.10 GB/s algbw, 229.42 busbw.
//   H100: 56 us + 14 x 134,217,728 / 369e9 = 5148.3 us -> 208.56 GB/s algbw, 364.98 busbw.
//   Two H100 nodes: ring/Simple of 16 over 8 rings (one per NIC), 30 steps of 2^30 / (16
//   x 8) = 8,388,608 B; the relays (PXN) share each GPU's NVLink among the 8 rings, 369/8
//   = 46.1 GB/s, below the NIC's 47: 30 x 8,388,608 / 46.125e9 = 5455.8 us; latency: 28
//   NVLink steps of max(3.4, 3 x 1 us network overhead) + 2 network steps of 14 us, with
//   the 8.4 us launch, x 1.4 (NCCL's plateau for multi-node Simple rings) = 184.2 us:
//   5640.0 us -> busbw 2^30 / 5640.0 us x 30/16 = 356.96 GB/s, 44.62 per NIC (nccl-tests
//   measures ~46-48 on NDR).
// The H100 figures are rings (NCCL_ALGO=Ring, as the fitted nccl-tests runs): by default
// NCCL and meshsim run NVLS on an H100 node, 25 us + 2^30 / 272e9 (NCCL's NVLS algbw;
// nccl_tuner_test.cc) = 3972.58 us -> 270.29 GB/s algbw, 473.01 busbw.
TEST(BenchCollective, RegressionFittedBusBandwidthComesBack) {
  const NcclOptions ring{AllReduceAlgorithm::kRing};
  EXPECT_NEAR(Busbw("selene-a100.yaml", CommOp::kAllReduce, 8, 1 << 30), 229.42, 0.01);
  EXPECT_NEAR(Busbw("dgx-h100.yaml", CommOp::kAllReduce, 8, 1 << 30, false, ring), 364.98, 0.01);
  EXPECT_NEAR(Busbw("dgx-h100.yaml", CommOp::kAllReduce, 16, 1 << 30, true, ring), 44.62, 0.01);
  EXPECT_NEAR(Busbw("dgx-h100.yaml", CommOp::kAllReduce, 8, 1 << 30), 473.01, 0.01);
}

// A regression test against public nccl-tests output (results/nccl.md lists the sources
// and every point): all_reduce_perf on 8 and 16 A100-SXM4-80GB (one and two nodes, 8 HDR
// NICs each) in facebookresearch/gcm's gcm/tests/health_checks_tests/test_check_nccl.py,
// and 2 x 8 A100-SXM4-40GB (OCI BM.GPU4.8) in oracle-quickstart/oci-hpc-oke's README.
// Measured busbw, GB/s; meshsim must stay within 15 %. (Not every public point is:
// results/nccl.md has the rest, e.g. 2-node sizes of 64 KiB to 1 MiB, 20-32 % off.)
TEST(BenchCollective, RegressionPublicNcclTestsPointsWithin15Percent) {
  struct Point {
    int gpus;
    double bytes, busbw;
  };
  const Point points[] = {{8, 67108864, 210.68},    {8, 268435456, 223.05},
                          {8, 1073741824, 231.72},  {16, 268435456, 169.69},
                          {16, 1073741824, 182.80}, {16, 67108864, 153.13},
                          {16, 16777216, 111.29}};
  for (const Point& p : points) {
    const double sim = Busbw("selene-a100.yaml", CommOp::kAllReduce, p.gpus, p.bytes);
    EXPECT_NEAR(sim / p.busbw, 1.0, 0.15) << p.gpus << " GPUs, " << p.bytes << " B: " << sim;
  }
}

TEST(BenchCollective, SmallSizesAreLatencyBound) {
  auto rows =
      BenchCollective(Bundled("selene-a100.yaml"), CommOp::kAllReduce, 8, 1024, 1 << 30, {});
  ASSERT_TRUE(rows.ok());
  const auto& r = rows.value();
  EXPECT_LT(r.front().busbw_gbps, 0.01 * r.back().busbw_gbps);
  for (size_t i = 1; i < r.size(); ++i) EXPECT_GE(r[i].busbw_gbps, r[i - 1].busbw_gbps);
  // 1 KiB: ring/LL on one channel, launch 6.6 us + 14 hops of 0.6 us; its data at LL's cap
  // (87.7 GB/s x 8/14) on 1 of 24 channels: 24 x 1024 / 50.114e9 = 0.490 us.
  EXPECT_EQ(r.front().protocol, NcclProtocol::kLL);
  EXPECT_EQ(r.front().channels, 1);
  EXPECT_NEAR(r.front().time_s, 15e-6 + 24 * 1024 / (87.7e9 * 8 / 14), 1e-9);
}

TEST(BenchCollective, BusBandwidthFactorsAreNcclTests) {
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(CommOp::kAllReduce, 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(CommOp::kAllGather, 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(CommOp::kAllToAll, 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(CommOp::kSendRecv, 2), 1.0);
}

// Forcing a protocol, as NCCL_PROTO does: 1 GiB over 8 A100s (231 GB/s of NVLink) in LL
// moves twice the bytes, but LL's cap (87.7 GB/s of bus bandwidth on one A100 node) is
// lower still: busbw = 2^30 x 7/4 / (15 us + 2^30 / (87.7e9 x 8/14)) = 87.67 GB/s.
TEST(BenchCollective, ForcedProtocolRunsAtItsBandwidth) {
  auto rows = BenchCollective(Bundled("selene-a100.yaml"), CommOp::kAllReduce, 8, 1 << 30, 1 << 30,
                              NcclOptions{AllReduceAlgorithm::kAuto, NcclProtocol::kLL});
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows.value().front().protocol, NcclProtocol::kLL);
  const double t = 15e-6 + (1 << 30) / (87.7e9 * 8 / 14);
  EXPECT_NEAR(rows.value().front().busbw_gbps, (1 << 30) * 7.0 / 4 / t / 1e9, 0.01);
}

// Forcing fewer channels (NCCL_MAX_NCHANNELS): 64 KiB over 8 A100s in ring/LL keeps 2 of
// 4 channels (one per 32 KiB) instead of 2 of 24, so its data at LL's cap takes 2 x
// 1.3077 us instead of 12 x: 15 us + 2.6155 us.
TEST(BenchCollective, ForcedChannelsChangeSmallSizes) {
  auto rows = BenchCollective(Bundled("selene-a100.yaml"), CommOp::kAllReduce, 8, 65536, 65536,
                              NcclOptions{AllReduceAlgorithm::kAuto, NcclProtocol::kAuto, 4});
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows.value().front().channels, 2);
  EXPECT_NEAR(rows.value().front().time_s, 15e-6 + 2 * 65536 / (87.7e9 * 8 / 14), 1e-9);
}

// Each row carries NCCL's own estimate of its choice beside the simulated time. 1 GiB over
// 8 A100s, ring/Simple: 8.4 + 14 x 3.4 = 56 us + 2^30 / (231e9 x 8/14) = 8190.4 us, the
// simulated time too (one node, where the links are the model's). 64 KiB, ring/LL on 2
// of 24 channels: NCCL's model counts every channel, 15 us + 65536 / (87.7e9 x 8/14) =
// 16.31 us, where the simulation stretches the data over the 2 channels used: 30.69 us.
TEST(BenchCollective, RowsCarryNcclsModelEstimate) {
  auto rows =
      BenchCollective(Bundled("selene-a100.yaml"), CommOp::kAllReduce, 8, 65536, 1 << 30, {});
  ASSERT_TRUE(rows.ok());
  const CollectiveBenchRow& small = rows.value().front();
  const CollectiveBenchRow& large = rows.value().back();
  EXPECT_NEAR(small.model_s, 15e-6 + 65536 / (87.7e9 * 8 / 14), 1e-9);
  EXPECT_GT(small.time_s, 1.8 * small.model_s);
  EXPECT_NEAR(large.model_s, 56e-6 + 14 * 134217728 / 231e9, 0.1e-6);
  EXPECT_NEAR(large.time_s, large.model_s, 0.1e-6);
  auto sendrecv =
      BenchCollective(Bundled("selene-a100.yaml"), CommOp::kSendRecv, 8, 65536, 65536, {});
  ASSERT_TRUE(sendrecv.ok());
  EXPECT_EQ(sendrecv.value().front().model_s, 0);
}

Experiment DefaultExperiment(const std::vector<std::string>& sets) {
  auto e = LoadExperimentFile(
      std::string(MESHSIM_SOURCE_DIR) + "/workloads/experiments/default.yaml", sets);
  EXPECT_TRUE(e.ok()) << (e.ok() ? "" : e.error().ToString());
  return e.value();
}

TEST(WhatIf, StragglerSlowsTheStep) {
  const double base = Simulate(DefaultExperiment({}))->replay.step_time.seconds();
  Experiment slow = DefaultExperiment({});
  slow.cluster.what_if.stragglers.push_back({5, 1.5});
  const auto sim = Simulate(slow);
  EXPECT_EQ(sim->simulated_ranks.size(), 16u);  // symmetry broken: every rank replayed
  EXPECT_GT(sim->replay.step_time.seconds(), 1.2 * base);
}

TEST(WhatIf, DegradedNicSlowsCrossNodeTraffic) {
  // Pure data parallelism over two nodes: the gradient all-reduce crosses the NICs.
  const std::vector<std::string> dp = {"plan.tp=1",
                                       "plan.pp=1",
                                       "plan.dp=16",
                                       "plan.zero=0",
                                       "plan.sequence_parallel=false",
                                       "plan.global_batch=16"};
  const auto base = Simulate(DefaultExperiment(dp));
  Experiment degraded = DefaultExperiment(dp);
  for (int n = 0; n < 2; ++n) {
    for (int i = 0; i < 8; ++i) {
      degraded.cluster.what_if.links.push_back(
          {"node" + std::to_string(n) + ".nic" + std::to_string(i), 0.1, false});
    }
  }
  const auto slow = Simulate(degraded);
  EXPECT_GT(slow->stats.ranks[0].breakdown.exposed_dp_s,
            2 * base->stats.ranks[0].breakdown.exposed_dp_s);
  EXPECT_GT(slow->replay.step_time, base->replay.step_time);
}

// Four one-GPU nodes, one NIC each, two per leaf (switch_ports 2): leaf0 holds GPUs 0-1,
// leaf1 GPUs 2-3, each leaf has ceil(2 / 1) = 2 uplinks, to spine0 and spine1.
ClusterSpec TwoLeaves() {
  ClusterSpec c = testing::OneNode(1);
  c.nodes = 4;
  c.inter_node.kind = InterNodeKind::kFatTree;
  c.inter_node.nics_per_node = 1;
  c.inter_node.switch_ports = 2;
  return c;
}

// Runs `times` sendrecvs of `bytes` from GPU 0 to GPU 2 and returns what was rerouted.
Reroutes SendRecvReroutes(const ClusterSpec& c, double bytes, int times) {
  auto topo = Topology::Build(c).value();
  FlowCollectiveNetwork net(c, topo, NcclOptions{AllReduceAlgorithm::kRing});
  Simulator sim;
  const std::vector<int> pair{0, 2};
  for (int i = 0; i < times; ++i) net.Start(sim, CommOp::kSendRecv, pair, bytes, [] {}, {});
  sim.Run();
  return net.Rerouted();
}

// GPU 0 -> GPU 2 leaves leaf0 for spine (dst + 0) mod 2 = spine0 among [spine0, spine1],
// then leaf1. With leaf0.spine0 failed it takes spine1: leaf0 -> spine1 (link
// leaf0.spine1) and spine1 -> leaf1 (link leaf1.spine1) are the detour, each carrying
// every rerouted byte: 2 sendrecvs x 1 GB = 2 GB.
TEST(WhatIf, FailedUplinkReroutesOverTheOtherSpine) {
  ClusterSpec c = TwoLeaves();
  EXPECT_EQ(SendRecvReroutes(c, 1e9, 2).bytes, 0.0);  // healthy: nothing to compare
  c.what_if.links.push_back({"leaf0.spine0", 1.0, true});
  const Reroutes r = SendRecvReroutes(c, 1e9, 2);
  EXPECT_DOUBLE_EQ(r.bytes, 2e9);
  ASSERT_EQ(r.links.size(), 2u);
  // Equal bytes: by name.
  EXPECT_EQ(r.links[0].name, "leaf0.spine1");
  EXPECT_DOUBLE_EQ(r.links[0].bytes, 2e9);
  EXPECT_EQ(r.links[1].name, "leaf1.spine1");
  EXPECT_DOUBLE_EQ(r.links[1].bytes, 2e9);
}

// leaf0.spine1 is not on GPU 0 -> GPU 2's healthy route; with it failed, spine0 is the
// only next hop, the same as before: nothing is rerouted. A slower link (bandwidth_factor)
// changes no route either.
TEST(WhatIf, LinksOffThePathOrSlowerRerouteNothing) {
  ClusterSpec c = TwoLeaves();
  c.what_if.links.push_back({"leaf0.spine1", 1.0, true});
  EXPECT_EQ(SendRecvReroutes(c, 1e9, 1).bytes, 0.0);
  EXPECT_TRUE(SendRecvReroutes(c, 1e9, 1).links.empty());
  c.what_if.links = {{"leaf0.spine0", 0.5, false}};
  EXPECT_EQ(SendRecvReroutes(c, 1e9, 1).bytes, 0.0);
}

// The default experiment's traffic, derived by hand: Llama-2 7B (h = s = 4096, 32 layers,
// SwiGLU f = 11008, vocab 32000, bf16) on 2 DGX H100 nodes, tp 2 x pp 4 x dp 2 with the
// mesh order tp, cp, ep, dp, pp: stages 0 and 1 on node 0, stages 2 and 3 on node 1;
// 32 sequences = 16 micro-batches per pipeline; 8 layers a stage.
//   TP with SP: per layer and micro-batch 4 collectives forward (all-gather and
//   reduce-scatter around each block) and 6 backward (per block the output gradient's
//   all-gather, the input's re-gather, the input gradient's reduce-scatter), each over
//   s*h*2 B = 32 MiB, of which a rank sends half (ring of 2): 10 * 16 MiB * 8 layers * 16
//   micro-batches = 20 GiB a rank.
//   ZeRO-1 over dp 2: reduce-scatter the bf16 gradients and all-gather the bf16
//   parameters, a rank sending half of (2 + 2) B x its parameters: a layer has 4h^2 + 3hf
//   + 2h = 202,383,360, so a middle stage 8 * 202,383,360 / 2 = 809,533,440 parameters a
//   rank (1,619,066,880 B sent), the first and last stages also an embedding 32000 * 4096
//   / 2 (1,750,138,880 B sent).
//   PP: 16 micro-batches of s*h*2 / tp = 16 MiB per direction and rank.
// Each byte over NVLink crosses two links (GPU -> NVSwitch -> GPU).
TEST(Links, ClassBytesAreThePlansTraffic) {
  const auto sim = Simulate(DefaultExperiment({}));
  std::map<std::string, double> bytes;
  for (const LinkUsage& u : sim->replay.links) bytes[u.name] = u.bytes;
  const double mib = 1024.0 * 1024;
  const double tp = 16 * (20 * 1024 * mib);
  const double dp = 8 * 1750138880.0 + 8 * 1619066880.0;
  // Within a node: stage 0 -> 1 forward and 1 -> 0 backward, 2 -> 3 and 3 -> 2: 4 x 4 ranks.
  const double pp_intra = 4 * 4 * 16 * 16 * mib;
  // Across nodes (stage 1 -> 2 forward, 2 -> 1 backward): 2 x 4 ranks x 16 x 16 MiB = 2^31 B,
  // each once on a NIC's uplink and downlink and twice on a GPU-NIC (PCIe) link.
  const double cross = 2 * 4 * 16 * 16 * mib;
  EXPECT_DOUBLE_EQ(bytes.at("nic up (to switch)"), cross);
  // The flow model sums rate x interval: exact up to rounding (1e-12 relative) that
  // depends on when other flows start and end (the GPU's fitted efficiencies).
  EXPECT_NEAR(bytes.at("nic down (from switch)"), cross, 1e-12 * cross);
  EXPECT_DOUBLE_EQ(bytes.at("gpu-nic (pcie)"), 2 * cross);
  // Local rank 4-7 on node 0 talks to local rank 0-3 on node 1: another rail. As NCCL's
  // PXN does, every such send first crosses NVLink to the sender node's GPU on the
  // receiver's rail (out of one GPU, into another: twice on NVLink), never the spine.
  EXPECT_DOUBLE_EQ(bytes.at("leaf-spine up"), 0.0);
  EXPECT_DOUBLE_EQ(bytes.at("spine-leaf down"), 0.0);
  EXPECT_NEAR(bytes.at("nvlink"), 2 * (tp + dp + pp_intra) + 2 * cross, 1e-9 * tp);
}

// Item 10 of the hardening issue: bench-collective by nccl-tests' definitions. Hand
// derivations use dgx-h100.yaml: NVLink 450 GB/s x network 0.82 = 369 GB/s per GPU and
// direction, NIC 50 GB/s x nic 0.94 = 47 GB/s, link latencies 2 us (NVLink) and 5 us
// (NIC) for all-to-all. B = 1 GiB over 2 nodes x 8 GPUs.
constexpr double kB = 1 << 30, kNv = 369e9, kNic = 47e9;

CollectiveBenchRow BenchOnce(CommOp op, AllReduceAlgorithm algorithm) {
  auto rows = BenchCollective(Bundled("dgx-h100.yaml"), op, 16, kB, kB, NcclOptions{algorithm});
  EXPECT_TRUE(rows.ok());
  return rows.value().front();
}

TEST(BenchCollective, AllToAllCrossesTheFabricRailAligned) {
  // Each GPU sends B/16 to each of the 8 GPUs of the other node: B/2 leaves the node per
  // GPU. Relayed to the local GPU on the destination's rail (PXN), NIC j carries the
  // B/16 of each of the 8 local GPUs to remote GPU j: B/2 per NIC, at 47 GB/s, plus one
  // NIC latency (NVLink carries 14 x B/16 per GPU, 2.5 ms, not the bottleneck).
  const CollectiveBenchRow r = BenchOnce(CommOp::kAllToAll, AllReduceAlgorithm::kAuto);
  const double expected_s = (kB / 2) / kNic + 5e-6;  // 11.4278 ms
  EXPECT_NEAR(r.time_s, expected_s, 1e-3 * expected_s);
  // nccl-tests: algbw = B / time, busbw = algbw x (n-1)/n.
  EXPECT_NEAR(r.algbw_gbps, kB / expected_s / 1e9, 0.1);            // 93.96
  EXPECT_NEAR(r.busbw_gbps, kB / expected_s / 1e9 * 15 / 16, 0.1);  // 88.09
  // Each NIC sends B/2 in that time: 47 GB/s less the latency's share.
  EXPECT_NEAR(r.nic_gbps, (kB / 2) / expected_s / 1e9, 0.05);  // 46.98
}

TEST(BenchCollective, TreeAndHierarchicalAreDifferentAlgorithms) {
  // Hierarchical (Simple): launch 8.4 us; reduce-scatter in the node (7/8 B per GPU over
  // NVLink, 7 steps of 3.4 us), ring all-reduce of each B/8 shard across the 2 nodes (B/8
  // per NIC; 2 network steps of 14 us at one rank per node, x 1.4 plateau with the launch:
  // (8.4 + 28) x 1.4 - 8.4 = 42.56 us), all-gather in the node (as the reduce-scatter):
  // three phases one after another.
  const double hierarchical_s =
      8.4e-6 + 2 * (7.0 / 8 * kB / kNv + 7 * 3.4e-6) + (kB / 8 / kNic + 42.56e-6);  // 8.118 ms
  // NCCL's tree (Simple at 1 GiB: 92.4 us + B / 165.6 GB/s beats LL128's 48.5 us + B /
  // 146.8 GB/s): 8 channels of B/8, each a chain through the 8 GPUs of a node (B/8 up and
  // down every hop) whose head joins the 2-node double binary tree (B/16 per tree and
  // direction: B/8 per NIC). Each GPU sends 14 x B/8 over NVLink: 5.09 ms, but NCCL's
  // per-channel tree cap (8 search channels x 41.4 GB/s on Hopper, 2 nodes; algbw half
  // of it) allows B / 165.6 GB/s = 6.484 ms. Latency: launch 8.4 us + 2 x (7 x 4.0 us
  // NVLink + floor(log2 2) x 14 us network) = 92.4 us.
  const double tree_s = 92.4e-6 + kB / (0.5 * 8 * 41.4e9);  // 6.576 ms
  EXPECT_NEAR(BenchOnce(CommOp::kAllReduce, AllReduceAlgorithm::kHierarchical).time_s,
              hierarchical_s, 1e-6 * hierarchical_s);
  const CollectiveBenchRow tree = BenchOnce(CommOp::kAllReduce, AllReduceAlgorithm::kTree);
  EXPECT_EQ(tree.algorithm, AllReduceAlgorithm::kTree);
  EXPECT_EQ(tree.protocol, NcclProtocol::kSimple);
  EXPECT_NEAR(tree.time_s, tree_s, 1e-6 * tree_s);
}

// Between GB200 NVL72 racks (NVLink SHARP off, as CoreWeave's nccl-tests runs) a ring
// all-reduce crosses on one rail per channel: on the rail-optimized fabric (no spine on
// the way) two racks keep the NVLink-bound busbw of one rack, and with NICs slower than
// NVLink the NICs of NCCL's search channels bound it: at 5 GB/s a NIC takes the 3 GB/s
// speed step and NVLink would hold 240 such channels, so the search stops at its 32
// (MAXCHANNELS / 2), one NIC each: 32 x 5 GB/s x 0.94 (efficiency.nic) = 150.4 GB/s.
TEST(BenchCollective, RingsBetweenNvl72RacksAreBoundByTheirNics) {
  ClusterSpec c = Bundled("gb200-nvl72.yaml");
  c.intra_node.nvls = NvlsMode::kOff;
  const double kB = 4.0 * (1 << 30);
  const NcclOptions ring{AllReduceAlgorithm::kRing, NcclProtocol::kSimple};
  auto busbw = [&](const ClusterSpec& cluster, int gpus) {
    auto rows = BenchCollective(cluster, CommOp::kAllReduce, gpus, kB, kB, ring);
    EXPECT_TRUE(rows.ok());
    return rows.value().front().busbw_gbps;
  };
  const double rack = busbw(c, 72), racks = busbw(c, 144);
  EXPECT_GT(racks, 0.85 * rack) << rack;
  EXPECT_LT(racks, rack);
  c.inter_node.gbps_per_nic = 5;
  const double nic_bound = busbw(c, 144);
  EXPECT_LT(nic_bound, 32 * 5 * 0.94);
  EXPECT_GT(nic_bound, 0.9 * 32 * 5 * 0.94);
}

// NCCL's tree between NVL72 racks runs one channel per NIC of its topology search: 16 of
// each rack's 72 NICs (nccl_tuner_test.cc, SearchChannelsStopAtNvlinkOrMaxChannels), the
// heads of 16 chains through the rack's 72 GPUs; what crosses between the two racks
// leaves from those 16 GPUs of each.
TEST(BenchCollective, TreeBetweenNvl72RacksUsesTheSearchsNics) {
  ClusterSpec c = Bundled("gb200-nvl72.yaml");
  c.nodes = 36;
  c.intra_node.nvls = NvlsMode::kOff;
  const ClusterSpec view = c.NetworkView();
  const NcclTuner tuner(view);
  std::vector<int> gpus(144);
  std::iota(gpus.begin(), gpus.end(), 0);
  const double kB = 1 << 30;
  const NcclChoice tree = tuner.Evaluate(CommOp::kAllReduce, {144, 2, 72}, kB,
                                         AllReduceAlgorithm::kTree, NcclProtocol::kSimple);
  EXPECT_EQ(tree.max_channels, 32);
  std::set<int> heads;
  for (const Phase& p : CollectivePhases(view, tuner, tree, CommOp::kAllReduce, gpus, kB)) {
    for (const Transfer& t : p.transfers) {
      if (t.src / 72 != t.dst / 72) heads.insert(t.src);
    }
  }
  EXPECT_EQ(heads.size(), 32u);
}

}  // namespace
}  // namespace meshsim

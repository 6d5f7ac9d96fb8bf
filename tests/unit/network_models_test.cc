// One suite over every Network: the alpha-beta cost model (CostModelNetwork over
// AlphaBetaCollectiveModel) and the flow-level network (FlowCollectiveNetwork), each built
// by the factory Simulate uses (MakeNetwork). Expected values are closed forms derived
// by hand; where the two models differ by design, the case says how (NetworkCase).
//
// Clusters (testing::OneNode defaults): 8 A100 GPUs per node on an NVSwitch at 300 GB/s x
// network efficiency 0.85 = kNv = 255e9 B/s per GPU and direction, 2 us latency; across
// nodes 8 NICs of 25 GB/s x 0.85 (nic efficiency: same as network) = kNic = 21.25e9 B/s,
// 5 us latency. B = 2^30 bytes.
//
// All-reduce, all-gather and reduce-scatter run as NCCL's tuner model picks them
// (sim/net/nccl_tuner.h): a launch cost (NCCL's base latency: 8.4 us for ring/Simple, 6.6
// us for ring/LL), then per-hop latencies of the protocol (NVLink: Simple 3.4 us, LL 0.6
// us; network, one rank per node: Simple 14 us). The link latencies above apply to
// sendrecv, ring shift and all-to-all only.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sim/engine/simulation.h"
#include "tests/unit/test_fixtures.h"

namespace meshsim {
namespace {

constexpr double kB = 1 << 30, kNv = 255e9, kNic = 21.25e9;

struct NetworkCase {
  const char* name;
  NetworkModelKind kind;
  // Alpha-beta times each collective alone; flows on shared links share them max-min.
  bool shares_links;
  // Latency-bound steps of an all-to-all over n GPUs: alpha-beta charges a ring's n - 1,
  // the flow model sends to every peer at once (one step).
  bool all_to_all_one_step;
};

class NetworkModels : public ::testing::TestWithParam<NetworkCase> {
 protected:
  // A network of this case's kind for `nodes` nodes of 8 GPUs.
  std::unique_ptr<Network> Make(int nodes = 1) const {
    Experiment e;
    e.cluster = testing::OneNode(8);
    e.cluster.nodes = nodes;
    e.cluster.network_model = GetParam().kind;
    Result<std::unique_ptr<Network>> net = MakeNetwork(e);
    EXPECT_TRUE(net.ok());
    return std::move(net.value());
  }
};

struct Collective {
  CommOp op;
  std::vector<int> gpus;
  double bytes;
  std::vector<std::vector<int>> mirrors = {};
  double start_s = 0;
};

// Starts each collective at its start time; returns when each finished (s), and how
// often its completion was reported (in `reports`, if given).
std::vector<double> Finish(Network& net, const std::vector<Collective>& cs,
                           std::vector<int>* reports = nullptr) {
  Simulator sim;
  std::vector<double> end(cs.size(), -1);
  std::vector<int> count(cs.size(), 0);
  std::vector<bool> returned(cs.size(), false);
  for (size_t i = 0; i < cs.size(); ++i) {
    sim.ScheduleAt(SimTime::Seconds(cs[i].start_s), [&, i] {
      net.Start(
          sim, cs[i].op, cs[i].gpus, cs[i].bytes,
          [&, i] {
            EXPECT_TRUE(returned[i]) << "completion reported inside Start";
            end[i] = sim.Now().seconds();
            ++count[i];
          },
          cs[i].mirrors);
      returned[i] = true;
    });
  }
  sim.Run();
  if (reports) *reports = count;
  return end;
}

// Simulated times are whole picoseconds, and the flow model rounds its rate phase and
// its latency separately.
void ExpectSeconds(double actual, double expected) {
  EXPECT_NEAR(actual, expected, 2e-12 + 1e-9 * expected);
}

// Ring all-reduce over 8 GPUs, Simple at this size (tuner: ring/Simple 56 us + B / (kNv x
// 8/14) = 7.425 ms beats ring/LL128 40.6 us + B / (0.92 kNv x 8/14) = 8.050 ms and
// tree/Simple 64.4 us + B / (0.92 kNv / 2) = 9.218 ms): launch 8.4 us, 2(n-1) = 14 steps
// of 3.4 us, each GPU sends 2(n-1)/n = 7/4 of B: 1,879,048,192 B / kNv = 7.368816 ms;
// 7.424816 ms in all. Every byte leaves its GPU once over NVLink: 8 x 7/4 B = 14 B.
TEST_P(NetworkModels, AllReduceInANodeTakesTheRingClosedForm) {
  auto net = Make();
  const auto end = Finish(*net, {{CommOp::kAllReduce, {0, 1, 2, 3, 4, 5, 6, 7}, kB}});
  ExpectSeconds(end[0], 0.0074248164392156866);
  EXPECT_NEAR(net->IntraNodeBytes(), 14 * kB, 1e-6 * kB);
  EXPECT_EQ(net->InterNodeBytes(), 0.0);
}

// All-gather and reduce-scatter, ring/Simple: launch 8.4 us + n-1 = 7 steps of 3.4 us +
// 7/8 B per GPU: 3.684408 ms + 32.2 us = 3.716608 ms each; 8 x 7/8 B = 7 B over NVLink
// each.
TEST_P(NetworkModels, AllGatherAndReduceScatterTakeHalfARing) {
  auto net = Make();
  const std::vector<int> all{0, 1, 2, 3, 4, 5, 6, 7};
  const auto end =
      Finish(*net, {{CommOp::kAllGather, all, kB}, {CommOp::kReduceScatter, all, kB, {}, 1.0}});
  ExpectSeconds(end[0], 0.0037166082196078434);
  ExpectSeconds(end[1], 1.0 + 0.0037166082196078434);
  EXPECT_NEAR(net->IntraNodeBytes(), 14 * kB, 1e-6 * kB);
}

// Sendrecv inside a node: 2 us + B / kNv = 4.212752 ms; across nodes (GPU 0 to GPU 8,
// NIC to NIC): 5 us + B / kNic = 50.534027 ms. Started one after the other.
TEST_P(NetworkModels, SendRecvTakesLatencyPlusBytesOverTheLink) {
  auto net = Make(2);
  const auto end =
      Finish(*net, {{CommOp::kSendRecv, {0, 1}, kB}, {CommOp::kSendRecv, {0, 8}, kB, {}, 1.0}});
  ExpectSeconds(end[0], 0.004212752250980392);
  ExpectSeconds(end[1], 1.0 + 0.0505340270117647);
  // The literals above are the closed forms written out.
  ExpectSeconds(0.004212752250980392, 2e-6 + kB / kNv);
  ExpectSeconds(0.0505340270117647, 5e-6 + kB / kNic);
  EXPECT_NEAR(net->IntraNodeBytes(), kB, 1e-6 * kB);
  EXPECT_NEAR(net->InterNodeBytes(), kB, 1e-6 * kB);
}

// An all-reduce of one GPU per node ({0, 8}): a ring/Simple of 2 over the NICs, 2 steps,
// both across nodes at NCCL's one-rank-per-node network latency (14 us); a multi-node
// Simple ring pays 1.4x ("plateau"): (8.4 + 2 x 14) x 1.4 = 50.96 us with the launch.
// Each GPU sends 2(n-1)/n = 1 B: B / kNic = 50.529027 ms; 50.579987 ms in all; 2 B
// through NICs.
TEST_P(NetworkModels, AllReduceAcrossNodesRunsOverTheNics) {
  auto net = Make(2);
  const auto end = Finish(*net, {{CommOp::kAllReduce, {0, 8}, kB}});
  ExpectSeconds(end[0], 0.050579987011764706);
  EXPECT_NEAR(net->InterNodeBytes(), 2 * kB, 1e-6 * kB);
  EXPECT_EQ(net->IntraNodeBytes(), 0.0);
}

// Ring shift over 4 GPUs: one step, every member sends B to its successor at once:
// 2 us + B / kNv = 4.212752 ms; 4 B over NVLink.
TEST_P(NetworkModels, RingShiftIsOneStepOfTheRing) {
  auto net = Make();
  const auto end = Finish(*net, {{CommOp::kRingShift, {0, 1, 2, 3}, kB}});
  ExpectSeconds(end[0], 0.004212752250980392);
  EXPECT_NEAR(net->IntraNodeBytes(), 4 * kB, 1e-6 * kB);
}

// All-to-all over 8 GPUs: each sends B/8 to each of the 7 others, 7/8 B per GPU link:
// 3.684408 ms of transfer. Latency: alpha-beta 7 steps (14 us, 3.698408 ms), the flow
// model one (2 us, 3.686408 ms).
TEST_P(NetworkModels, AllToAllMovesSevenEighthsOfTheBuffer) {
  auto net = Make();
  const auto end = Finish(*net, {{CommOp::kAllToAll, {0, 1, 2, 3, 4, 5, 6, 7}, kB}});
  ExpectSeconds(end[0],
                GetParam().all_to_all_one_step ? 0.003686408219607843 : 0.0036984082196078434);
  EXPECT_NEAR(net->IntraNodeBytes(), 7 * kB, 1e-6 * kB);
}

// Nothing to send, or nobody to send to: done at once, no bytes.
TEST_P(NetworkModels, ZeroBytesAndSingleRankFinishAtOnce) {
  auto net = Make();
  const auto end = Finish(*net, {{CommOp::kAllReduce, {0, 1, 2, 3}, 0},
                                 {CommOp::kAllGather, {5}, kB},
                                 {CommOp::kSendRecv, {6, 7}, 0, {}, 0.5}});
  EXPECT_EQ(end, (std::vector<double>{0.0, 0.0, 0.5}));
  EXPECT_EQ(net->IntraNodeBytes(), 0.0);
  EXPECT_EQ(net->InterNodeBytes(), 0.0);
}

// Mirrors on their own links (an NVSwitch gives each GPU its own) load the network but
// neither delay the collective nor report completion. All-reduce of 2, ring/Simple:
// 8.4 us + 2 steps of 3.4 us + 1 B / kNv = 4.225952 ms; each of 3 groups puts 2 x 1 B on
// NVLink: 6 B.
TEST_P(NetworkModels, MirrorsAddTrafficButNoCompletion) {
  auto net = Make();
  std::vector<int> reports;
  const auto end = Finish(*net, {{CommOp::kAllReduce, {0, 1}, kB, {{2, 3}, {4, 5}}}}, &reports);
  ExpectSeconds(end[0], 0.0042259522509803916);
  EXPECT_EQ(reports, std::vector<int>{1});
  EXPECT_NEAR(net->IntraNodeBytes(), 6 * kB, 1e-6 * kB);
}

// Started together, the smaller finishes first, each at its own time: B/4 from GPU 2 to
// GPU 3 in 2 us + B / 4 / kNv = 1.054688 ms, B from 0 to 1 in 4.212752 ms.
TEST_P(NetworkModels, CompletionsComeInTimeOrder) {
  auto net = Make();
  const auto end =
      Finish(*net, {{CommOp::kSendRecv, {0, 1}, kB}, {CommOp::kSendRecv, {2, 3}, kB / 4}});
  ExpectSeconds(end[1], 0.001054688062745098);
  ExpectSeconds(end[0], 0.004212752250980392);
}

// Two sendrecvs from GPU 0 to GPU 1 at once. Alpha-beta times each alone (4.212752 ms);
// the flow model shares GPU 0's link between them: 2 us + 2 B / kNv = 8.423505 ms each.
TEST_P(NetworkModels, CollectivesOnSharedLinks) {
  auto net = Make();
  const auto end = Finish(*net, {{CommOp::kSendRecv, {0, 1}, kB}, {CommOp::kSendRecv, {0, 1}, kB}});
  const double expected = GetParam().shares_links ? 0.008423504501960784 : 0.004212752250980392;
  ExpectSeconds(end[0], expected);
  ExpectSeconds(end[1], expected);
  EXPECT_NEAR(net->IntraNodeBytes(), 2 * kB, 1e-6 * kB);
}

// Disjoint groups do not interfere in either model: two all-reduces of 2 on separate GPUs
// take 4.225952 ms, as alone.
TEST_P(NetworkModels, DisjointGroupsDoNotInterfere) {
  auto net = Make();
  const auto end =
      Finish(*net, {{CommOp::kAllReduce, {0, 1}, kB}, {CommOp::kAllReduce, {2, 3}, kB}});
  ExpectSeconds(end[0], 0.0042259522509803916);
  ExpectSeconds(end[1], 0.0042259522509803916);
}

// A 64 KiB all-reduce over 8 GPUs runs ring/LL (tuner: 6.6 + 14 x 0.6 = 15 us + 64 KiB /
// (87.7 GB/s llMaxBw x 8/14) = 16.31 us, against LL128's 40.6 us of latency alone) on 2
// of the 24 channels: NCCL keeps a channel only for each 512 threads x 64 bytes (LL's 8 x
// 8 ranks). Its data: LL puts 2 bytes on the wire per byte, 64 KiB x 7/4 x 2 / kNv =
// 0.8995 us, but LL's cap allows only 65536 / 50.114 GB/s = 1.30773 us; on 2 channels of
// 24 that is 12 x 1.30773 = 15.6928 us. In all 6.6 us launch + 8.4 us of hops + 15.6928
// us = 30.6928 us. NVLink carries the wire bytes: 8 x 7/4 x 64 KiB x 2.
TEST_P(NetworkModels, SmallAllReduceRunsLLOnFewChannels) {
  auto net = Make();
  const double bytes = 65536;
  const auto end = Finish(*net, {{CommOp::kAllReduce, {0, 1, 2, 3, 4, 5, 6, 7}, bytes}});
  const double cap_s = bytes / (87.7e9 * 8 / 14);
  ExpectSeconds(end[0], 6.6e-6 + 8.4e-6 + 12 * cap_s);
  EXPECT_NEAR(net->IntraNodeBytes(), 8 * 7.0 / 4 * bytes * 2, 1e-6 * bytes);
}

// 4 MiB over 8 GPUs runs ring/LL128 (between the LL/LL128 crossover, 2.05 MB, and the
// LL128/Simple one, 25.8 MB; see nccl_tuner_test.cc) on all 24 channels: launch 14 us,
// 14 steps of 1.9 us = 26.6 us; wire bytes 128/120 of the data: 4 MiB x 7/4 x 16/15 /
// kNv = 30.7020 us, above the cap's 4 MiB / (12 channels x 20 GB/s x 8/14) = 30.5834 us.
TEST_P(NetworkModels, MidSizeAllReduceRunsLL128) {
  auto net = Make();
  const double bytes = 4 << 20;
  const auto end = Finish(*net, {{CommOp::kAllReduce, {0, 1, 2, 3, 4, 5, 6, 7}, bytes}});
  ExpectSeconds(end[0], 14e-6 + 26.6e-6 + bytes * 7 / 4 * 16 / 15 / kNv);
}

// NVLink SHARP on DGX H100-like nodes (NVLink 450 GB/s x 0.82 = 369 GB/s per GPU; 8 NICs
// of 50 x 0.94 = 47 GB/s). One node, 1 GiB: NVLS (nccl_tuner_test.cc: latency 25 us, algbw
// 272 GB/s); each GPU moves 9/8 B through the switch each way, 3.27 ms at 369 GB/s, less
// than the 3.95 ms NCCL's NVLS bandwidth allows, so the data takes B / 272 GB/s. Two
// nodes: NVLSTree, 66.8 us + the pipeline fill 2 x 16 x 128 KiB / 47 GB/s = 89.2 us + B /
// (461.6 x 16/30 GB/s) = 4.36 ms (links: NVLink 3.27 ms, each head's NIC B/8 each way =
// 2.86 ms); the two trees cross the nodes 2 x (2-1) x B.
TEST_P(NetworkModels, NvlsAllReduceOnH100Nodes) {
  auto make = [](int nodes) {
    Experiment e;
    e.cluster = testing::OneNode(8);
    e.cluster.nodes = nodes;
    e.cluster.gpu.kind = "H100-SXM5-80GB";
    e.cluster.gpu.architecture = GpuArch::kHopper;
    e.cluster.intra_node.gbps_per_gpu = 450;
    e.cluster.inter_node.gbps_per_nic = 50;
    e.cluster.efficiency.network = 0.82;
    e.cluster.efficiency.nic = 0.94;
    e.cluster.network_model = GetParam().kind;
    Result<std::unique_ptr<Network>> net = MakeNetwork(e);
    EXPECT_TRUE(net.ok());
    return std::move(net.value());
  };
  auto one = make(1);
  const auto end = Finish(*one, {{CommOp::kAllReduce, {0, 1, 2, 3, 4, 5, 6, 7}, kB}});
  ExpectSeconds(end[0], 25e-6 + kB / 272e9);
  EXPECT_NEAR(one->IntraNodeBytes(), 8 * 9.0 / 8 * kB, 1e-6 * kB);
  auto two = make(2);
  std::vector<int> all(16);
  for (int i = 0; i < 16; ++i) all[i] = i;
  const auto end2 = Finish(*two, {{CommOp::kAllReduce, all, kB}});
  ExpectSeconds(end2[0], 66.8e-6 + 2 * 16 * 131072 / 47e9 + kB / (461.6e9 * 16 / 30));
  EXPECT_NEAR(two->InterNodeBytes(), 2 * kB, 1e-6 * kB);
}

INSTANTIATE_TEST_SUITE_P(
    Every, NetworkModels,
    ::testing::Values(NetworkCase{"AlphaBeta", NetworkModelKind::kAlphaBeta, false, false},
                      NetworkCase{"Flow", NetworkModelKind::kFlow, true, true}),
    [](const ::testing::TestParamInfo<NetworkCase>& info) { return info.param.name; });

}  // namespace
}  // namespace meshsim

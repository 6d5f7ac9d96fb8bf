// One suite over every Network: the alpha-beta cost model (CostModelNetwork over
// AlphaBetaCollectiveModel) and the flow-level network (FlowCollectiveNetwork), each built
// by the factory Simulate uses (MakeNetwork). Expected values are closed forms derived
// by hand; where the two models differ by design, the case says how (NetworkCase).
//
// Clusters (testing::OneNode defaults): 8 GPUs per node on an NVSwitch at 300 GB/s x
// network efficiency 0.85 = kNv = 255e9 B/s per GPU and direction, 2 us latency; across
// nodes 8 NICs of 25 GB/s x 0.85 (nic efficiency: same as network) = kNic = 21.25e9 B/s,
// 5 us latency. B = 2^30 bytes.
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

// Ring all-reduce over 8 GPUs: 2(n-1) = 14 steps of 2 us, each GPU sends 2(n-1)/n = 7/4
// of B: 1,879,048,192 B / kNv = 7.368816 ms; 7.396816 ms in all. Every byte leaves its
// GPU once over NVLink: 8 x 7/4 B = 14 B.
TEST_P(NetworkModels, AllReduceInANodeTakesTheRingClosedForm) {
  auto net = Make();
  const auto end = Finish(*net, {{CommOp::kAllReduce, {0, 1, 2, 3, 4, 5, 6, 7}, kB}});
  ExpectSeconds(end[0], 0.007396816439215687);
  EXPECT_NEAR(net->IntraNodeBytes(), 14 * kB, 1e-6 * kB);
  EXPECT_EQ(net->InterNodeBytes(), 0.0);
}

// All-gather and reduce-scatter: n-1 = 7 steps of 2 us, 7/8 B per GPU: 3.684408 ms +
// 14 us = 3.698408 ms each; 8 x 7/8 B = 7 B over NVLink each.
TEST_P(NetworkModels, AllGatherAndReduceScatterTakeHalfARing) {
  auto net = Make();
  const std::vector<int> all{0, 1, 2, 3, 4, 5, 6, 7};
  const auto end =
      Finish(*net, {{CommOp::kAllGather, all, kB}, {CommOp::kReduceScatter, all, kB, {}, 1.0}});
  ExpectSeconds(end[0], 0.0036984082196078434);
  ExpectSeconds(end[1], 1.0 + 0.0036984082196078434);
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

// An all-reduce of one GPU per node ({0, 8}): a ring of 2 over the NICs, 2 steps of 5 us,
// each GPU sending 2(n-1)/n = 1 B: 10 us + B / kNic = 50.539027 ms; 2 B through NICs.
TEST_P(NetworkModels, AllReduceAcrossNodesRunsOverTheNics) {
  auto net = Make(2);
  const auto end = Finish(*net, {{CommOp::kAllReduce, {0, 8}, kB}});
  ExpectSeconds(end[0], 0.05053902701176471);
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
// neither delay the collective nor report completion. All-reduce of 2: 2 steps of 2 us
// + 1 B / kNv = 4.214752 ms; each of 3 groups puts 2 x 1 B on NVLink: 6 B.
TEST_P(NetworkModels, MirrorsAddTrafficButNoCompletion) {
  auto net = Make();
  std::vector<int> reports;
  const auto end = Finish(*net, {{CommOp::kAllReduce, {0, 1}, kB, {{2, 3}, {4, 5}}}}, &reports);
  ExpectSeconds(end[0], 0.004214752250980391);
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
// take 4.214752 ms, as alone.
TEST_P(NetworkModels, DisjointGroupsDoNotInterfere) {
  auto net = Make();
  const auto end =
      Finish(*net, {{CommOp::kAllReduce, {0, 1}, kB}, {CommOp::kAllReduce, {2, 3}, kB}});
  ExpectSeconds(end[0], 0.004214752250980391);
  ExpectSeconds(end[1], 0.004214752250980391);
}

INSTANTIATE_TEST_SUITE_P(
    Every, NetworkModels,
    ::testing::Values(NetworkCase{"AlphaBeta", NetworkModelKind::kAlphaBeta, false, false},
                      NetworkCase{"Flow", NetworkModelKind::kFlow, true, true}),
    [](const ::testing::TestParamInfo<NetworkCase>& info) { return info.param.name; });

}  // namespace
}  // namespace meshsim

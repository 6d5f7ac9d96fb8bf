// NCCL's tuner model (sim/net/nccl_tuner.h): protocol and algorithm choice per size, ring
// and tree latencies, the launch cost, channels. Expected values are derived by hand from
// NCCL's constants (src/graph/tuning.cc), restated in each comment.
//
// Cluster: testing::OneNode (A100, Ampere caps, AMD host across nodes): NVLink 300 GB/s x
// 0.85 = 255 GB/s per GPU; 8 NICs of 25 GB/s x 0.85 = 21.25 GB/s.
#include "sim/net/nccl_tuner.h"

#include <gtest/gtest.h>

#include "tests/unit/test_fixtures.h"

namespace meshsim {
namespace {

ClusterSpec Cluster(int nodes, const std::string& kind = "A100-SXM4-80GB") {
  ClusterSpec c = testing::OneNode(8);
  c.nodes = nodes;
  c.gpu.kind = kind;
  return c;
}

NcclChoice Auto(const NcclTuner& t, CommOp op, GroupShape g, double bytes) {
  return t.Choose(op, g, bytes, AllReduceAlgorithm::kAuto, NcclProtocol::kAuto);
}

// All-reduce over 8 GPUs of one node, ring (tree never wins on one node here):
//   LL:     6.6 + 14 x 0.6 = 15 us,    busbw min(87.7, 0.5 x 255) = 87.7 GB/s,
//   LL128: 14 + 14 x 1.9 = 40.6 us,    busbw min(0.92 x 255, 12 x 20) = 234.6 GB/s,
//   Simple: 8.4 + 14 x 3.4 = 56 us,    busbw 255 GB/s;
// algbw = busbw x 8/14. LL = LL128 at 25.6 us / (1/50.114 - 1/134.057) = 2.049 MB;
// LL128 = Simple at 15.4 us / (1/134.057 - 1/145.714) = 25.81 MB.
TEST(NcclTuner, ProtocolFollowsSize) {
  const NcclTuner t(Cluster(1));
  const GroupShape node{8, 1, 8};
  auto proto = [&](double bytes) { return Auto(t, CommOp::kAllReduce, node, bytes).protocol; };
  EXPECT_EQ(proto(65536), NcclProtocol::kLL);
  EXPECT_EQ(proto(2.0e6), NcclProtocol::kLL);
  EXPECT_EQ(proto(2.1e6), NcclProtocol::kLL128);
  EXPECT_EQ(proto(25.5e6), NcclProtocol::kLL128);
  EXPECT_EQ(proto(26.0e6), NcclProtocol::kSimple);
  EXPECT_EQ(proto(1 << 30), NcclProtocol::kSimple);
  EXPECT_EQ(Auto(t, CommOp::kAllReduce, node, 1 << 30).algorithm, AllReduceAlgorithm::kRing);
  // The model's time at 64 KiB: 15 us + 65536 / (87.7e9 x 8/14).
  EXPECT_NEAR(Auto(t, CommOp::kAllReduce, node, 65536).estimate_s,
              15e-6 + 65536 / (87.7e9 * 8 / 14), 1e-12);
}

// Ring latency grows with its n-1 steps: all-reduce 2(n-1) hops of 3.4 us (Simple on
// NVLink), all-gather n-1; on 16 nodes x 8 (128 ranks) 254 steps, 30 of them across nodes
// at 14 us, the other 224 at max(3.4, 3 x 2 us network overhead on an AMD host) = 6 us:
// 1764 us.
TEST(NcclTuner, RingLatencyGrowsWithTheSteps) {
  const NcclTuner one(Cluster(1)), many(Cluster(16));
  auto hops = [](const NcclTuner& t, CommOp op, GroupShape g) {
    return t.Evaluate(op, g, 1024, AllReduceAlgorithm::kRing, NcclProtocol::kSimple).hops_s;
  };
  EXPECT_NEAR(hops(one, CommOp::kAllReduce, {2, 1, 2}), 2 * 3.4e-6, 1e-12);
  EXPECT_NEAR(hops(one, CommOp::kAllReduce, {4, 1, 4}), 6 * 3.4e-6, 1e-12);
  EXPECT_NEAR(hops(one, CommOp::kAllReduce, {8, 1, 8}), 14 * 3.4e-6, 1e-12);
  EXPECT_NEAR(hops(one, CommOp::kAllGather, {8, 1, 8}), 7 * 3.4e-6, 1e-12);
  EXPECT_NEAR(hops(many, CommOp::kAllReduce, {128, 16, 8}), 224 * 6e-6 + 30 * 14e-6, 1e-12);
}

// Tree latency grows with log2 of the nodes: 2 x ((8-1) x 4.0 us + floor(log2 k) x 14 us)
// for Simple: 84 us on 2 nodes, 112 on 4, 168 on 16, 252 on 128.
TEST(NcclTuner, TreeLatencyGrowsWithLog2OfTheNodes) {
  auto hops = [](int k) {
    const NcclTuner t(Cluster(k));
    return t
        .Evaluate(CommOp::kAllReduce, {8 * k, k, 8}, 1024, AllReduceAlgorithm::kTree,
                  NcclProtocol::kSimple)
        .hops_s;
  };
  EXPECT_NEAR(hops(2), 84e-6, 1e-12);
  EXPECT_NEAR(hops(4), 112e-6, 1e-12);
  EXPECT_NEAR(hops(16), 168e-6, 1e-12);
  EXPECT_NEAR(hops(128), 252e-6, 1e-12);
}

// On 16 nodes the tree's log latency wins small sizes (LL: 6.8 + 2 x (7 x 0.6 + 4 x 5.0)
// = 55.2 us against the ring's 6.6 + 224 x 2 + 30 x 2.7 = 535.6 us) and the ring's
// bandwidth large ones (4 GiB: ring/Simple algbw 8 x 21.25 x 128/254 = 85.7 GB/s against
// the tree's min(0.92 x 170, 8 x 17.8) / 2 = 71.2 GB/s).
TEST(NcclTuner, TreeForSmallSizesRingForLargeAcrossManyNodes) {
  const NcclTuner t(Cluster(16));
  const GroupShape g{128, 16, 8};
  const NcclChoice small = Auto(t, CommOp::kAllReduce, g, 65536);
  EXPECT_EQ(small.algorithm, AllReduceAlgorithm::kTree);
  EXPECT_EQ(small.protocol, NcclProtocol::kLL);
  const NcclChoice large = Auto(t, CommOp::kAllReduce, g, 4.0 * (1 << 30));
  EXPECT_EQ(large.algorithm, AllReduceAlgorithm::kRing);
  EXPECT_EQ(large.protocol, NcclProtocol::kSimple);
  // All-gather and reduce-scatter have no tree in NCCL's tuner: always a ring.
  EXPECT_EQ(Auto(t, CommOp::kAllGather, g, 65536).algorithm, AllReduceAlgorithm::kRing);
  EXPECT_EQ(
      t.Choose(CommOp::kReduceScatter, g, 65536, AllReduceAlgorithm::kTree, NcclProtocol::kAuto)
          .algorithm,
      AllReduceAlgorithm::kRing);
}

// The launch cost is NCCL's base latency of the pair, paid once per collective.
TEST(NcclTuner, LaunchCostIsNcclsBaseLatency) {
  const NcclTuner t(Cluster(2));
  const GroupShape g{16, 2, 8};
  auto launch = [&](AllReduceAlgorithm a, NcclProtocol p) {
    return t.Evaluate(CommOp::kAllReduce, g, 1 << 20, a, p).launch_s;
  };
  EXPECT_DOUBLE_EQ(launch(AllReduceAlgorithm::kRing, NcclProtocol::kLL), 6.6e-6);
  EXPECT_DOUBLE_EQ(launch(AllReduceAlgorithm::kRing, NcclProtocol::kLL128), 14e-6);
  EXPECT_DOUBLE_EQ(launch(AllReduceAlgorithm::kRing, NcclProtocol::kSimple), 8.4e-6);
  EXPECT_DOUBLE_EQ(launch(AllReduceAlgorithm::kTree, NcclProtocol::kLL), 6.8e-6);
}

// Channels: 24 on one node, 2 per rail across nodes (16 with 8 NICs; 2 with one rank per
// node), or as forced. A collective keeps one channel per threads x threshold bytes:
// Simple 512 x 64 = 32 KiB, so 256 KiB runs on 8 of 24 (stretch 3); LL128 640 x 8 = 5 KiB,
// so 256 KiB keeps all 24; 1 KiB of Simple runs on one.
TEST(NcclTuner, ChannelsFollowTheSizeAndTheNics) {
  const NcclTuner t(Cluster(2)), forced(Cluster(2), 32);
  EXPECT_EQ(t.MaxChannels({8, 1, 8}), 24);
  EXPECT_EQ(t.MaxChannels({16, 2, 8}), 16);
  EXPECT_EQ(t.MaxChannels({2, 2, 1}), 2);
  EXPECT_EQ(forced.MaxChannels({16, 2, 8}), 32);
  auto ring = [&](double bytes, NcclProtocol p) {
    return t.Evaluate(CommOp::kAllReduce, {8, 1, 8}, bytes, AllReduceAlgorithm::kRing, p);
  };
  EXPECT_EQ(ring(262144, NcclProtocol::kSimple).channels, 8);
  EXPECT_DOUBLE_EQ(ring(262144, NcclProtocol::kSimple).stretch, 3.0);
  EXPECT_EQ(ring(262144, NcclProtocol::kLL128).channels, 24);
  EXPECT_EQ(ring(1024, NcclProtocol::kSimple).channels, 1);
}

// Absolute caps: LL's llMaxBw is 87.7 GB/s on one A100 node, 141 on one H100 node, 22.5
// across 2 nodes of AMD hosts (DGX A100) and 39.0 of Intel hosts (DGX H100); algbw is
// busbw x n / steps. Simple rings have none.
TEST(NcclTuner, CapsFollowGenerationAndHost) {
  auto cap = [](const std::string& kind, GroupShape g, NcclProtocol p) {
    const NcclTuner t(Cluster(g.nodes, kind));
    return t.Evaluate(CommOp::kAllReduce, g, 1 << 20, AllReduceAlgorithm::kRing, p).cap_algbw;
  };
  EXPECT_NEAR(cap("A100-SXM4-80GB", {8, 1, 8}, NcclProtocol::kLL), 87.7e9 * 8 / 14, 1);
  EXPECT_NEAR(cap("H100-SXM5-80GB", {8, 1, 8}, NcclProtocol::kLL), 141e9 * 8 / 14, 1);
  EXPECT_NEAR(cap("A100-SXM4-80GB", {16, 2, 8}, NcclProtocol::kLL), 22.5e9 * 16 / 30, 1);
  EXPECT_NEAR(cap("H100-SXM5-80GB", {16, 2, 8}, NcclProtocol::kLL), 39.0e9 * 16 / 30, 1);
  EXPECT_TRUE(std::isinf(cap("A100-SXM4-80GB", {8, 1, 8}, NcclProtocol::kSimple)));
}

TEST(NcclTuner, WireBytesOfTheProtocols) {
  EXPECT_DOUBLE_EQ(NcclTuner::WireFactor(NcclProtocol::kLL), 2.0);
  EXPECT_DOUBLE_EQ(NcclTuner::WireFactor(NcclProtocol::kLL128), 128.0 / 120.0);
  EXPECT_DOUBLE_EQ(NcclTuner::WireFactor(NcclProtocol::kSimple), 1.0);
}

// Forcing: a protocol, as NCCL_PROTO; hierarchical (meshsim's own) reports itself and
// defaults to Simple.
TEST(NcclTuner, ForcedChoices) {
  const NcclTuner t(Cluster(2));
  const GroupShape g{16, 2, 8};
  EXPECT_EQ(t.Choose(CommOp::kAllReduce, g, 1 << 30, AllReduceAlgorithm::kAuto, NcclProtocol::kLL)
                .protocol,
            NcclProtocol::kLL);
  const NcclChoice h =
      t.Choose(CommOp::kAllReduce, g, 1024, AllReduceAlgorithm::kHierarchical, NcclProtocol::kAuto);
  EXPECT_EQ(h.algorithm, AllReduceAlgorithm::kHierarchical);
  EXPECT_EQ(h.protocol, NcclProtocol::kSimple);
}

}  // namespace
}  // namespace meshsim

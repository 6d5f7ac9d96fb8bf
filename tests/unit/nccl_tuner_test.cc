// NCCL's tuner model (sim/net/nccl_tuner.h): protocol and algorithm choice per size, ring
// and tree latencies, the launch cost, channels. Expected values are derived by hand from
// NCCL's constants (src/graph/tuning.cc), restated in each comment.
//
// Cluster: testing::OneNode (A100, Ampere caps, AMD host across nodes): NVLink 300 GB/s x
// 0.85 = 255 GB/s per GPU; 8 NICs of 25 GB/s x 0.85 = 21.25 GB/s.
#include "sim/net/nccl_tuner.h"

#include <gtest/gtest.h>

#include <span>
#include <vector>

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

// Across nodes the communicator has twice the channels of NCCL's topology search
// (search.cc), which gives each channel a NIC and, on an NVSwitch, no more channels than
// the GPU's NVLink (as NCCL counts it) carries at the search's speed step:
//   8 A100s, 8 HDR NICs: 24 GB/s steps, 240 GB/s of NVLink holds 10: 8 -> 16 channels;
//   72 A100s of one NVLink domain with 72 HDR NICs: 240 / 24 = 10 (10 x 24 = 240 reaches
//   the NVLink: the search stops) -> 20 channels;
//   a GB200 NVL72 domain (Blackwell, 721.8 GB/s): 15 x 48 = 720 < 16 x 45.1 = 721.6 -> 32
//   channels (2 x 72 NICs would be 144, MAXCHANNELS 64);
//   without an NVSwitch (a full mesh) the NICs alone: 2 x 72, at most MAXCHANNELS, 64.
TEST(NcclTuner, SearchChannelsStopAtNvlinkOrMaxChannels) {
  EXPECT_EQ(NcclTuner(Cluster(2)).MaxChannels({16, 2, 8}), 16);
  ClusterSpec domain = Cluster(2);
  domain.gpus_per_node = 72;
  domain.inter_node.nics_per_node = 72;
  EXPECT_EQ(NcclTuner(domain).MaxChannels({144, 2, 72}), 20);
  EXPECT_EQ(NcclTuner(domain).MaxChannels({32, 2, 16}), 20);
  EXPECT_EQ(NcclTuner(domain).MaxChannels({16, 2, 8}), 16);
  ClusterSpec nvl72 = domain;
  nvl72.gpu.kind = "GB200-Blackwell-186GB";
  nvl72.gpu.architecture = GpuArch::kBlackwell;
  nvl72.intra_node.gbps_per_gpu = 900;
  nvl72.inter_node.gbps_per_nic = 50;
  EXPECT_EQ(NcclTuner(nvl72).MaxChannels({1440, 20, 72}), 32);
  ClusterSpec mesh = domain;
  mesh.intra_node.kind = IntraNodeKind::kFullMesh;
  EXPECT_EQ(NcclTuner(mesh).MaxChannels({144, 2, 72}), 64);
  EXPECT_EQ(NcclTuner(mesh).MaxChannels({32, 2, 16}), 32);
}

// Two NICs per GPU (OCI BM.GPU4.8: 16 x 100 Gb/s for 8 A100s): NCCL's search gives each
// NIC of a GPU a channel (topo.cc, ncclTopoGetLocalNet; search.cc, ncclTopoSearchRecNet):
// 16 NICs at the 12 GB/s speed step (240 GB/s of NVLink holds 20), 16 search channels,
// 32 channels (8 and 16 with 8 x 25 GB/s NICs); 4 ranks per node reach their 8 NICs. The
// ring's NIC bound is the same (16 x 12.5 = 8 x 25 GB/s), the tree's per-channel cap
// doubles: 1 GiB tree/Simple at 0.92 x 255 = 234.6 GB/s (NVLink) instead of 8 x 23.6 =
// 188.8, algbw half of it; the latencies are the same.
TEST(NcclTuner, SearchGivesEveryNicOfAGpuAChannel) {
  ClusterSpec oci = Cluster(2);
  oci.inter_node.nics_per_node = 16;
  oci.inter_node.gbps_per_nic = 12.5;
  const NcclTuner t(oci), dgx(Cluster(2));
  EXPECT_EQ(t.MaxChannels({16, 2, 8}), 32);
  EXPECT_EQ(dgx.MaxChannels({16, 2, 8}), 16);
  EXPECT_EQ(t.MaxChannels({8, 2, 4}), 16);
  const double kB = 1 << 30;
  auto eval = [&](const NcclTuner& tuner, AllReduceAlgorithm a) {
    return tuner.Evaluate(CommOp::kAllReduce, {16, 2, 8}, kB, a, NcclProtocol::kSimple).estimate_s;
  };
  EXPECT_NEAR(eval(t, AllReduceAlgorithm::kTree) - eval(dgx, AllReduceAlgorithm::kTree),
              kB / (0.5 * 234.6e9) - kB / (0.5 * 188.8e9), 1e-9);
  EXPECT_NEAR(eval(t, AllReduceAlgorithm::kRing), eval(dgx, AllReduceAlgorithm::kRing), 1e-12);
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

// NVLink SHARP. Clusters as DGX H100 / B200: NVLink 450 (H100) or 900 (B200) GB/s x 0.82
// = 369 or 738 GB/s per GPU; 8 NICs of 50 GB/s x 0.94 = 47 GB/s.
ClusterSpec Dgx(int nodes, const std::string& kind, GpuArch arch, double nvlink) {
  ClusterSpec c = Cluster(nodes, kind);
  c.gpu.architecture = arch;
  c.intra_node.gbps_per_gpu = nvlink;
  c.efficiency.network = 0.82;
  c.efficiency.nic = 0.94;
  c.inter_node.gbps_per_nic = 50;
  return c;
}
ClusterSpec H100(int nodes) { return Dgx(nodes, "H100-SXM5-80GB", GpuArch::kHopper, 450); }

// NVLS applies where the switch reduces (Hopper or newer on an NVSwitch, unless
// intra_node.nvls says otherwise) and >= 2 ranks share a node; all-gather and
// reduce-scatter only on one node.
TEST(NcclTuner, NvlsFitsHopperAndNewerOnAnNvswitch) {
  const GroupShape node{8, 1, 8}, two{16, 2, 8}, spread{16, 16, 1};
  const NcclTuner h100(H100(2));
  EXPECT_TRUE(h100.NvlsFits(CommOp::kAllReduce, node));
  EXPECT_TRUE(h100.NvlsFits(CommOp::kAllReduce, two));
  EXPECT_FALSE(h100.NvlsFits(CommOp::kAllReduce, spread));
  EXPECT_TRUE(h100.NvlsFits(CommOp::kAllGather, node));
  EXPECT_FALSE(h100.NvlsFits(CommOp::kReduceScatter, two));
  EXPECT_FALSE(NcclTuner(Cluster(1)).NvlsFits(CommOp::kAllReduce, node));  // A100
  ClusterSpec off = H100(1), ring = H100(1), on = Cluster(1);
  off.intra_node.nvls = NvlsMode::kOff;
  ring.intra_node.kind = IntraNodeKind::kRing;
  on.intra_node.nvls = NvlsMode::kOn;
  EXPECT_FALSE(NcclTuner(off).NvlsFits(CommOp::kAllReduce, node));
  EXPECT_FALSE(NcclTuner(ring).NvlsFits(CommOp::kAllReduce, node));
  EXPECT_FALSE(NcclTuner(on).NvlsFits(CommOp::kAllReduce, node));  // no NVLS before Hopper
}

// One H100 node: NVLS's per-channel speed is the search's step below NCCL's NVLink, 450
// x 20.6/25 = 370.8 GB/s, over 8 + 1: 41.2 GB/s: 40; busbw 8 x 40 x 0.85 x 7/8 x 2 = 476 GB/s,
// algbw 476 x 8/14 = 272 GB/s; latency 25 us, 16 channels. Against ring/LL (15 us, algbw 141 x 8/14
// = 80.571 GB/s) it wins from 10 us / (1/80.571 - 1/272) GB/s = 1.145 MB: 1 MiB runs LL, 2 MiB NVLS
// (as NCCL 2.26 did in nccl-tests #309: "8B~1MB: RING LL, 2MB~16GB NVLS SIMPLE").
TEST(NcclTuner, NvlsOnOneH100Node) {
  const NcclTuner t(H100(1));
  const GroupShape node{8, 1, 8};
  const NcclChoice c = Auto(t, CommOp::kAllReduce, node, 1 << 30);
  EXPECT_EQ(c.algorithm, AllReduceAlgorithm::kNvls);
  EXPECT_EQ(c.protocol, NcclProtocol::kSimple);
  EXPECT_EQ(c.channels, 16);
  EXPECT_EQ(c.heads, 8);
  EXPECT_NEAR(c.cap_algbw, 272e9, 1e3);
  EXPECT_DOUBLE_EQ(c.launch_s, 0);
  EXPECT_NEAR(c.hops_s, 25e-6, 1e-12);
  EXPECT_NEAR(c.estimate_s, 25e-6 + (1 << 30) / 272e9, 1e-12);
  EXPECT_EQ(Auto(t, CommOp::kAllReduce, node, 1 << 20).algorithm, AllReduceAlgorithm::kRing);
  EXPECT_EQ(Auto(t, CommOp::kAllReduce, node, 1 << 20).protocol, NcclProtocol::kLL);
  EXPECT_EQ(Auto(t, CommOp::kAllReduce, node, 2 << 20).algorithm, AllReduceAlgorithm::kNvls);
}

// Two H100 nodes: NVLSTree. Speed 40 (the network steps: 48, 45, 42, 40 <= 41.2), NICs 45
// (<= 47); busbw 8 x min(40 x 0.85 x 7/8 x 2 = 59.5, 2 x 45, 57.7) = 461.6 GB/s (nccl-tests
// #309 measured 466.5 at 4 GiB), algbw x 16/30; latency 25 + 2 x 1 x 20.9 = 66.8 us. Four
// nodes: 8 x min(59.5, 45, 45.5) = 360 GB/s, 25 + 2 x 2 x 20.9 = 108.6 us. Small sizes keep
// the tree's LL (64 KiB).
TEST(NcclTuner, NvlsTreeAcrossH100Nodes) {
  const NcclTuner two(H100(2)), four(H100(4));
  const NcclChoice c = Auto(two, CommOp::kAllReduce, {16, 2, 8}, 1 << 30);
  EXPECT_EQ(c.algorithm, AllReduceAlgorithm::kNvlsTree);
  EXPECT_NEAR(c.cap_algbw, 461.6e9 * 16 / 30, 1e3);
  EXPECT_NEAR(c.hops_s, 66.8e-6, 1e-12);
  const NcclChoice f = Auto(four, CommOp::kAllReduce, {32, 4, 8}, 1 << 30);
  EXPECT_EQ(f.algorithm, AllReduceAlgorithm::kNvlsTree);
  EXPECT_NEAR(f.cap_algbw, 360e9 * 32 / 62, 1e3);
  EXPECT_NEAR(f.hops_s, 108.6e-6, 1e-12);
  EXPECT_EQ(Auto(two, CommOp::kAllReduce, {16, 2, 8}, 65536).algorithm, AllReduceAlgorithm::kTree);
}

// NVLSTree's pipeline fill, 2 floor(log2 k) x 16 channels x chunk / 47 GB/s, with NCCL's
// chunks for 16 x 8 = 128 ops: 128 KiB from 64 MiB, 64 KiB from 8 MiB, 32 KiB below,
// and 1 MiB / 128 = 8 KiB at 1 MiB; 64 KiB at any size from 4 nodes. One node has none.
TEST(NcclTuner, NvlsTreeFillFollowsNcclsChunks) {
  const NcclTuner two(H100(2)), four(H100(4)), one(H100(1));
  auto fill = [](const NcclTuner& t, GroupShape g, double bytes) {
    return t
        .Evaluate(CommOp::kAllReduce, g, bytes, AllReduceAlgorithm::kNvlsTree,
                  NcclProtocol::kSimple)
        .fill_s;
  };
  const GroupShape g2{16, 2, 8}, g4{32, 4, 8};
  EXPECT_NEAR(fill(two, g2, 1 << 30), 2 * 16 * 131072 / 47e9, 1e-15);
  EXPECT_NEAR(fill(two, g2, 64 << 20), 2 * 16 * 131072 / 47e9, 1e-15);
  EXPECT_NEAR(fill(two, g2, 32 << 20), 2 * 16 * 65536 / 47e9, 1e-15);
  EXPECT_NEAR(fill(two, g2, 8 << 20), 2 * 16 * 65536 / 47e9, 1e-15);
  EXPECT_NEAR(fill(two, g2, 4 << 20), 2 * 16 * 32768 / 47e9, 1e-15);
  EXPECT_NEAR(fill(two, g2, 1 << 20), 2 * 16 * 8192 / 47e9, 1e-15);
  EXPECT_NEAR(fill(four, g4, 1 << 30), 4 * 16 * 65536 / 47e9, 1e-15);
  EXPECT_DOUBLE_EQ(fill(one, {8, 1, 8}, 1 << 30), 0);
}

// Blackwell: efficiency 0.74, sm100 speeds, NCCL's NVLink 900 x 40.1/50 = 721.8 GB/s.
// 8 x B200: 721.8 / 9 = 80.2 -> 80; busbw 8 x 80 x 0.74 x 7/8 x 2 = 828.8 GB/s, 24
// channels. A 72-GPU NVLink domain: 32 heads, 721.8 / 33 = 21.9 -> 20; busbw 32 x 20 x 0.74 x 31/32
// x 2 = 917.6 GB/s. Across two B200 nodes NCCL corrects NVLSTree by the trees' Simple table on x86
// hosts (1 MiB: log2(2^20/64) = 14: 0.5, stretch 2), not on Grace (GB200).
TEST(NcclTuner, NvlsOnBlackwellAndAnNvl72Domain) {
  const NcclTuner b200(Dgx(1, "B200-SXM-180GB", GpuArch::kBlackwell, 900));
  const NcclChoice c = Auto(b200, CommOp::kAllReduce, {8, 1, 8}, 1 << 30);
  EXPECT_EQ(c.algorithm, AllReduceAlgorithm::kNvls);
  EXPECT_EQ(c.channels, 24);
  EXPECT_NEAR(c.cap_algbw, 828.8e9 * 8 / 14, 1e3);
  ClusterSpec nvl72 = Dgx(1, "GB200-Blackwell-186GB", GpuArch::kBlackwell, 900);
  nvl72.gpus_per_node = 72;
  const NcclChoice d = Auto(NcclTuner(nvl72), CommOp::kAllReduce, {72, 1, 72}, 1 << 30);
  EXPECT_EQ(d.algorithm, AllReduceAlgorithm::kNvls);
  EXPECT_EQ(d.heads, 32);
  EXPECT_NEAR(d.cap_algbw, 917.6e9 * 72 / 142, 1e3);
  auto tree = [](const std::string& kind) {
    const NcclTuner t(Dgx(2, kind, GpuArch::kBlackwell, 900));
    return t.Evaluate(CommOp::kAllReduce, {16, 2, 8}, 1 << 20, AllReduceAlgorithm::kNvlsTree,
                      NcclProtocol::kSimple);
  };
  EXPECT_EQ(tree("B200-SXM-180GB").algorithm, AllReduceAlgorithm::kNvlsTree);
  // Across two B200 nodes the search's intra speed is the network step below 80.2: 80;
  // busbw 8 x min(80 x 0.74 x 7/8 x 2 = 103.6, 2 x 45.1 (NICs of 47 GB/s), 96) = 721.6.
  EXPECT_NEAR(tree("B200-SXM-180GB").cap_algbw, 721.6e9 * 16 / 30, 1e3);
  EXPECT_DOUBLE_EQ(tree("B200-SXM-180GB").stretch, 2.0);
  EXPECT_DOUBLE_EQ(tree("GB200-Blackwell-186GB").stretch, 1.0);
}

// Twenty GB200 NVL72 racks (NVLS off, as CoreWeave ran them; Grace hosts: no LL128 across
// nodes): NCCL's search gives 16 channels (SearchChannelsStopAtNvlinkOrMaxChannels), so
// its tree is capped at 16 x perChMaxTreeBw (24 GB/s: Blackwell, more than two nodes) =
// 384 GB/s busbw, 192 GB/s algbw (with 2 x 72 NICs' 32 search channels it was 768). At 4
// GiB the tree, 688.4 us (8.4 + 2 x (71 x 4.0 + floor(log2 20) x 14)) + 2^32 / 192e9 =
// 23.06 ms, beats the ring, 14.275 ms (1.4 x (8.4 + 2840 x 3.4 + 38 x 14 us)) + 2^32 /
// (738 GB/s x 1440 / 2878) = 25.91 ms; at 8 GiB the ring wins (37.54 against 45.43 ms).
TEST(NcclTuner, TreeAcrossNvl72RacksIsCappedPerSearchChannel) {
  ClusterSpec c = Dgx(20, "GB200-Blackwell-186GB", GpuArch::kBlackwell, 900);
  c.gpus_per_node = 72;
  c.inter_node.nics_per_node = 72;
  c.intra_node.nvls = NvlsMode::kOff;
  const NcclTuner t(c);
  const GroupShape g{1440, 20, 72};
  const double kB = 4.0 * (1 << 30);
  const NcclChoice four = Auto(t, CommOp::kAllReduce, g, kB);
  EXPECT_EQ(four.algorithm, AllReduceAlgorithm::kTree);
  EXPECT_EQ(four.protocol, NcclProtocol::kSimple);
  EXPECT_EQ(four.max_channels, 32);
  EXPECT_NEAR(four.cap_algbw, 192e9, 1e3);
  EXPECT_NEAR(four.estimate_s, 688.4e-6 + kB / 192e9, 1e-9);
  const NcclChoice eight = Auto(t, CommOp::kAllReduce, g, 2 * kB);
  EXPECT_EQ(eight.algorithm, AllReduceAlgorithm::kRing);
  EXPECT_NEAR(eight.estimate_s,
              1.4 * (8.4 + 2840 * 3.4 + 38 * 14) * 1e-6 + 2 * kB / (738e9 * 1440 / 2878), 1e-9);
}

// NCCL enables LL128 by default only where its graphs reach the NICs through a PCIe switch
// (typeInter <= PXN on Hopper and later, tuning.cc); a Grace superchip's NICs sit on the
// CPU (PHB), so across GB200 nodes the tuner never picks LL128 unless forced, while two
// B200 nodes (x86 host, NICs behind PCIe switches) do at mid sizes, and one NVL72 domain
// keeps it (NVLink only).
TEST(NcclTuner, Ll128OffByDefaultAcrossGraceNodes) {
  auto picks_ll128 = [](const std::string& kind, int nodes, int per_node) {
    ClusterSpec c = Dgx(nodes, kind, GpuArch::kBlackwell, 900);
    c.gpus_per_node = per_node;
    c.intra_node.nvls = NvlsMode::kOff;
    const NcclTuner t(c);
    const GroupShape g{nodes * per_node, nodes, per_node};
    for (double bytes = 65536; bytes <= 4.0 * (1 << 30); bytes *= 2) {
      if (Auto(t, CommOp::kAllReduce, g, bytes).protocol == NcclProtocol::kLL128) return true;
    }
    return false;
  };
  EXPECT_TRUE(picks_ll128("B200-SXM-180GB", 2, 8));
  EXPECT_FALSE(picks_ll128("GB200-Blackwell-186GB", 2, 8));
  EXPECT_FALSE(picks_ll128("GB200-Blackwell-186GB", 20, 72));
  EXPECT_TRUE(picks_ll128("GB200-Blackwell-186GB", 1, 72));
  ClusterSpec gb = Dgx(2, "GB200-Blackwell-186GB", GpuArch::kBlackwell, 900);
  gb.intra_node.nvls = NvlsMode::kOff;
  EXPECT_EQ(NcclTuner(gb)
                .Choose(CommOp::kAllReduce, {16, 2, 8}, 1 << 24, AllReduceAlgorithm::kAuto,
                        NcclProtocol::kLL128)
                .protocol,
            NcclProtocol::kLL128);
}

// All-gather may run NVLS on one node: busbw 8 x 40 x 0.85 x 7/8 x 7/8 = 208.25 GB/s, taken
// as algbw; the rings beat it at every size (LL 10.8 us + S / 161.1 GB/s below ~1 MB,
// LL128 27.3 us + S / 388 GB/s above), so only forcing runs it. Forcing NVLS where it
// does not fit (A100, all-gather across nodes) or with LL runs a ring.
TEST(NcclTuner, ForcedNvls) {
  const NcclTuner t(H100(2));
  const GroupShape node{8, 1, 8};
  for (double bytes : {65536.0, 1048576.0, 16777216.0, 1073741824.0}) {
    EXPECT_EQ(Auto(t, CommOp::kAllGather, node, bytes).algorithm, AllReduceAlgorithm::kRing);
  }
  const NcclChoice ag =
      t.Choose(CommOp::kAllGather, node, 1 << 30, AllReduceAlgorithm::kNvls, NcclProtocol::kAuto);
  EXPECT_EQ(ag.algorithm, AllReduceAlgorithm::kNvls);
  EXPECT_NEAR(ag.cap_algbw, 208.25e9, 1e3);
  EXPECT_EQ(t.Choose(CommOp::kAllGather, {16, 2, 8}, 1 << 30, AllReduceAlgorithm::kNvls,
                     NcclProtocol::kAuto)
                .algorithm,
            AllReduceAlgorithm::kRing);
  EXPECT_EQ(
      t.Choose(CommOp::kAllReduce, node, 1 << 30, AllReduceAlgorithm::kNvls, NcclProtocol::kLL)
          .algorithm,
      AllReduceAlgorithm::kRing);
  EXPECT_EQ(
      NcclTuner(Cluster(1))
          .Choose(CommOp::kAllReduce, node, 1 << 30, AllReduceAlgorithm::kNvls, NcclProtocol::kAuto)
          .algorithm,
      AllReduceAlgorithm::kRing);
  EXPECT_EQ(Auto(t, CommOp::kAllReduce, node, 4 << 20).algorithm, AllReduceAlgorithm::kNvls);
  EXPECT_EQ(
      t.Choose(CommOp::kAllReduce, node, 4 << 20, AllReduceAlgorithm::kAuto, NcclProtocol::kLL128)
          .algorithm,
      AllReduceAlgorithm::kRing);
}

// GroupShapeOf counts nodes and the most ranks on one: small groups through a table on the
// stack, groups of more than 16 by sorting, both against a count by hand.
TEST(GroupShapeOf, CountsNodesAndTheFullestNodeOfSmallAndLargeGroups) {
  const std::vector<int> tp = {8, 9, 10, 11};  // 4 GPUs of node 1
  GroupShape g = GroupShapeOf(8, tp);
  EXPECT_EQ(g.ranks, 4);
  EXPECT_EQ(g.nodes, 1);
  EXPECT_EQ(g.per_node, 4);
  const std::vector<int> pair = {3, 77};  // nodes 0 and 9
  g = GroupShapeOf(8, pair);
  EXPECT_EQ(g.nodes, 2);
  EXPECT_EQ(g.per_node, 1);
  // 20 GPUs: 2 on each of nodes 0..7, then 4 on node 9, listed out of node order.
  std::vector<int> dp;
  for (int n = 7; n >= 0; --n) dp.insert(dp.end(), {8 * n, 8 * n + 4});
  dp.insert(dp.end(), {72, 73, 74, 75});
  g = GroupShapeOf(8, dp);
  EXPECT_EQ(g.ranks, 20);
  EXPECT_EQ(g.nodes, 9);
  EXPECT_EQ(g.per_node, 4);
  // The same 16 GPUs on 16 nodes either side of the two paths' border.
  std::vector<int> spread;
  for (int n = 0; n < 17; ++n) spread.push_back(8 * n + 1);
  EXPECT_EQ(GroupShapeOf(8, std::span(spread).first(16)).nodes, 16);
  EXPECT_EQ(GroupShapeOf(8, spread).nodes, 17);
  EXPECT_EQ(GroupShapeOf(8, spread).per_node, 1);
}

}  // namespace
}  // namespace meshsim

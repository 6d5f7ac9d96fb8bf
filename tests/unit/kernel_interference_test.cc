// The compute slowdown of an NCCL collective from the SMs its kernel holds
// (CommInterference::kFromKernel, CommSlowdowns, ReplayOptions::comm_slowdown), and the
// fixed per-kind numbers a user may give instead.
#include "sim/engine/kernel_interference.h"

#include <gtest/gtest.h>

#include "sim/config/loader.h"
#include "sim/engine/replay.h"
#include "sim/engine/simulation.h"
#include "sim/report/step_summary.h"
#include "tests/unit/fixed_time_network.h"
#include "tests/unit/test_fixtures.h"

namespace meshsim {
namespace {

// Two DGX A100-like nodes (8 GPUs, 8 NICs, 108 SMs; Ampere: no NVLS).
ClusterSpec TwoNodes() {
  ClusterSpec c = testing::OneNode(8);
  c.nodes = 2;
  return c;
}

// A 1 GiB all-reduce over one node (NCCL: 24 channels) and one over a rank of each node
// (a DP ring, one NIC per node: 2 channels).
struct TwoRings {
  Program program{16};
  int32_t node_ring = 0, cross_ring = 0;
};
TwoRings MakeTwoRings() {
  TwoRings t;
  Program& p = t.program;
  t.node_ring = p.AddComm(CommOp::kAllReduce, p.AddGroup({0, 1, 2, 3, 4, 5, 6, 7}), 1 << 30);
  t.cross_ring = p.AddComm(CommOp::kAllReduce, p.AddGroup({0, 8}), 1 << 30);
  return t;
}

TEST(KernelInterference, FewChannelsSlowComputeLessByTheSmsTheyHold) {
  const ClusterSpec c = TwoNodes();
  const TwoRings t = MakeTwoRings();
  const std::vector<float> s = CommSlowdowns(c, NcclOptions{}, t.program);
  ASSERT_EQ(s.size(), 2u);
  // One CTA (SM) per channel; the compute runs on the other 108 - channels SMs.
  const uint32_t node_ring = t.program.comms()[t.node_ring].signature;
  const uint32_t cross_ring = t.program.comms()[t.cross_ring].signature;
  EXPECT_FLOAT_EQ(s[node_ring], 24.0f / (108 - 24));
  EXPECT_FLOAT_EQ(s[cross_ring], 2.0f / (108 - 2));
  EXPECT_LT(s[cross_ring], s[node_ring] / 10);
}

// On one node of H100s the switch reduces: a large all-reduce runs NVLS, on NCCL's 16 NVLS
// channels (nvlsChannels on Hopper), not a ring's 24.
TEST(KernelInterference, NvlsHoldsItsOwnChannels) {
  ClusterSpec c = testing::OneNode(8);
  c.gpu.kind = "H100-SXM5-80GB";
  c.gpu.architecture = GpuArch::kHopper;
  c.gpu.sms = 132;
  c.intra_node.gbps_per_gpu = 450;
  Program p(8);
  const int32_t ar = p.AddComm(CommOp::kAllReduce, p.AddGroup({0, 1, 2, 3, 4, 5, 6, 7}), 1 << 30);
  const NcclChoice choice = NcclTuner(c).Choose(CommOp::kAllReduce, GroupShape{8, 1, 8}, 1 << 30,
                                                AllReduceAlgorithm::kAuto, NcclProtocol::kAuto);
  ASSERT_EQ(choice.algorithm, AllReduceAlgorithm::kNvls);
  ASSERT_EQ(choice.channels, 16);
  EXPECT_FLOAT_EQ(CommSlowdowns(c, NcclOptions{}, p)[p.comms()[ar].signature], 16.0f / (132 - 16));
}

TEST(KernelInterference, ExplicitNumbersAreFixedPerKind) {
  ClusterSpec c = TwoNodes();
  const TwoRings t = MakeTwoRings();
  c.efficiency.comm_interference = CommInterference{0.19, 0.19, 0.19, 0.19, 0.02};
  EXPECT_TRUE(CommSlowdowns(c, NcclOptions{}, t.program).empty());  // all by kind
  // Only all-gathers from the kernel: the all-reduces keep their kind's number (-1).
  c.efficiency.comm_interference.all_gather = CommInterference::kFromKernel;
  const std::vector<float> s = CommSlowdowns(c, NcclOptions{}, t.program);
  ASSERT_EQ(s.size(), 2u);
  for (const float one : s) EXPECT_EQ(one, -1.0f);
}

// Rank 0: kernel A (2 us), then an all-reduce (4 us) beside kernel B (10 us).
struct Beside {
  Program program{1};
  OpId b = 0;
};
Beside AllReduceBesideKernel() {
  Beside o;
  Program& p = o.program;
  const int32_t c = p.AddComm(CommOp::kAllReduce, p.AddGroup({0}), 1e6);
  const OpId a = p.AddCompute(0, Tag::kMlpFwd, KernelWork{2e9, 0, 1});
  const OpId comm = p.AddCommPart(0, Stream::kTp, c, Tag::kTpComm);
  p.AddDep(a, comm);
  o.b = p.AddCompute(0, Tag::kMlpFwd, KernelWork{10e9, 0, 1});
  p.Finalize();
  return o;
}

SimTime InterferenceWith(const Beside& o, const ReplayOptions& options) {
  testing::FlopsOnlyComputeModel compute;
  FixedTimeNetwork network{SimTime::Microseconds(4)};  // every collective 4 us
  const ReplayResult r = Replay(o.program, compute, network, options);
  EXPECT_TRUE(r.completed) << r.stall;
  return r.Interference(o.program, o.b);
}

// B runs 4 us beside the all-reduce at 1 / (1 + s): it finishes 4 s / (1 + s) us late.
TEST(KernelInterference, ReplaySlowsByTheCollectivesOwnSlowdown) {
  const Beside o = AllReduceBesideKernel();
  const auto late_us = [](double s) { return 4 * s / (1 + s); };
  for (const float s : {2.0f / 130, 24.0f / 108}) {
    ReplayOptions options;
    options.comm_slowdown = {s};
    EXPECT_NEAR(InterferenceWith(o, options).seconds() * 1e6, late_us(s), 2e-6) << s;  // 2 ps
  }
  ReplayOptions two, twenty_four;
  two.comm_slowdown = {2.0f / 130};
  twenty_four.comm_slowdown = {24.0f / 108};
  EXPECT_LT(InterferenceWith(o, two), InterferenceWith(o, twenty_four));
  // -1: the kind's number, exactly as without comm_slowdown.
  ReplayOptions by_kind, fallback;
  by_kind.comm_interference[static_cast<int>(CommOp::kAllReduce)] = 0.19;
  fallback = by_kind;
  fallback.comm_slowdown = {-1.0f};
  EXPECT_EQ(InterferenceWith(o, fallback), InterferenceWith(o, by_kind));
  EXPECT_NEAR(InterferenceWith(o, by_kind).seconds() * 1e6, late_us(0.19), 2e-6);
}

// comm_slowdown is read by the collective's signature, not its index: here collective 2
// has signature 1 (collectives 0 and 1 are alike), and only entry 1 slows B.
TEST(KernelInterference, ReplayReadsTheSlowdownOfTheCollectivesSignature) {
  Beside o;
  Program& p = o.program;
  const int32_t group = p.AddGroup({0});
  p.AddComm(CommOp::kAllReduce, group, 1e6);
  p.AddComm(CommOp::kAllReduce, group, 1e6);
  const int32_t c = p.AddComm(CommOp::kAllGather, group, 1e6);
  p.AddComm(CommOp::kReduceScatter, group, 1e6);
  ASSERT_EQ(p.signatures().size(), 3u);
  ASSERT_EQ(p.comms()[c].signature, 1u);
  const OpId a = p.AddCompute(0, Tag::kMlpFwd, KernelWork{2e9, 0, 1});
  const OpId comm = p.AddCommPart(0, Stream::kTp, c, Tag::kTpComm);
  p.AddDep(a, comm);
  o.b = p.AddCompute(0, Tag::kMlpFwd, KernelWork{10e9, 0, 1});
  p.Finalize();
  const float s = 24.0f / 108;
  ReplayOptions options;
  options.comm_slowdown = {0, s, 0};
  EXPECT_NEAR(InterferenceWith(o, options).seconds() * 1e6, 4 * s / (1 + s), 2e-6);
}

// The bundled GPT-3 175B run on Selene (TP 8 in a node, DP rings across nodes): an explicit
// comm_interference number replays exactly as the per-kind numbers did before (the replay
// given those numbers alone), and the default (the kernels' SMs) differs from it.
TEST(KernelInterference, ExplicitNumberKeepsTheFixedSlowdown) {
  const std::string path =
      std::string(MESHSIM_SOURCE_DIR) + "/workloads/experiments/gpt3-175b-selective.yaml";
  const std::vector<std::string> fast = {"cluster.network_model=alpha_beta",
                                         "plan.global_batch=16"};
  std::vector<std::string> fixed = fast;
  fixed.push_back("cluster.efficiency.comm_interference=0.19");
  const Experiment e = LoadExperimentFile(path, fixed).value();
  const auto sim = Simulate(e);
  ASSERT_TRUE(sim->replay.interference_on);
  // Replay the same program with the per-kind numbers and no comm_slowdown.
  ReplayOptions by_kind;
  for (double& s : by_kind.comm_interference) s = 0.19;
  SimulationOptions full;
  full.full_replay = true;
  const auto fixed_full = Simulate(e, full);
  Models again = DefaultModels(e);
  const ReplayResult r = Replay(fixed_full->program, *again.compute, *again.network, by_kind);
  EXPECT_EQ(r.end, fixed_full->replay.end);
  const auto by_kernel = Simulate(LoadExperimentFile(path, fast).value());
  EXPECT_NE(SummarizeStep(*by_kernel).time_breakdown_s.comm_interference,
            SummarizeStep(*sim).time_breakdown_s.comm_interference);
}

}  // namespace
}  // namespace meshsim

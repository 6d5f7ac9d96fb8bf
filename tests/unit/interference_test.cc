// Compute-communication interference in the replay (ReplayOptions::comm_interference):
// hand-worked timelines on fake models, and the knob at 0.
#include <gtest/gtest.h>

#include "sim/config/loader.h"
#include "sim/engine/replay.h"
#include "sim/engine/simulation.h"
#include "sim/engine/step_stats.h"
#include "sim/report/step_summary.h"
#include "tests/unit/fixed_time_network.h"
#include "tests/unit/test_fixtures.h"

namespace meshsim {
namespace {

// On each of `ranks` ranks: kernel A (2 us), then an all-reduce over all the ranks on the
// TP stream (4 us) beside kernel B (10 us). FlopsOnlyComputeModel: 1 us per 1e9 FLOPs.
struct Overlap {
  Program program;
  std::vector<OpId> a, b, comm;
};
Overlap AllReduceBesideKernel(int ranks) {
  Overlap o{Program(ranks), {}, {}, {}};
  std::vector<int> all;
  for (int r = 0; r < ranks; ++r) all.push_back(r);
  const int32_t c = o.program.AddComm(CommOp::kAllReduce, o.program.AddGroup(all), 1e6);
  for (int r = 0; r < ranks; ++r) {
    o.a.push_back(o.program.AddCompute(r, Tag::kMlpFwd, KernelWork{2e9, 0, 1}));
    o.comm.push_back(o.program.AddCommPart(r, Stream::kTp, c, Tag::kTpComm));
    o.program.AddDep(o.a.back(), o.comm.back());
    o.b.push_back(o.program.AddCompute(r, Tag::kMlpFwd, KernelWork{10e9, 0, 1}));
  }
  o.program.Finalize();
  return o;
}

ReplayResult ReplayWith(const Program& p, double all_reduce_slowdown) {
  testing::FlopsOnlyComputeModel compute;
  FixedTimeNetwork network{SimTime::Microseconds(4)};  // every collective 4 us
  ReplayOptions options;
  options.comm_interference[static_cast<int>(CommOp::kAllReduce)] = all_reduce_slowdown;
  return Replay(p, compute, network, options);
}

TEST(Interference, SlowsTheOverlappedPartByTheFactor) {
  for (int ranks : {1, 2}) {  // one participant (solo) and a shared collective
    const Overlap o = AllReduceBesideKernel(ranks);
    const ReplayResult r = ReplayWith(o.program, 0.25);
    ASSERT_TRUE(r.completed) << r.stall;
    for (int k = 0; k < ranks; ++k) {
      // B runs [2, 6] us beside the all-reduce at 1 / 1.25: 3.2 us of its 10 done; the
      // remaining 6.8 us at full rate end it at 12.8 us, 0.8 us = 4 x 0.25 / 1.25 late.
      EXPECT_EQ(r.start[o.b[k]], SimTime::Microseconds(2));
      EXPECT_EQ(r.end[o.b[k]], SimTime::Microseconds(12.8)) << ranks;
      EXPECT_EQ(r.Interference(o.program, o.b[k]), SimTime::Microseconds(0.8));
      EXPECT_EQ(r.Interference(o.program, o.a[k]), SimTime::Zero());
      EXPECT_EQ(r.end[o.comm[k]], SimTime::Microseconds(6));
    }
  }
}

TEST(Interference, KernelsInsideTheCollectiveRunSlowerThroughout) {
  // The all-reduce outlasts a 2 us kernel B: B runs entirely at 1 / 1.5, 3 us.
  Program p(1);
  const int32_t c = p.AddComm(CommOp::kAllReduce, p.AddGroup({0}), 1e6);
  const OpId a = p.AddCompute(0, Tag::kMlpFwd, KernelWork{1e9, 0, 1});
  const OpId comm = p.AddCommPart(0, Stream::kTp, c, Tag::kTpComm);
  p.AddDep(a, comm);
  const OpId b = p.AddCompute(0, Tag::kMlpFwd, KernelWork{2e9, 0, 1});
  p.Finalize();
  const ReplayResult r = ReplayWith(p, 0.5);
  EXPECT_EQ(r.end[b], SimTime::Microseconds(4));
  EXPECT_EQ(r.Interference(p, b), SimTime::Microseconds(1));
}

TEST(Interference, BreakdownCountsItApartFromCompute) {
  const Overlap o = AllReduceBesideKernel(1);
  const ReplayResult r = ReplayWith(o.program, 0.25);
  const StepStats stats = AnalyzeStep(o.program, r);
  // Compute runs [0, 12.8] us, 0.8 us of it because of the all-reduce.
  EXPECT_NEAR(stats.ranks[0].breakdown.interference_s, 0.8e-6, 1e-15);
  EXPECT_NEAR(stats.ranks[0].breakdown.compute_s, 12e-6, 1e-15);
}

TEST(Interference, OffLeavesTheTimelineAsItWas) {
  const Overlap o = AllReduceBesideKernel(2);
  const ReplayResult off = ReplayWith(o.program, 0);
  EXPECT_FALSE(off.interference_on);
  EXPECT_EQ(off.Interference(o.program, o.b[0]), SimTime::Zero());
  EXPECT_EQ(off.end[o.b[0]], SimTime::Microseconds(12));
  const StepStats stats = AnalyzeStep(o.program, off);
  EXPECT_EQ(stats.ranks[0].breakdown.interference_s, 0);
  EXPECT_NEAR(stats.ranks[0].breakdown.compute_s, 12e-6, 1e-15);
}

// The bundled GPT-3 175B run with interference only for all-to-alls, which a dense model
// never runs: the event-driven path replays every op at exactly the times of the plain one.
TEST(Interference, UnusedKindsChangeNoTime) {
  const std::string path =
      std::string(MESHSIM_SOURCE_DIR) + "/workloads/experiments/gpt3-175b-selective.yaml";
  const std::vector<std::string> fast = {"cluster.network_model=alpha_beta",
                                         "plan.global_batch=16"};
  std::vector<std::string> off = fast, unused = fast;
  off.push_back("cluster.efficiency.comm_interference=0");
  unused.push_back(
      "cluster.efficiency.comm_interference={all_reduce: 0, all_gather: 0, reduce_scatter: 0, "
      "all_to_all: 0.3, p2p: 0}");
  Result<Experiment> a = LoadExperimentFile(path, off);
  Result<Experiment> b = LoadExperimentFile(path, unused);
  ASSERT_TRUE(a.ok() && b.ok());
  const auto sa = Simulate(a.value());
  const auto sb = Simulate(b.value());
  EXPECT_FALSE(sa->replay.interference_on);
  ASSERT_TRUE(sb->replay.interference_on);
  EXPECT_EQ(sa->replay.start, sb->replay.start);
  EXPECT_EQ(sa->replay.end, sb->replay.end);
  EXPECT_EQ(SummarizeStep(*sb).time_breakdown_s.comm_interference, 0);
}

// The defaults slow the bundled run, and the summary says by how much.
TEST(Interference, DefaultsShowInTheSummary) {
  const std::string path =
      std::string(MESHSIM_SOURCE_DIR) + "/workloads/experiments/gpt3-175b-selective.yaml";
  const std::vector<std::string> fast = {"cluster.network_model=alpha_beta",
                                         "plan.global_batch=16"};
  std::vector<std::string> off = fast;
  off.push_back("cluster.efficiency.comm_interference=0");
  const auto on = Simulate(LoadExperimentFile(path, fast).value());
  const auto without = Simulate(LoadExperimentFile(path, off).value());
  const StepSummary s = SummarizeStep(*on);
  EXPECT_GT(s.time_breakdown_s.comm_interference, 0);
  EXPECT_GT(on->replay.step_time, without->replay.step_time);
  EXPECT_EQ(SummarizeStep(*without).time_breakdown_s.comm_interference, 0);
}

}  // namespace
}  // namespace meshsim

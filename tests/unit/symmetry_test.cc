// Replaying one pipeline per symmetry class gives the same results as replaying every rank.
#include <gtest/gtest.h>

#include "sim/config/loader.h"
#include "sim/engine/simulation.h"
#include "sim/report/summary.h"

namespace meshsim {
namespace {

nlohmann::ordered_json SummaryOf(const Experiment& e, bool full) {
  SimulationOptions options;
  options.full_replay = full;
  nlohmann::ordered_json j = BuildSummary(*Simulate(e, options), SummaryOptions{true});
  j.erase("sim");  // event counts differ by construction
  return j;
}

Experiment Load(const std::vector<std::string>& sets) {
  Result<Experiment> e = LoadExperimentFile(
      std::string(MESHSIM_SOURCE_DIR) + "/workloads/experiments/default.yaml", sets);
  EXPECT_TRUE(e.ok());
  return e.value();
}

TEST(Symmetry, SameSummaryAsFullReplay) {
  // tp 2 x pp 4 x dp 2 over two nodes, ZeRO-1: DP, TP and PP traffic, cross-node groups.
  // With every mirror simulated (mirror_traffic full) the links' figures are the same bits
  // too; with the default (near) the mirrors the replayed traffic never meets are counted,
  // which leaves every figure but the links' the same.
  const Experiment e = Load({"cluster.mirror_traffic=full"});
  const auto symmetric = SummaryOf(e, false);
  auto full = SummaryOf(e, true);
  EXPECT_EQ(symmetric.dump(1), full.dump(1));
  auto near = SummaryOf(Load({}), false);
  near.erase("links");
  full.erase("links");
  EXPECT_EQ(near.dump(1), full.dump(1));
}

// With per-link-class costs every copy of a collective takes the same time: identical.
TEST(Symmetry, SameSummaryAsFullReplayWithZero3AndInterleavingAlphaBeta) {
  const Experiment e = Load({"plan.zero=3", "plan.schedule=interleaved", "plan.virtual_stages=2",
                             "plan.sequence_parallel=false", "cluster.network_model=alpha_beta"});
  EXPECT_EQ(SummaryOf(e, false).dump(1), SummaryOf(e, true).dump(1));
}

// On the flow-level network, symmetric copies run in lockstep with the replayed one; in a
// full replay each copy starts when its own members arrive and meets slightly different
// contention, so the figures agree closely rather than bit for bit.
TEST(Symmetry, CloseToFullReplayOnFlowNetwork) {
  const Experiment e = Load({"plan.zero=3", "plan.schedule=interleaved", "plan.virtual_stages=2",
                             "plan.sequence_parallel=false"});
  const auto symmetric = SummaryOf(e, false);
  const auto full = SummaryOf(e, true);
  for (const char* key : {"step_time_s", "bubble_fraction", "peak_memory_gib"}) {
    const double a = symmetric[key].get<double>(), b = full[key].get<double>();
    EXPECT_NEAR(a, b, 0.005 * b) << key;
  }
}

// A traced rank adds its pipeline (rank 9: tp 1, dp 1 of stage 0); a translate of both
// replayed pipelines' groups runs its collectives once, so it is one group's mirror only.
TEST(Symmetry, TracedPipelinesShareTheirMirrors) {
  const Experiment e = Load({"cluster.network_model=alpha_beta"});
  SimulationOptions traced;
  traced.memory_curve_ranks = {0, 9};
  const auto sim = Simulate(e, traced);
  EXPECT_EQ(sim->simulated_ranks.size(), 8u);
  traced.full_replay = true;
  const auto full = Simulate(e, traced);
  EXPECT_EQ(sim->replay.step_time, full->replay.step_time);
  EXPECT_NEAR(sim->replay.inter_node_bytes, full->replay.inter_node_bytes,
              1e-9 * full->replay.inter_node_bytes);
  EXPECT_NEAR(sim->replay.intra_node_bytes, full->replay.intra_node_bytes,
              1e-9 * full->replay.intra_node_bytes);
}

TEST(Symmetry, ReplaysOnePipelineByDefault) {
  const auto sim = Simulate(Load({}));
  EXPECT_EQ(sim->simulated_ranks.size(), 4u);  // pp = 4
  EXPECT_EQ(sim->representative[1], 0);        // tp 1 of stage 0 takes rank 0's results
}

}  // namespace
}  // namespace meshsim

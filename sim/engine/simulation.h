// Runs one experiment end to end: mesh, step program, replay, analysis.
#pragma once

#include <memory>
#include <vector>

#include "sim/core/status.h"
#include "sim/engine/replay.h"
#include "sim/engine/step_stats.h"
#include "sim/plan/experiment.h"
#include "sim/plan/mesh.h"
#include "sim/schedule/program.h"

namespace meshsim {

struct SimulationOptions {
  // Ranks whose memory timeline is kept (for traces); they are always replayed.
  std::vector<int> memory_curve_ranks;
  // Replay every rank even where ranks are symmetric. What-if stragglers, link changes,
  // skewed MoE routing and expert parallelism always replay every rank.
  bool full_replay = false;
};

struct Simulation {
  Experiment experiment;
  Mesh mesh;
  Program program;
  ReplayResult replay;
  StepStats stats;
  // Symmetry: on homogeneous hardware the ranks of one pipeline stage that differ only in
  // tp, cp or dp coordinate run identical programs, so meshsim replays whole pipelines
  // only for rank 0's pipeline and the memory_curve_ranks', and every other rank takes
  // the results of the rank of its stage in rank 0's pipeline.
  std::vector<int> simulated_ranks;  // ascending
  std::vector<int> representative;   // per rank: the simulated rank whose results it has
  double wall_s = 0;                 // host time spent building, replaying and analysing
};

// Precondition: the experiment passed ValidatePlan.
std::unique_ptr<Simulation> Simulate(const Experiment& experiment,
                                     const SimulationOptions& options = {});

// The compute model and network an experiment's cluster implies. MakeNetwork fails only
// on a topology that LoadExperimentFile would have rejected.
std::unique_ptr<ComputeModel> MakeComputeModel(const Experiment& experiment);
Result<std::unique_ptr<Network>> MakeNetwork(const Experiment& experiment);

}  // namespace meshsim

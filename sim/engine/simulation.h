// Runs one experiment end to end: mesh, step program, replay, analysis.
#pragma once

#include <memory>
#include <vector>

#include "sim/engine/replay.h"
#include "sim/engine/step_stats.h"
#include "sim/plan/experiment.h"
#include "sim/plan/mesh.h"
#include "sim/schedule/program.h"

namespace meshsim {

struct SimulationOptions {
  std::vector<int> memory_curve_ranks;  // ranks whose memory timeline is kept (for traces)
};

struct Simulation {
  Experiment experiment;
  Mesh mesh;
  Program program;
  ReplayResult replay;
  StepStats stats;
  double wall_s = 0;  // host time spent building, replaying and analysing
};

// Precondition: the experiment passed ValidatePlan.
std::unique_ptr<Simulation> Simulate(const Experiment& experiment,
                                     const SimulationOptions& options = {});

// The compute model and collective model an experiment's cluster implies.
std::unique_ptr<ComputeModel> MakeComputeModel(const Experiment& experiment);
std::unique_ptr<CollectiveModel> MakeCollectiveModel(const Experiment& experiment);

}  // namespace meshsim

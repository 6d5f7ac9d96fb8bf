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
  // skewed MoE routing, and expert groups that sit unlike on the NVLink domains (or on a
  // torus) always replay every rank.
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

// The models a replay runs on: how long compute takes, and the network that carries the
// collectives. A Network keeps the state of one replay (bytes carried, flows in flight),
// so each Simulate takes fresh models and owns them until it returns. With symmetric
// replay the network also receives the mirrored groups of each collective
// (Network::Start): a fake that counts traffic must count them.
struct Models {
  std::unique_ptr<ComputeModel> compute;
  std::unique_ptr<Network> network;
};

// The models an experiment's cluster implies: a roofline of its GPU, and its
// network_model (alpha-beta or flow-level). What the CLI, sweeps and benchmarks run on.
// Precondition: the cluster's topology is valid (LoadExperimentFile checked it).
Models DefaultModels(const Experiment& experiment);

// Replays one step of the experiment on `models`.
// Preconditions: the experiment passed ValidatePlan; both models are set.
std::unique_ptr<Simulation> Simulate(const Experiment& experiment, const SimulationOptions& options,
                                     Models models);
// The same on DefaultModels(experiment); wall_s includes building them.
std::unique_ptr<Simulation> Simulate(const Experiment& experiment,
                                     const SimulationOptions& options = {});

// The ranks a replay replays: whole pipelines through rank 0 and through each rank of
// `extra`, or all ranks if `full`; ascending.
std::vector<int> SimulatedRanks(const Mesh& mesh, const std::vector<int>& extra, bool full);
// Whether every rank must be replayed: asked for, or stragglers, changed links and skewed
// MoE routing make ranks differ, or the expert groups (blocks of a stage's ranks, whose
// mirrors are the family's other groups: expert_mirrors.h) do not sit alike on the
// NVLink domains (ExpertGroupsAlike), or the cluster is a torus and has expert groups.
bool NeedsFullReplay(const Experiment& experiment, const SimulationOptions& options);

// The parts of DefaultModels. MakeNetwork fails only on a topology that
// LoadExperimentFile would have rejected.
std::unique_ptr<ComputeModel> MakeComputeModel(const Experiment& experiment);
Result<std::unique_ptr<Network>> MakeNetwork(const Experiment& experiment);

}  // namespace meshsim

#include "sim/engine/simulation.h"

#include <chrono>

#include "sim/net/alpha_beta.h"
#include "sim/schedule/step_builder.h"

namespace meshsim {

std::unique_ptr<ComputeModel> MakeComputeModel(const Experiment& e) {
  const GpuSpec& gpu = e.cluster.gpu;
  const double flops = gpu.PeakTflops(e.training.dtype) * 1e12 * e.cluster.efficiency.matmul;
  const double bytes = gpu.hbm_gbps * 1e9 * e.cluster.efficiency.memory;
  return std::make_unique<RooflineComputeModel>(flops, bytes,
                                                e.cluster.efficiency.kernel_overhead_us * 1e-6);
}

std::unique_ptr<CollectiveModel> MakeCollectiveModel(const Experiment& e) {
  return std::make_unique<AlphaBetaCollectiveModel>(e.cluster);
}

namespace {

// Whole pipelines through rank 0 and through each rank of `extra` (all ranks if `full`).
std::vector<int> SimulatedRanks(const Mesh& mesh, const std::vector<int>& extra, bool full) {
  std::vector<bool> chosen(mesh.Size(), full);
  for (int seed : extra) {
    for (int r : mesh.Pipeline(seed)) chosen[r] = true;
  }
  for (int r : mesh.Pipeline(0)) chosen[r] = true;
  std::vector<int> ranks;
  for (int r = 0; r < mesh.Size(); ++r) {
    if (chosen[r]) ranks.push_back(r);
  }
  return ranks;
}

}  // namespace

std::unique_ptr<Simulation> Simulate(const Experiment& e, const SimulationOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  Mesh mesh(e.plan);
  const std::vector<int> simulated =
      SimulatedRanks(mesh, options.memory_curve_ranks, options.full_replay);
  std::vector<int> representative(mesh.Size());
  std::vector<double> weight(mesh.Size(), 0.0);
  {
    std::vector<bool> is_simulated(mesh.Size(), false);
    for (int r : simulated) is_simulated[r] = true;
    for (int r = 0; r < mesh.Size(); ++r) {
      representative[r] = is_simulated[r] ? r : mesh.RankOf(0, 0, 0, mesh.CoordsOf(r).pp);
      weight[representative[r]] += 1;
    }
  }
  Program program = BuildStepProgram(e.model, e.plan, e.training, mesh, simulated);
  const auto compute = MakeComputeModel(e);
  const auto network = MakeCollectiveModel(e);
  ReplayOptions ro;
  ro.memory_curve_ranks = options.memory_curve_ranks;
  ro.rank_weight = weight;
  ReplayResult replay = Replay(program, *compute, *network, ro);
  StepStats stats = AnalyzeStep(program, replay, simulated);
  for (int r = 0; r < mesh.Size(); ++r) {
    const int rep = representative[r];
    if (rep == r) continue;
    stats.ranks[r] = stats.ranks[rep];
    replay.memory[r].peak_bytes = replay.memory[rep].peak_bytes;
    replay.memory[r].at_peak = replay.memory[rep].at_peak;
  }
  // The mean over every rank, summed in rank order, so that a full replay and a
  // symmetric one give the same bits.
  if (stats.pipeline_end_s > 0) {
    double idle = 0;
    for (const RankStats& r : stats.ranks) idle += r.pipeline_idle_s;
    stats.bubble_fraction = idle / mesh.Size() / stats.pipeline_end_s;
  }
  auto sim = std::unique_ptr<Simulation>(new Simulation{e, std::move(mesh), std::move(program),
                                                        std::move(replay), std::move(stats),
                                                        simulated, std::move(representative), 0});
  sim->wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return sim;
}

}  // namespace meshsim

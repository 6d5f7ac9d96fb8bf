#include "sim/engine/simulation.h"

#include <chrono>

#include "sim/net/alpha_beta.h"
#include "sim/schedule/step_builder.h"

namespace meshsim {

std::unique_ptr<ComputeModel> MakeComputeModel(const Experiment& e) {
  const GpuSpec& gpu = e.cluster.gpu;
  const double flops = gpu.PeakTflops(e.training.dtype) * 1e12 * e.cluster.efficiency.matmul;
  const double bytes = gpu.hbm_gbps * 1e9 * e.cluster.efficiency.memory;
  return std::make_unique<RooflineComputeModel>(flops, bytes);
}

std::unique_ptr<CollectiveModel> MakeCollectiveModel(const Experiment& e) {
  return std::make_unique<AlphaBetaCollectiveModel>(e.cluster);
}

std::unique_ptr<Simulation> Simulate(const Experiment& e, const SimulationOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  Mesh mesh(e.plan);
  Program program = BuildStepProgram(e.model, e.plan, e.training, mesh);
  const auto compute = MakeComputeModel(e);
  const auto network = MakeCollectiveModel(e);
  ReplayOptions ro;
  ro.memory_curve_ranks = options.memory_curve_ranks;
  ReplayResult replay = Replay(program, *compute, *network, ro);
  StepStats stats = AnalyzeStep(program, replay);
  auto sim = std::unique_ptr<Simulation>(new Simulation{e, std::move(mesh), std::move(program),
                                                        std::move(replay), std::move(stats), 0});
  sim->wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return sim;
}

}  // namespace meshsim

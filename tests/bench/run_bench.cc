// Whole `meshsim run` pipelines on bundled experiments: load, build, replay, analyse and
// summarise (no trace file).
#include <benchmark/benchmark.h>

#include <string>

#include "sim/config/loader.h"
#include "sim/engine/simulation.h"
#include "sim/report/summary.h"

namespace meshsim {
namespace {

void RunExperiment(benchmark::State& state, const std::string& file,
                   const std::vector<std::string>& sets, bool full_replay) {
  const std::string path = std::string(MESHSIM_SOURCE_DIR) + "/workloads/experiments/" + file;
  uint64_t events = 0;
  for (auto _ : state) {
    Result<Experiment> e = LoadExperimentFile(path, sets);
    if (!e.ok()) {
      state.SkipWithError(e.error().ToString().c_str());
      return;
    }
    SimulationOptions options;
    options.full_replay = full_replay;
    const auto sim = Simulate(e.value(), options);
    benchmark::DoNotOptimize(BuildSummary(*sim));
    events = sim->replay.events;
  }
  state.counters["events"] = static_cast<double>(events);
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(events) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate);
}

void BM_RunGpt3_175B(benchmark::State& state) {
  RunExperiment(state, "gpt3-175b-selective.yaml", {}, false);
}
BENCHMARK(BM_RunGpt3_175B)->Unit(benchmark::kMillisecond);

void BM_RunGpt3_175B_AlphaBeta(benchmark::State& state) {
  RunExperiment(state, "gpt3-175b-selective.yaml", {"cluster.network_model=alpha_beta"}, false);
}
BENCHMARK(BM_RunGpt3_175B_AlphaBeta)->Unit(benchmark::kMillisecond);

void BM_RunGpt3_175B_FullReplay(benchmark::State& state) {
  RunExperiment(state, "gpt3-175b-selective.yaml", {}, true);
}
BENCHMARK(BM_RunGpt3_175B_FullReplay)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace meshsim

namespace meshsim {
namespace {

// shared/DESIGN.md's speed budget: GPT-1T on 3072 GPUs (tp 4, pp 64, dp 12, 64
// micro-batches of 4, full recompute).
void BM_RunGpt1T_3072(benchmark::State& state) {
  RunExperiment(state, "gpt-1t-3072.yaml", {}, false);
}
BENCHMARK(BM_RunGpt1T_3072)->Unit(benchmark::kMillisecond);

void BM_RunGpt1T_3072_AlphaBeta(benchmark::State& state) {
  RunExperiment(state, "gpt-1t-3072.yaml", {"cluster.network_model=alpha_beta"}, false);
}
BENCHMARK(BM_RunGpt1T_3072_AlphaBeta)->Unit(benchmark::kMillisecond);

// Every rank replayed (alpha-beta network: the flow network's full replay of 3072 GPUs
// takes minutes).
void BM_RunGpt1T_3072_FullReplay(benchmark::State& state) {
  RunExperiment(state, "gpt-1t-3072.yaml", {"cluster.network_model=alpha_beta"}, true);
}
BENCHMARK(BM_RunGpt1T_3072_FullReplay)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
}  // namespace meshsim

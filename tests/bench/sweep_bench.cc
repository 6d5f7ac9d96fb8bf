// Sweep throughput: configurations evaluated per second (a configuration counts once it
// has its status: invalid, pruned by the memory bound, or simulated), with the rows
// formatted as for results.csv but not written.
#include <benchmark/benchmark.h>

#include <string>

#include "sim/config/sweep_loader.h"
#include "sim/schedule/memory_bound.h"
#include "sim/sweep/enumerate.h"
#include "sim/sweep/evaluate.h"
#include "sim/sweep/runner.h"

namespace meshsim {
namespace {

SweepSpec LoadSweep(benchmark::State& state, const std::string& file) {
  Result<SweepSpec> s =
      LoadSweepFile(std::string(MESHSIM_SOURCE_DIR) + "/workloads/sweeps/" + file);
  if (!s.ok()) {
    state.SkipWithError(s.error().ToString().c_str());
    return {};
  }
  return s.value();
}

// Enumeration plus evaluation of every configuration on state.range(0) threads.
// `alpha_beta`: replay with the alpha-beta network model (about 3x faster than the flow
// model) to keep the benchmark short.
void RunSweepBench(benchmark::State& state, const std::string& file, bool alpha_beta = false) {
  SweepSpec spec = LoadSweep(state, file);
  if (alpha_beta) {
    for (SweepGroup& g : spec.groups)
      g.experiment.cluster.network_model = NetworkModelKind::kAlphaBeta;
  }
  if (spec.groups.empty()) return;
  size_t configs = 0;
  for (auto _ : state) {
    const std::vector<Configuration> all = Enumerate(spec);
    std::vector<size_t> todo(all.size());
    for (size_t i = 0; i < todo.size(); ++i) todo[i] = i;
    size_t rows = 0;
    EvaluateInOrder(spec, all, todo, static_cast<int>(state.range(0)),
                    [&rows](size_t, ResultRow row, const RowInfo&) {
                      const std::string line = CsvLine(FormatRow(row));  // as the sweep writes
                      benchmark::DoNotOptimize(line.data());
                      ++rows;
                    });
    configs = rows;
  }
  state.counters["configs"] = static_cast<double>(configs);
  state.counters["configs_per_s"] =
      benchmark::Counter(static_cast<double>(configs) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate);
}

// Turing 530B on 5128 A100s over Calculon's space (every valid plan is pruned: see the
// sweep file).
void BM_SweepTuring530B_5128_Calculon(benchmark::State& state) {
  RunSweepBench(state, "turing-530b-5128-calculon.yaml");
}
BENCHMARK(BM_SweepTuring530B_5128_Calculon)
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// Llama-2 70B on 64 H100s (the bundled sweep: 58 of 198 plans simulated), alpha-beta.
void BM_SweepLlama2_70B_64(benchmark::State& state) {
  RunSweepBench(state, "llama2-70b-64-h100.yaml", /*alpha_beta=*/true);
}
BENCHMARK(BM_SweepLlama2_70B_64)
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(1);

// Turing 530B on 2240 A100s (the 2240-GPU sweep's first group: alpha-beta, 1920
// sequences) with tp 8, pp 35, dp 8 and the given schedule.
Experiment Turing530B_2240(benchmark::State& state, ScheduleKind schedule, int virtual_stages) {
  const SweepSpec spec = LoadSweep(state, "turing-530b-2240-calculon.yaml");
  if (spec.groups.empty()) return {};
  Experiment e = spec.groups.front().experiment;
  e.plan.tp = 8;
  e.plan.pp = 35;
  e.plan.dp = 8;
  e.plan.schedule = schedule;
  e.plan.virtual_stages = virtual_stages;
  return e;
}

// One simulated configuration of the 2240-GPU 530B space, as a sweep evaluates it
// (program, replay, analysis, summary): tp 8, pp 35, dp 8, 1F1B, micro-batch 1, selective
// recompute, 240 micro-batches, alpha-beta network. Most of that space's simulated
// configurations look like it.
void BM_SweepOneConfig530B(benchmark::State& state) {
  Experiment e = Turing530B_2240(state, ScheduleKind::kOneFOneB, 1);
  if (e.plan.tp != 8) return;  // the sweep file did not load
  e.plan.micro_batch = 1;
  e.plan.recompute = Recompute::kSelective;
  e.plan.zero = 0;
  for (auto _ : state) {
    const Evaluation ev = Evaluate(e, std::nullopt);
    if (ev.status != ConfigStatus::kOk) state.SkipWithError("the configuration should fit");
    benchmark::DoNotOptimize(ev.summary);
  }
  state.counters["configs_per_s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SweepOneConfig530B)->Unit(benchmark::kMillisecond)->UseRealTime();

// The memory bound alone, on Turing 530B tp 8 pp 35 interleaved (280 micro-batches).
void BM_MemoryBound530B(benchmark::State& state) {
  const Experiment e = Turing530B_2240(state, ScheduleKind::kInterleaved, 3);
  if (e.plan.tp != 8) return;  // the sweep file did not load
  for (auto _ : state) benchmark::DoNotOptimize(EstimatePeakMemory(e));
}
BENCHMARK(BM_MemoryBound530B)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace meshsim

// The goals of issue 14 (scale), one row each: GPT-1T (workloads/experiments/gpt-1t-3072.yaml,
// tp 4, pp 64, 64 micro-batches per pipeline) with more data parallelism, in the default
// mode (flow network, symmetric replay) and in full replay; a 1,048,576-GPU request; one
// 530B sweep configuration on the flow network beside the same on alpha-beta. Each row
// reports `peak_rss_mib`: the process's peak resident memory during that row alone (the
// kernel's high-water mark is reset before it, /proc/self/clear_refs), so that rows
// do not inherit an earlier row's peak. scripts/bench.sh compares them with the goals.
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <fstream>
#include <ostream>
#include <streambuf>
#include <string>
#include <vector>

#include "sim/config/loader.h"
#include "sim/config/sweep_loader.h"
#include "sim/core/host.h"
#include "sim/engine/resource_estimate.h"
#include "sim/engine/simulation.h"
#include "sim/report/summary.h"
#include "sim/sweep/evaluate.h"

namespace meshsim {
namespace {

// Returns the heap's free memory to the kernel (an earlier row's gigabytes would stay
// resident otherwise), then resets the peak resident set size (VmHWM) to the current
// one (Linux: "5" to clear_refs).
void ResetPeakRss() {
  malloc_trim(0);
  std::ofstream("/proc/self/clear_refs") << "5";
}

// Counts the characters written to it and keeps none.
class DiscardingBuffer : public std::streambuf {
 public:
  size_t chars = 0;

 protected:
  std::streamsize xsputn(const char*, std::streamsize n) override {
    chars += static_cast<size_t>(n);
    return n;
  }
  int_type overflow(int_type c) override {
    ++chars;
    return c;
  }
};

// GPT-1T on `gpus` GPUs: dp = gpus / 256, 64 micro-batches of 4 per pipeline.
std::vector<std::string> Gpt1TSets(int gpus, bool alpha_beta) {
  const int dp = gpus / 256;
  std::vector<std::string> sets = {"plan.dp=" + std::to_string(dp),
                                   "cluster.nodes=" + std::to_string(gpus / 8),
                                   "plan.global_batch=" + std::to_string(dp * 256)};
  if (alpha_beta) sets.push_back("cluster.network_model=alpha_beta");
  return sets;
}

void RunGpt1T(benchmark::State& state, int gpus, bool alpha_beta, bool full_replay) {
  const std::string path =
      std::string(MESHSIM_SOURCE_DIR) + "/workloads/experiments/gpt-1t-3072.yaml";
  ResetPeakRss();
  uint64_t events = 0;
  for (auto _ : state) {
    Result<Experiment> e = LoadExperimentFile(path, Gpt1TSets(gpus, alpha_beta));
    if (!e.ok()) {
      state.SkipWithError(e.error().ToString().c_str());
      return;
    }
    SimulationOptions options;
    options.full_replay = full_replay;
    const auto sim = Simulate(e.value(), options);
    // summary.json as `meshsim run` streams it to its file, the disk left out.
    DiscardingBuffer discarded;
    std::ostream out(&discarded);
    WriteSummaryText(SummarizeStep(*sim), out);
    benchmark::DoNotOptimize(discarded.chars);
    events = sim->replay.events;
  }
  state.counters["events"] = static_cast<double>(events);
  state.counters["peak_rss_mib"] = PeakRssMib();
}

void BM_ScaleGpt1T_Default(benchmark::State& state) {
  RunGpt1T(state, static_cast<int>(state.range(0)), false, false);
}
BENCHMARK(BM_ScaleGpt1T_Default)
    ->Arg(16'384)
    ->Arg(98'304)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

void BM_ScaleGpt1T_FullAlphaBeta(benchmark::State& state) {
  RunGpt1T(state, static_cast<int>(state.range(0)), true, true);
}
BENCHMARK(BM_ScaleGpt1T_FullAlphaBeta)
    ->Arg(3'072)
    ->Arg(16'384)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

void BM_ScaleGpt1T_FullFlow(benchmark::State& state) {
  RunGpt1T(state, static_cast<int>(state.range(0)), false, true);
}
BENCHMARK(BM_ScaleGpt1T_FullFlow)->Arg(3'072)->Unit(benchmark::kMillisecond)->Iterations(1);

// 1,048,576 GPUs (dp 4,096) in the default mode with 2 GiB allowed: what `meshsim run
// --max-memory 2` does before building anything: load, estimate, and the refusal's text.
void BM_ScaleMillionGpusGuard(benchmark::State& state) {
  const std::string path =
      std::string(MESHSIM_SOURCE_DIR) + "/workloads/experiments/gpt-1t-3072.yaml";
  ResetPeakRss();
  for (auto _ : state) {
    Result<Experiment> e = LoadExperimentFile(path, Gpt1TSets(1 << 20, false));
    if (!e.ok()) {
      state.SkipWithError(e.error().ToString().c_str());
      return;
    }
    const ResourceEstimate est = EstimateResources(e.value(), SimulationOptions{});
    if (est.bytes <= 2.0 * (1 << 30)) state.SkipWithError("expected an estimate above 2 GiB");
    benchmark::DoNotOptimize(DescribeOverLimit(est, 2.0 * (1 << 30), "--max-memory"));
  }
  state.counters["peak_rss_mib"] = PeakRssMib();
}
BENCHMARK(BM_ScaleMillionGpusGuard)->Unit(benchmark::kMillisecond)->Iterations(1);

// One simulated configuration of the 2240-GPU 530B space as the sweep evaluates it (as
// BM_SweepOneConfig530B: tp 8, pp 35, dp 8, 1F1B, micro-batch 1, selective recompute), on
// the network named by the argument: 0 alpha-beta, 1 flow.
void BM_Scale530BOneConfig(benchmark::State& state) {
  Result<SweepSpec> spec = LoadSweepFile(std::string(MESHSIM_SOURCE_DIR) +
                                         "/workloads/sweeps/turing-530b-2240-calculon.yaml");
  if (!spec.ok() || spec.value().groups.empty()) {
    state.SkipWithError("the 530B sweep did not load");
    return;
  }
  Experiment e = spec.value().groups.front().experiment;
  e.plan.tp = 8;
  e.plan.pp = 35;
  e.plan.dp = 8;
  e.plan.schedule = ScheduleKind::kOneFOneB;
  e.plan.virtual_stages = 1;
  e.plan.micro_batch = 1;
  e.plan.recompute = Recompute::kSelective;
  e.plan.zero = 0;
  e.cluster.network_model = state.range(0) ? NetworkModelKind::kFlow : NetworkModelKind::kAlphaBeta;
  ResetPeakRss();
  for (auto _ : state) {
    const Evaluation ev = Evaluate(e, std::nullopt);
    if (ev.status != ConfigStatus::kOk) state.SkipWithError("the configuration should fit");
    benchmark::DoNotOptimize(ev.summary);
  }
  state.counters["peak_rss_mib"] = PeakRssMib();
}
BENCHMARK(BM_Scale530BOneConfig)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace meshsim

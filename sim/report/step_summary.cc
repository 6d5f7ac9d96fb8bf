#include "sim/report/step_summary.h"

#include <fmt/format.h>

#include "sim/core/host.h"
#include "sim/report/dp_comm.h"
#include "sim/workload/transformer.h"

namespace meshsim {
namespace {

MemoryGib MemoryAtPeak(const DeviceMemory& m) {
  static_assert(kMemCategoryCount == 5, "MemoryGib has one field per MemCategory");
  const auto gib = [&m](MemCategory c) { return m.at_peak[static_cast<int>(c)] / kGiB; };
  return {gib(MemCategory::kWeights), gib(MemCategory::kGradients), gib(MemCategory::kOptimizer),
          gib(MemCategory::kActivations), gib(MemCategory::kBuffers)};
}

TimeBreakdownS Breakdown(const TimeBreakdown& b) {
  TimeBreakdownS t;
  t.compute = b.compute_s;
  t.comm_interference = b.interference_s;
  t.exposed_tp_comm = b.exposed_tp_s;
  t.exposed_dp_comm = b.exposed_dp_s;
  t.exposed_pp_comm = b.exposed_pp_s;
  t.exposed_cp_comm = b.exposed_cp_s;
  t.exposed_ep_comm = b.exposed_ep_s;
  t.host_bound = b.host_s;
  t.bubble = b.bubble_s;
  t.optimizer = b.optimizer_s;
  return t;
}

std::vector<DeviceSummary> Devices(const Simulation& sim) {
  std::vector<DeviceSummary> list;
  list.reserve(sim.mesh.Size());
  const double step = sim.replay.step_time.seconds();
  for (int r = 0; r < sim.mesh.Size(); ++r) {
    const RankStats& s = sim.stats.ranks[r];
    DeviceSummary d;
    d.rank = r;
    d.node = r / sim.experiment.cluster.gpus_per_node;
    d.coords = sim.mesh.CoordsOf(r);
    d.peak_memory_gib = sim.replay.memory[r].peak_bytes / kGiB;
    d.memory_breakdown_gib = MemoryAtPeak(sim.replay.memory[r]);
    d.compute_busy_fraction = step > 0 ? s.compute_busy_s / step : 0.0;
    d.comm_busy_fraction = step > 0 ? s.comm_busy_s / step : 0.0;
    for (int k = 0; k < kCommClassCount; ++k) d.sent_bytes[k] = s.sent_bytes[k];
    list.push_back(d);
  }
  return list;
}

std::vector<LinkSummary> Links(const Simulation& sim) {
  const double step = sim.replay.step_time.seconds();
  std::vector<LinkSummary> list;
  for (const LinkUsage& u : sim.replay.links) {
    list.push_back({u.name, u.bytes, step > 0 ? u.busy_s / step : 0.0, u.links});
  }
  return list;
}

std::string DescribeChange(const LinkChange& c) {
  if (c.failed) return c.link + " failed";
  return fmt::format("{} at {:.4g}% bandwidth", c.link, 100 * c.bandwidth_factor);
}

RerouteSummary Rerouted(const Simulation& sim) {
  const ClusterSpec& c = sim.experiment.cluster;
  RerouteSummary r;
  for (const LinkChange& l : c.what_if.links) r.what_if.push_back(DescribeChange(l));
  r.ignored = c.network_model == NetworkModelKind::kAlphaBeta;
  r.bytes = sim.replay.rerouted.bytes;
  for (const Reroutes::Detour& d : sim.replay.rerouted.links) r.links.push_back({d.name, d.bytes});
  return r;
}

// The rank with the highest value of `key` (the lowest such rank on ties).
template <typename Key>
int ArgMax(int n, Key key) {
  int best = 0;
  for (int r = 1; r < n; ++r) {
    if (key(r) > key(best)) best = r;
  }
  return best;
}

}  // namespace

StepSummary SummarizeStep(const Simulation& sim, const SummaryOptions& options) {
  const Experiment& e = sim.experiment;
  const double step = sim.replay.step_time.seconds();
  const int gpus = sim.mesh.Size();
  const double model_flops = ModelFlopsPerStep(e.model, e.plan.global_batch);
  double recompute_flops = 0;
  for (const RankStats& r : sim.stats.ranks) recompute_flops += r.recompute_flops;
  // FP8 runs are stated against the BF16 peak, as Megatron-Bridge/NeMo's tables state them.
  const double peak =
      e.cluster.gpu.PeakTflops(e.training.dtype == Dtype::kFp8 ? Dtype::kBf16 : e.training.dtype);

  StepSummary s;
  s.name = e.name;
  s.meshsim_version = kMeshsimVersion;
  s.gpus = gpus;
  s.params_total = TotalParams(e.model);
  s.params_active = ActiveParams(e.model);
  s.step_time_s = step;
  s.tokens_per_s = step > 0 ? e.plan.global_batch * static_cast<double>(e.model.seq_len) / step : 0;
  s.model_flops_per_step = model_flops;
  s.tflops_per_gpu = step > 0 ? model_flops / step / gpus / 1e12 : 0;
  s.mfu = s.tflops_per_gpu / peak;
  s.hfu = (step > 0 ? (model_flops + recompute_flops) / step / gpus / 1e12 : 0) / peak;
  s.bubble_fraction = sim.stats.bubble_fraction;
  s.worst_memory_rank = ArgMax(gpus, [&sim](int r) { return sim.replay.memory[r].peak_bytes; });
  s.peak_memory_gib = sim.replay.memory[s.worst_memory_rank].peak_bytes / kGiB;
  s.memory_budget_gib = e.cluster.gpu.memory_gib;
  s.fits = s.peak_memory_gib <= e.cluster.gpu.memory_gib;
  s.memory_breakdown_gib = MemoryAtPeak(sim.replay.memory[s.worst_memory_rank]);
  s.critical_rank = sim.stats.critical_rank;
  // The rank with the most compute (MoE routing skew shows here).
  s.busiest_rank = ArgMax(gpus, [&sim](int r) { return sim.stats.ranks[r].compute_busy_s; });
  s.time_breakdown_s = Breakdown(sim.stats.ranks[sim.stats.critical_rank].breakdown);
  if (options.devices) s.devices = Devices(sim);
  if (options.links) s.links = Links(sim);
  if (!e.cluster.what_if.links.empty()) s.rerouted = Rerouted(sim);
  if (e.plan.framework != Framework::kMegatron || e.plan.zero == 3) {
    s.dp_comm = SummarizeDpComm(sim, s.critical_rank);
  }
  s.sim.events = sim.replay.events;
  s.sim.ops = sim.program.OpCount();
  s.sim.replayed_ranks = sim.simulated_ranks.size();
  if (!options.reproducible) {
    s.sim.wall_s = sim.wall_s;
    s.sim.events_per_s = sim.wall_s > 0 ? sim.replay.events / sim.wall_s : 0.0;
    s.sim.peak_rss_mib = PeakRssMib();
  }
  return s;
}

}  // namespace meshsim

// The summary of one simulated step, as a typed value. summary.json, the terminal summary,
// the summary columns of a sweep's results.csv, the planner's table and the explorer's
// data are all renderings of a StepSummary; nothing re-parses another rendering.
//
// The scalar fields are listed once, in VisitScalarFields / VisitSimFields below: their
// names are summary.json's (nested objects dotted: "memory_breakdown_gib.weights") and
// their order is summary.json's. Everything that names, writes or reads the scalars
// (SummaryJson, results.csv's columns and their parsing) walks that list.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/engine/simulation.h"

namespace meshsim {

inline constexpr const char* kMeshsimVersion = "0.1.0";
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// Memory by category, GiB (the categories of MemCategory, in its order).
struct MemoryGib {
  double weights = 0;
  double gradients = 0;
  double optimizer = 0;
  double activations = 0;
  double buffers = 0;
  double Total() const { return weights + gradients + optimizer + activations + buffers; }
};

// The critical rank's step, split so that each instant counts once, seconds.
struct TimeBreakdownS {
  double compute = 0;
  double comm_interference = 0;  // compute time added by communication kernels beside it
  double exposed_tp_comm = 0;
  double exposed_dp_comm = 0;
  double exposed_pp_comm = 0;
  double exposed_cp_comm = 0;
  double exposed_ep_comm = 0;
  double host_bound = 0;  // no GPU stream busy while the host thread launches kernels
  double bubble = 0;
  double optimizer = 0;
};

struct DeviceSummary {
  int rank = 0;
  int node = 0;
  Coords coords;
  double peak_memory_gib = 0;
  MemoryGib memory_breakdown_gib;
  double compute_busy_fraction = 0;
  double comm_busy_fraction = 0;
  std::array<double, kCommClassCount> sent_bytes{};  // by CommClass
};

struct LinkSummary {
  std::string name;
  double bytes = 0;
  double busy_fraction = 0;
  int links = 1;
};

// Present when the cluster has what-if link changes.
struct RerouteSummary {
  std::vector<std::string> what_if;  // "leaf0.spine2 failed", "node1.nic3 at 50% bandwidth"
  bool ignored = false;              // alpha_beta: no routes, link changes ignored
  double bytes = 0;
  std::vector<std::pair<std::string, double>> links;  // physical link, detour bytes
};

// The critical rank's data-parallel collectives (gradient reductions and parameter
// all-gathers, tags "dp grad reduce" and "zero param gather") and where their time goes.
// Present when plan.framework is not megatron or plan.zero is 3.
struct DpCommSummary {
  int collectives = 0;
  double bytes = 0;        // summed, nccl-tests convention (sim/net/collective.h)
  double busy_s = 0;       // their replayed durations, summed (overlapping ones both count)
  double latency_s = 0;    // of busy_s: NCCL's launch and per-hop latency (tuner model)
  double bandwidth_s = 0;  // busy_s - latency_s: moving the data, contention included
};

// About the simulation itself. The host measurements (wall_s, events_per_s,
// peak_rss_mib) differ from run to run: zero when reproducible.
struct SimCounters {
  uint64_t events = 0;
  uint64_t ops = 0;
  uint64_t replayed_ranks = 0;
  double wall_s = 0;
  double events_per_s = 0;
  double peak_rss_mib = 0;
};

struct StepSummary {
  std::string name;
  std::string meshsim_version;
  int gpus = 0;
  double params_total = 0;
  double params_active = 0;
  double step_time_s = 0;
  double tokens_per_s = 0;
  double model_flops_per_step = 0;
  double tflops_per_gpu = 0;
  double mfu = 0;
  double hfu = 0;
  double bubble_fraction = 0;
  double peak_memory_gib = 0;
  double memory_budget_gib = 0;
  bool fits = false;
  int worst_memory_rank = 0;
  MemoryGib memory_breakdown_gib;  // of the worst rank, at its peak
  int critical_rank = 0;
  int busiest_rank = 0;
  TimeBreakdownS time_breakdown_s;     // of the critical rank
  std::vector<DeviceSummary> devices;  // every GPU (empty when SummaryOptions::devices off)
  std::vector<LinkSummary> links;      // link classes, then the busiest links
  std::optional<RerouteSummary> rerouted;
  std::optional<DpCommSummary> dp_comm;
  SimCounters sim;
};

// Whether a scalar is a property of the simulated step or a measurement of the host.
enum class FieldKind { kStep, kHostTiming };

// Calls visit(name, field, kind) for each scalar of `s` outside `sim`, in summary.json's
// order. S is StepSummary or const StepSummary.
template <typename S, typename Visit>
void VisitScalarFields(S& s, Visit&& visit) {
  constexpr FieldKind k = FieldKind::kStep;
  visit("name", s.name, k);
  visit("meshsim_version", s.meshsim_version, k);
  visit("gpus", s.gpus, k);
  visit("params_total", s.params_total, k);
  visit("params_active", s.params_active, k);
  visit("step_time_s", s.step_time_s, k);
  visit("tokens_per_s", s.tokens_per_s, k);
  visit("model_flops_per_step", s.model_flops_per_step, k);
  visit("tflops_per_gpu", s.tflops_per_gpu, k);
  visit("mfu", s.mfu, k);
  visit("hfu", s.hfu, k);
  visit("bubble_fraction", s.bubble_fraction, k);
  visit("peak_memory_gib", s.peak_memory_gib, k);
  visit("memory_budget_gib", s.memory_budget_gib, k);
  visit("fits", s.fits, k);
  visit("worst_memory_rank", s.worst_memory_rank, k);
  visit("memory_breakdown_gib.weights", s.memory_breakdown_gib.weights, k);
  visit("memory_breakdown_gib.gradients", s.memory_breakdown_gib.gradients, k);
  visit("memory_breakdown_gib.optimizer", s.memory_breakdown_gib.optimizer, k);
  visit("memory_breakdown_gib.activations", s.memory_breakdown_gib.activations, k);
  visit("memory_breakdown_gib.buffers", s.memory_breakdown_gib.buffers, k);
  visit("critical_rank", s.critical_rank, k);
  visit("busiest_rank", s.busiest_rank, k);
  visit("time_breakdown_s.compute", s.time_breakdown_s.compute, k);
  visit("time_breakdown_s.comm_interference", s.time_breakdown_s.comm_interference, k);
  visit("time_breakdown_s.exposed_tp_comm", s.time_breakdown_s.exposed_tp_comm, k);
  visit("time_breakdown_s.exposed_dp_comm", s.time_breakdown_s.exposed_dp_comm, k);
  visit("time_breakdown_s.exposed_pp_comm", s.time_breakdown_s.exposed_pp_comm, k);
  visit("time_breakdown_s.exposed_cp_comm", s.time_breakdown_s.exposed_cp_comm, k);
  visit("time_breakdown_s.exposed_ep_comm", s.time_breakdown_s.exposed_ep_comm, k);
  visit("time_breakdown_s.host_bound", s.time_breakdown_s.host_bound, k);
  visit("time_breakdown_s.bubble", s.time_breakdown_s.bubble, k);
  visit("time_breakdown_s.optimizer", s.time_breakdown_s.optimizer, k);
}

// The same for `sim` (summary.json's last object).
template <typename S, typename Visit>
void VisitSimFields(S& s, Visit&& visit) {
  visit("sim.events", s.sim.events, FieldKind::kStep);
  visit("sim.ops", s.sim.ops, FieldKind::kStep);
  visit("sim.replayed_ranks", s.sim.replayed_ranks, FieldKind::kStep);
  visit("sim.wall_s", s.sim.wall_s, FieldKind::kHostTiming);
  visit("sim.events_per_s", s.sim.events_per_s, FieldKind::kHostTiming);
  visit("sim.peak_rss_mib", s.sim.peak_rss_mib, FieldKind::kHostTiming);
}

struct SummaryOptions {
  // Host measurements (sim.wall_s, sim.events_per_s, sim.peak_rss_mib) vary from run to
  // run; with reproducible = true they are 0 so that outputs are byte-identical.
  bool reproducible = false;
  // The per-device list and the link usage; sweeps, which keep only scalars, leave them
  // out (thousands of devices per configuration).
  bool devices = true;
  bool links = true;
};

// Precondition: sim.replay.completed.
StepSummary SummarizeStep(const Simulation& sim, const SummaryOptions& options = {});

}  // namespace meshsim

#include "sim/report/summary.h"

#include <fmt/format.h>

#include <algorithm>

#include "sim/core/host.h"
#include "sim/workload/transformer.h"

namespace meshsim {
namespace {

using Json = nlohmann::ordered_json;

Json MemoryBreakdown(const DeviceMemory& m) {
  Json j;
  for (int c = 0; c < kMemCategoryCount; ++c) {
    j[std::string(MemCategoryName(static_cast<MemCategory>(c)))] = m.at_peak[c] / kGiB;
  }
  return j;
}

Json TimeBreakdownJson(const TimeBreakdown& b) {
  Json j;
  j["compute"] = b.compute_s;
  j["exposed_tp_comm"] = b.exposed_tp_s;
  j["exposed_dp_comm"] = b.exposed_dp_s;
  j["exposed_pp_comm"] = b.exposed_pp_s;
  j["exposed_cp_comm"] = b.exposed_cp_s;
  j["exposed_ep_comm"] = b.exposed_ep_s;
  j["bubble"] = b.bubble_s;
  j["optimizer"] = b.optimizer_s;
  return j;
}

Json Devices(const Simulation& sim) {
  Json list = Json::array();
  const double step = sim.replay.step_time.seconds();
  for (int r = 0; r < sim.mesh.Size(); ++r) {
    const Coords& c = sim.mesh.CoordsOf(r);
    const RankStats& s = sim.stats.ranks[r];
    Json d;
    d["rank"] = r;
    d["node"] = r / sim.experiment.cluster.gpus_per_node;
    d["coords"] = {{"tp", c.tp}, {"pp", c.pp}, {"dp", c.dp}, {"cp", c.cp}, {"ep", c.ep}};
    d["peak_memory_gib"] = sim.replay.memory[r].peak_bytes / kGiB;
    d["memory_breakdown_gib"] = MemoryBreakdown(sim.replay.memory[r]);
    d["compute_busy_fraction"] = step > 0 ? s.compute_busy_s / step : 0.0;
    d["comm_busy_fraction"] = step > 0 ? s.comm_busy_s / step : 0.0;
    Json sent;
    for (int k = 0; k < kCommClassCount; ++k) {
      sent[std::string(CommClassName(static_cast<CommClass>(k)))] = s.sent_bytes[k];
    }
    d["sent_bytes"] = std::move(sent);
    list.push_back(std::move(d));
  }
  return list;
}

// Per link class (busy_fraction: mean over the class's links of their busy time over the
// step), then the busiest individual links.
Json Links(const Simulation& sim) {
  const double step = sim.replay.step_time.seconds();
  Json list = Json::array();
  for (const LinkUsage& u : sim.replay.links) {
    Json l;
    l["name"] = u.name;
    l["bytes"] = u.bytes;
    l["busy_fraction"] = step > 0 ? u.busy_s / step : 0.0;
    l["links"] = u.links;
    list.push_back(std::move(l));
  }
  return list;
}

std::string DescribeChange(const LinkChange& c) {
  if (c.failed) return c.link + " failed";
  return fmt::format("{} at {:.4g}% bandwidth", c.link, 100 * c.bandwidth_factor);
}

// What-if link changes and the traffic they moved (present only with such changes).
Json Rerouted(const Simulation& sim) {
  const ClusterSpec& c = sim.experiment.cluster;
  Json changes = Json::array();
  for (const LinkChange& l : c.what_if.links) changes.push_back(DescribeChange(l));
  Json links = Json::array();
  for (const Reroutes::Detour& d : sim.replay.rerouted.links) {
    links.push_back({{"name", d.name}, {"bytes", d.bytes}});
  }
  Json j;
  j["what_if"] = std::move(changes);
  j["ignored"] = c.network_model == NetworkModelKind::kAlphaBeta;
  j["bytes"] = sim.replay.rerouted.bytes;
  j["links"] = std::move(links);
  return j;
}

// "1.23 GB", "45.6 MB", "789 kB".
std::string Bytes(double b) {
  if (b >= 1e9) return fmt::format("{:.3g} GB", b / 1e9);
  if (b >= 1e6) return fmt::format("{:.3g} MB", b / 1e6);
  return fmt::format("{:.3g} kB", b / 1e3);
}

// "  what-if ..." for people: the changes, and the rerouted traffic and its busiest detours.
std::string WhatIfLine(const Json& r) {
  std::string changes;
  for (const Json& c : r["what_if"]) {
    changes += (changes.empty() ? "" : ", ") + c.get<std::string>();
  }
  std::string out = "  what-if          " + changes;
  if (r["ignored"].get<bool>()) {
    return out + ": ignored by network_model alpha_beta (no routes; use flow)\n";
  }
  const double bytes = r["bytes"].get<double>();
  if (bytes <= 0) return out + "; no traffic rerouted\n";
  out += "; " + Bytes(bytes) + " rerouted over ";
  constexpr size_t kShown = 4;
  const Json& links = r["links"];
  for (size_t i = 0; i < links.size() && i < kShown; ++i) {
    out += fmt::format("{}{} ({})", i ? ", " : "", links[i]["name"].get<std::string>(),
                       Bytes(links[i]["bytes"].get<double>()));
  }
  if (links.size() > kShown) out += fmt::format(" and {} more links", links.size() - kShown);
  return out + "\n";
}

// Every part of time_breakdown_s, in its order: the exposed communication classes on one
// line ("exposed comm  tp 0.0123 s, ..."), the others on the "critical path" line, with
// the precision of the step time so that the printed parts add up to it.
std::string BreakdownLines(const Json& t) {
  std::string path, comm;
  for (const auto& [key, value] : t.items()) {
    std::string name = key;
    std::string* line = &path;
    if (name.starts_with("exposed_")) {
      name = name.substr(8);
      if (name.ends_with("_comm")) name.resize(name.size() - 5);
      line = &comm;
    }
    std::replace(name.begin(), name.end(), '_', ' ');
    *line += fmt::format("{}{} {:.4f} s", line->empty() ? "" : ", ", name, value.get<double>());
  }
  return "  critical path    " + path + "\n  exposed comm     " + comm + "\n";
}

}  // namespace

Json BuildSummary(const Simulation& sim, const SummaryOptions& options) {
  const Experiment& e = sim.experiment;
  const double step = sim.replay.step_time.seconds();
  const int gpus = sim.mesh.Size();
  const double model_flops = ModelFlopsPerStep(e.model, e.plan.global_batch);
  double recompute_flops = 0;
  for (const RankStats& r : sim.stats.ranks) recompute_flops += r.recompute_flops;
  const double hw_flops = model_flops + recompute_flops;
  const double peak = e.cluster.gpu.PeakTflops(e.training.dtype);
  const double tflops = step > 0 ? model_flops / step / gpus / 1e12 : 0;
  const double hw_tflops = step > 0 ? hw_flops / step / gpus / 1e12 : 0;

  int worst = 0;
  for (int r = 1; r < gpus; ++r) {
    if (sim.replay.memory[r].peak_bytes > sim.replay.memory[worst].peak_bytes) worst = r;
  }
  const double peak_gib = sim.replay.memory[worst].peak_bytes / kGiB;

  Json j;
  j["name"] = e.name;
  j["meshsim_version"] = kMeshsimVersion;
  j["gpus"] = gpus;
  j["params_total"] = TotalParams(e.model);
  j["params_active"] = ActiveParams(e.model);
  j["step_time_s"] = step;
  j["tokens_per_s"] =
      step > 0 ? e.plan.global_batch * static_cast<double>(e.model.seq_len) / step : 0;
  j["model_flops_per_step"] = model_flops;
  j["tflops_per_gpu"] = tflops;
  j["mfu"] = tflops / peak;
  j["hfu"] = hw_tflops / peak;
  j["bubble_fraction"] = sim.stats.bubble_fraction;
  j["peak_memory_gib"] = peak_gib;
  j["memory_budget_gib"] = e.cluster.gpu.memory_gib;
  j["fits"] = peak_gib <= e.cluster.gpu.memory_gib;
  j["worst_memory_rank"] = worst;
  j["memory_breakdown_gib"] = MemoryBreakdown(sim.replay.memory[worst]);
  j["critical_rank"] = sim.stats.critical_rank;
  // The rank with the most compute (MoE routing skew shows here).
  int busiest = 0;
  for (int r = 1; r < gpus; ++r) {
    if (sim.stats.ranks[r].compute_busy_s > sim.stats.ranks[busiest].compute_busy_s) busiest = r;
  }
  j["busiest_rank"] = busiest;
  j["time_breakdown_s"] = TimeBreakdownJson(sim.stats.ranks[sim.stats.critical_rank].breakdown);
  if (options.devices) j["devices"] = Devices(sim);
  j["links"] = Links(sim);
  if (!e.cluster.what_if.links.empty()) j["rerouted"] = Rerouted(sim);
  const double wall = options.reproducible ? 0.0 : sim.wall_s;
  j["sim"] = {{"events", sim.replay.events},
              {"ops", sim.program.OpCount()},
              {"replayed_ranks", sim.simulated_ranks.size()},
              {"wall_s", wall},
              {"events_per_s", wall > 0 ? sim.replay.events / wall : 0.0},
              {"peak_rss_mib", options.reproducible ? 0.0 : PeakRssMib()}};
  return j;
}

std::string HumanSummary(const Json& s) {
  const Json& t = s["time_breakdown_s"];
  const Json& m = s["memory_breakdown_gib"];
  std::string out;
  out += fmt::format("{}: {} GPUs, {:.2f}B parameters\n", s["name"].get<std::string>(),
                     s["gpus"].get<int>(), s["params_total"].get<double>() / 1e9);
  out += fmt::format("  step time        {:.4f} s   ({:.0f} tokens/s)\n",
                     s["step_time_s"].get<double>(), s["tokens_per_s"].get<double>());
  out += fmt::format("  throughput       {:.1f} TFLOP/s per GPU   MFU {:.1f}%   HFU {:.1f}%\n",
                     s["tflops_per_gpu"].get<double>(), 100 * s["mfu"].get<double>(),
                     100 * s["hfu"].get<double>());
  out += fmt::format("  pipeline bubble  {:.1f}%\n", 100 * s["bubble_fraction"].get<double>());
  out += BreakdownLines(t);
  out += fmt::format(
      "  peak memory      {:.2f} GiB of {:.0f} GiB ({}) on rank {}: weights {:.2f}, grads {:.2f}, "
      "optimizer {:.2f}, activations {:.2f}, buffers {:.2f}\n",
      s["peak_memory_gib"].get<double>(), s["memory_budget_gib"].get<double>(),
      s["fits"].get<bool>() ? "fits" : "DOES NOT FIT", s["worst_memory_rank"].get<int>(),
      m["weights"].get<double>(), m["gradients"].get<double>(), m["optimizer"].get<double>(),
      m["activations"].get<double>(), m["buffers"].get<double>());
  if (s.contains("rerouted")) out += WhatIfLine(s["rerouted"]);
  out += fmt::format("  simulated        {} events in {:.3f} s\n",
                     s["sim"]["events"].get<uint64_t>(), s["sim"]["wall_s"].get<double>());
  return out;
}

}  // namespace meshsim

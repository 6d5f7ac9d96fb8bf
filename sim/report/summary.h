// The summary of one simulated step (summary.json), as in SPEC.md's key table.
#pragma once

#include <nlohmann/json.hpp>

#include "sim/engine/simulation.h"

namespace meshsim {

inline constexpr const char* kMeshsimVersion = "0.1.0";

struct SummaryOptions {
  // Host measurements (sim.wall_s, sim.events_per_s, sim.peak_rss_mib) vary from run to
  // run; with reproducible = true they are written as 0 so outputs are byte-identical.
  bool reproducible = false;
  // The per-device array (`devices`); sweeps, which keep only scalar keys, leave it out.
  bool devices = true;
};

nlohmann::ordered_json BuildSummary(const Simulation& sim, const SummaryOptions& options = {});

// A few lines for people: step time, throughput, MFU, bubble, every part of
// time_breakdown_s (printed to the step time's precision, so they add up to it), memory
// against budget, and with what-if link changes the traffic they rerouted.
std::string HumanSummary(const nlohmann::ordered_json& summary);

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

}  // namespace meshsim

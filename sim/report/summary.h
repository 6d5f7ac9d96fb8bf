// Renderings of a StepSummary (step_summary.h) for `meshsim run`: summary.json and the
// few lines printed for people.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "sim/report/step_summary.h"

namespace meshsim {

// summary.json: the scalars (nested objects for dotted names), devices, links, rerouted
// (when present), then sim; keys in that order.
nlohmann::ordered_json SummaryJson(const StepSummary& s);

// SummaryJson(s).dump(2), written without building the devices' JSON: each device's
// measured part (its memory, busy fractions, bytes sent) is formatted once per distinct
// value and reused by the devices that share it (a symmetric replay's mirrors), so that
// 100,000 devices cost a copy each. O(devices + distinct measured parts).
std::string SummaryText(const StepSummary& s);
// The same text streamed to `out` in pieces of about 1 MiB.
void WriteSummaryText(const StepSummary& s, std::ostream& out);

// SummaryJson(SummarizeStep(sim, options)).
nlohmann::ordered_json BuildSummary(const Simulation& sim, const SummaryOptions& options = {});

// A few lines for people: step time, throughput, MFU, bubble, every part of
// time_breakdown_s (printed to the step time's precision, so they add up to it), memory
// against budget, and with what-if link changes the traffic they rerouted.
std::string HumanSummary(const StepSummary& s);

}  // namespace meshsim

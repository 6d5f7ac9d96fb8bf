// Renderings of a StepSummary (step_summary.h) for `meshsim run`: summary.json and the
// few lines printed for people.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "sim/report/step_summary.h"

namespace meshsim {

// summary.json: the scalars (nested objects for dotted names), devices, links, rerouted
// (when present), then sim; keys in that order.
nlohmann::ordered_json SummaryJson(const StepSummary& s);

// SummaryJson(SummarizeStep(sim, options)).
nlohmann::ordered_json BuildSummary(const Simulation& sim, const SummaryOptions& options = {});

// A few lines for people: step time, throughput, MFU, bubble, every part of
// time_breakdown_s (printed to the step time's precision, so they add up to it), memory
// against budget, and with what-if link changes the traffic they rerouted.
std::string HumanSummary(const StepSummary& s);

}  // namespace meshsim

// What a finished sweep's rows say: the fastest configurations, the Pareto front of step
// time against peak memory, and the data of the HTML explorer.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/sweep/result_row.h"

namespace meshsim {

// Rows with status ok, fastest first (ties: less memory, then lower configuration index).
std::vector<size_t> RankByStepTime(const ResultTable& t);

// The rows with status ok that no other ok row beats on both step time and peak memory
// (at least as good on both, better on one), fastest first.
std::vector<size_t> ParetoFront(const ResultTable& t);

// The rows of `t` (all but invalid ones) as the HTML explorer's data: per row the plan
// (tp, pp, dp, cp, zero, mb, schedule, v, recompute, sp), status, step time, MFU, bubble,
// tokens/s, memory per category (simulated at the peak, or the bound where pruned), the
// budget and the message; with the JAX-style axis columns of the table (plan.mesh.ici.*,
// plan.mesh.dcn.*, plan.rules.*, plan.xla.*) each row also has their values by key, and `mesh_dims`
// lists them as [key, label] ("ICI data").
nlohmann::ordered_json ExplorerData(const ResultTable& t, const std::string& title,
                                    const std::string& subtitle);

}  // namespace meshsim

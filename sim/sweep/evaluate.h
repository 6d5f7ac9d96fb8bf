// Evaluates one sweep configuration: check the plan, prune by the memory bound, simulate.
#pragma once

#include <optional>
#include <string>

#include "sim/core/status.h"
#include "sim/engine/resource_estimate.h"
#include "sim/plan/experiment.h"
#include "sim/report/step_summary.h"
#include "sim/schedule/memory_bound.h"

namespace meshsim {

// ok: simulated and fits; oom: the memory bound exceeds the budget (pruned, not
// simulated) or the replay's peak does; invalid: the plan cannot run (ValidatePlan);
// error: the replay stalled (a bug; the row says where).
enum class ConfigStatus { kOk, kOom, kInvalid, kError };
const char* ConfigStatusName(ConfigStatus s);
// The status named `name` (as ConfigStatusName writes it), or false.
bool ParseConfigStatus(const std::string& name, ConfigStatus* out);

struct Evaluation {
  ConfigStatus status = ConfigStatus::kInvalid;
  std::string message;  // why invalid / oom / error; empty when ok
  bool simulated = false;
  std::optional<MemoryBound> bound;    // every valid plan
  std::optional<StepSummary> summary;  // simulated plans (reproducible; scalars only)
  double budget_gib = 0;
};

// `known_invalid`: an error the enumeration already found (a dp that is not whole).
// `memory`: the host memory a simulation may take (ReadAvailableMemory); a configuration
// estimated above it (GuardConfiguration) is not simulated: status error, message
// "skipped: ..." with the estimate. bytes 0: no guard.
Evaluation Evaluate(const Experiment& e, const std::optional<InputError>& known_invalid = {},
                    const AvailableMemory& memory = {});

}  // namespace meshsim

#include "sim/sweep/evaluate.h"

#include <fmt/format.h>

#include "sim/engine/simulation.h"
#include "sim/plan/validate.h"

namespace meshsim {

const char* ConfigStatusName(ConfigStatus s) {
  switch (s) {
    case ConfigStatus::kOk:
      return "ok";
    case ConfigStatus::kOom:
      return "oom";
    case ConfigStatus::kInvalid:
      return "invalid";
    case ConfigStatus::kError:
      return "error";
  }
  return "?";
}

bool ParseConfigStatus(const std::string& name, ConfigStatus* out) {
  for (ConfigStatus s :
       {ConfigStatus::kOk, ConfigStatus::kOom, ConfigStatus::kInvalid, ConfigStatus::kError}) {
    if (name == ConfigStatusName(s)) {
      *out = s;
      return true;
    }
  }
  return false;
}

Evaluation Evaluate(const Experiment& e, const std::optional<InputError>& known_invalid,
                    const AvailableMemory& memory) {
  Evaluation ev;
  ev.budget_gib = e.cluster.gpu.memory_gib;
  auto invalid = [&ev](const InputError& err) {
    ev.status = ConfigStatus::kInvalid;
    ev.message = err.key.empty() ? err.message : err.key + ": " + err.message;
    return ev;
  };
  if (known_invalid) return invalid(*known_invalid);
  const Status valid = ValidatePlan(e.plan, e.training, e.model, e.cluster);
  if (!valid.ok()) return invalid(valid.error());

  ev.bound = EstimatePeakMemory(e);
  const double bound_gib = ev.bound->Total() / kGiB;
  if (bound_gib > ev.budget_gib) {
    ev.status = ConfigStatus::kOom;
    ev.message = fmt::format("pruned: needs at least {:.2f} GiB (stage {}) > budget {:.4g} GiB",
                             bound_gib, ev.bound->stage, ev.budget_gib);
    return ev;
  }
  const std::string over = GuardConfiguration(e, memory.bytes, memory.source);
  if (!over.empty()) {
    ev.status = ConfigStatus::kError;
    ev.message = "skipped: " + over;
    return ev;
  }
  const std::unique_ptr<Simulation> sim = Simulate(e);
  ev.simulated = true;
  if (!sim->replay.completed) {
    ev.status = ConfigStatus::kError;
    ev.message = "internal error: the replay stalled: " + sim->replay.stall;
    return ev;
  }
  SummaryOptions so;
  so.reproducible = true;
  so.devices = false;  // no column reads them; thousands of devices per configuration
  so.links = false;
  ev.summary = SummarizeStep(*sim, so);
  if (ev.summary->fits) {
    ev.status = ConfigStatus::kOk;
  } else {
    ev.status = ConfigStatus::kOom;
    ev.message = fmt::format("simulated peak {:.2f} GiB > budget {:.4g} GiB",
                             ev.summary->peak_memory_gib, ev.budget_gib);
  }
  return ev;
}

}  // namespace meshsim

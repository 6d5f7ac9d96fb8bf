// One bundled experiment's step with --set overrides on the alpha-beta network, for tests
// that compare a knob's settings on a real recipe; the load error of overrides; and the
// bundled default experiment in full replay on the fake kernel models.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sim/config/loader.h"
#include "sim/engine/simulation.h"
#include "sim/report/step_summary.h"
#include "tests/unit/test_fixtures.h"

namespace meshsim::testing {

inline StepSummary ExperimentStep(const std::string& path, std::vector<std::string> sets) {
  sets.push_back("cluster.network_model=alpha_beta");
  Result<Experiment> e = LoadExperimentFile(path, sets);
  EXPECT_TRUE(e.ok()) << e.error().ToString();
  return SummarizeStep(*Simulate(e.value()));
}

// Empty when the overrides load.
inline std::string ExperimentLoadError(const std::string& path,
                                       const std::vector<std::string>& sets) {
  Result<Experiment> e = LoadExperimentFile(path, sets);
  return e.ok() ? std::string() : e.error().ToString();
}

// workloads/experiments/default.yaml, every rank replayed (--full-replay), FakeModels().
inline std::unique_ptr<Simulation> DefaultFullReplay() {
  Result<Experiment> e = LoadExperimentFile(
      std::string(MESHSIM_SOURCE_DIR) + "/workloads/experiments/default.yaml", {});
  EXPECT_TRUE(e.ok()) << e.error().ToString();
  SimulationOptions o;
  o.full_replay = true;
  return Simulate(e.value(), o, FakeModels());
}

}  // namespace meshsim::testing

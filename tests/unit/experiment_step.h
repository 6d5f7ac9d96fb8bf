// One bundled experiment's step with --set overrides on the alpha-beta network, for tests
// that compare a knob's settings on a real recipe; and the load error of overrides.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "sim/config/loader.h"
#include "sim/engine/simulation.h"
#include "sim/report/step_summary.h"

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

}  // namespace meshsim::testing

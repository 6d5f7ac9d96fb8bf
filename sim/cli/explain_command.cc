// meshsim explain EXPERIMENT: per-device shapes and the collectives of one step, as text.
#include <iostream>

#include "sim/cli/commands.h"
#include "sim/config/loader.h"
#include "sim/plan/mesh.h"
#include "sim/report/explain.h"
#include "sim/schedule/step_builder.h"

namespace meshsim::cli {

int Explain(const std::string& experiment, const std::vector<std::string>& sets) {
  const Result<Experiment> loaded = LoadExperimentFile(experiment, sets);
  if (!loaded.ok()) return ReportError(loaded.error());
  const Experiment& e = loaded.value();
  const Mesh mesh(e.plan);
  const Program program =
      BuildStepProgram(e.model, e.plan, e.training, mesh, mesh.Pipeline(0), HostThreads(e));
  std::cout << ExplainText(e, mesh, program);
  return kOk;
}

}  // namespace meshsim::cli

// Fuzz target: an experiment YAML file (with its model and cluster inline or by path),
// loaded and validated as `meshsim validate` does; no simulation.
//
// The input is the text of workloads/experiments/fuzz.yaml (a file that does not exist),
// so relative paths such as ../models/llama2-7b.yaml reach the bundled files.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/config/loader.h"
#include "sim/plan/stages.h"
#include "tests/fuzz/fuzz_common.h"

namespace meshsim::fuzz {

// What a validated experiment promises its users (ValidatePlan's checks).
void CheckExperiment(const Experiment& e) {
  const PlanSpec& p = e.plan;
  Require(p.Ranks() == e.cluster.TotalGpus(), "tp*pp*dp*cp differs from the cluster's GPUs");
  Require(p.MicroBatches() >= 1, "a validated plan without micro-batches");
  Require(e.model.heads % p.tp == 0, "a validated plan whose tp does not divide the heads");
  // The layers split over the pipeline's virtual stages: the plan's list, or the default
  // (written out only where it is small: a fuzzed model may have 2^31 layers).
  const int64_t n = int64_t{p.pp} * p.virtual_stages;
  if (p.stage_layers.empty() && n > (1 << 20)) return;
  const std::vector<int> split = p.stage_layers.empty()
                                     ? DefaultStageLayers(e.model.layers, p.pp, p.virtual_stages)
                                           .value_or(std::vector<int>{-1})
                                     : p.stage_layers;
  int64_t sum = 0;
  for (int layers : split) {
    Require(layers >= 0, "a validated plan with a negative number of layers on a stage");
    sum += layers;
  }
  Require(static_cast<int64_t>(split.size()) == n && sum == e.model.layers,
          "a validated plan whose stages do not hold the model's layers");
}

}  // namespace meshsim::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace meshsim;
  static const std::string path = fuzz::SourcePath("workloads/experiments/fuzz.yaml");
  const std::string text(reinterpret_cast<const char*>(data), size);
  const Result<Experiment> loaded = LoadExperimentText(text, path);
  if (loaded.ok()) {
    fuzz::CheckExperiment(loaded.value());
  } else {
    fuzz::CheckError(loaded.error());
  }
  return 0;
}

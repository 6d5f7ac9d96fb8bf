// Fuzz target: `--set KEY=VALUE` overrides on a bundled experiment, loaded and validated
// as `meshsim validate EXPERIMENT --set ...` does; no simulation.
//
// Input: the first line names the base, a file of workloads/experiments/ (default.yaml
// when it names none); every further line is one --set argument.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "sim/config/loader.h"
#include "tests/fuzz/fuzz_common.h"

namespace {

namespace fs = std::filesystem;

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace meshsim;
  static const std::string dir = fuzz::SourcePath("workloads/experiments/");
  std::vector<std::string> sets = Lines(std::string(reinterpret_cast<const char*>(data), size));
  std::string base = "default.yaml";
  if (!sets.empty()) {
    // Only plain names of bundled experiments: no walking out of the folder.
    const std::string& name = sets.front();
    if (name.find('/') == std::string::npos && name.size() > 5 &&
        name.compare(name.size() - 5, 5, ".yaml") == 0 && fs::is_regular_file(dir + name)) {
      base = name;
    }
    sets.erase(sets.begin());
  }
  const Result<Experiment> loaded = LoadExperimentFile(dir + base, sets);
  if (loaded.ok()) {
    const PlanSpec& p = loaded.value().plan;
    fuzz::Require(p.Ranks() == loaded.value().cluster.TotalGpus(),
                  "tp*pp*dp*cp differs from the cluster's GPUs");
    fuzz::Require(p.MicroBatches() >= 1, "a validated plan without micro-batches");
  } else {
    fuzz::CheckError(loaded.error());
  }
  return 0;
}

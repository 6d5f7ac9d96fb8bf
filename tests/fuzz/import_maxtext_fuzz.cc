// Fuzz target: `meshsim import maxtext` on a MaxText config. The input is up to three
// parts split by lines "%%": the base config's YAML, the model config's YAML (absent or
// empty: none) and KEY=VALUE overrides, one per line; imported for slices of 8 chips on
// dgx-h100 (gpus_per_node 8). An accepted import must give experiment YAML that loads, or
// fails validation on a key that names a plan, model or cluster setting; never a YAML
// syntax error or an unknown key.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "sim/config/import_maxtext.h"
#include "sim/config/loader.h"
#include "tests/fuzz/fuzz_common.h"

namespace meshsim::fuzz {
namespace {

MaxTextImportOptions Split(const std::string& input) {
  std::vector<std::string> parts(1);
  std::istringstream lines(input);
  std::string line;
  while (std::getline(lines, line)) {
    if (line == "%%" && parts.size() < 3) {
      parts.emplace_back();
    } else {
      parts.back() += line + "\n";
    }
  }
  MaxTextImportOptions o;
  o.base = {"base.yml", parts[0]};
  if (parts.size() > 1 && !parts[1].empty()) o.model = {"model.yml", parts[1]};
  if (parts.size() > 2) {
    std::istringstream args(parts[2]);
    while (std::getline(args, line)) {
      if (!line.empty()) o.overrides.push_back(line);
    }
  }
  o.chips_per_slice = 8;
  o.name = "maxtext";
  return o;
}

void CheckExperimentYaml(const MaxTextImport& run) {
  static const std::string cluster = SourcePath("topologies/dgx-h100.yaml");
  static const std::string path = SourcePath("workloads/experiments/maxtext-fuzz.yaml");
  const std::string yaml =
      MaxTextExperimentYaml(run, "maxtext", cluster, 8, "meshsim import maxtext fuzz.yml");
  const Result<Experiment> back = LoadExperimentText(yaml, path);
  if (back.ok()) return;
  const InputError& e = back.error();
  CheckError(e);
  Require(e.message.rfind("YAML", 0) != 0 && e.message.rfind("unknown key", 0) != 0,
          "the imported experiment is malformed:\n" + yaml, &e);
}

}  // namespace
}  // namespace meshsim::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace meshsim;
  const MaxTextImportOptions options =
      fuzz::Split(std::string(reinterpret_cast<const char*>(data), size));
  const Result<MaxTextImport> imported = ImportMaxTextConfig(options);
  if (!imported.ok()) {
    fuzz::CheckError(imported.error());
    return 0;
  }
  fuzz::CheckExperimentYaml(imported.value());
  return 0;
}

// Fuzz target: `meshsim import megatron` on a Megatron-LM argument string, completed
// for 8-GPU nodes as the CLI does with the default cluster (selene-a100). An accepted
// import must give experiment YAML that loads, or fails validation on a key that names a
// plan or model setting; never a syntax error or an unknown key.
#include <cstddef>
#include <cstdint>
#include <string>

#include "sim/config/import_megatron.h"
#include "sim/config/loader.h"
#include "tests/fuzz/fuzz_common.h"

namespace meshsim::fuzz {
namespace {

void CheckExperimentYaml(const MegatronImport& run, int nodes, int gpus_per_node_override) {
  static const std::string cluster = SourcePath("topologies/selene-a100.yaml");
  static const std::string path = SourcePath("workloads/experiments/megatron-fuzz.yaml");
  const std::string yaml =
      MegatronExperimentYaml(run, "megatron", cluster, nodes, gpus_per_node_override);
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
  Result<MegatronImport> parsed =
      ParseMegatronArgs(std::string(reinterpret_cast<const char*>(data), size));
  if (!parsed.ok()) {
    fuzz::CheckError(parsed.error());
    return 0;
  }
  int gpus_per_node_override = 0;
  const Result<int> nodes = ResolveMegatronWorld(&parsed.value(), 8, 0, &gpus_per_node_override);
  if (!nodes.ok()) {
    fuzz::CheckError(nodes.error());
    return 0;
  }
  fuzz::CheckExperimentYaml(parsed.value(), nodes.value(), gpus_per_node_override);
  return 0;
}

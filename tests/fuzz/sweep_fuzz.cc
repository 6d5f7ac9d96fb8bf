// Fuzz target: a sweep YAML file (base experiment inline or by path, axes), loaded as
// `meshsim sweep` does before it evaluates anything; no configuration is simulated.
//
// The input is the text of workloads/sweeps/fuzz.yaml (a file that does not exist), so
// relative paths such as ../experiments/default.yaml reach the bundled files.
#include <cstddef>
#include <cstdint>
#include <string>

#include "sim/config/sweep_loader.h"
#include "tests/fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace meshsim;
  static const std::string path = fuzz::SourcePath("workloads/sweeps/fuzz.yaml");
  const std::string text(reinterpret_cast<const char*>(data), size);
  const Result<SweepSpec> loaded = LoadSweepText(text, path);
  if (loaded.ok()) {
    const SweepSpec& s = loaded.value();
    fuzz::Require(!s.axes.empty() && !s.groups.empty(), "a sweep without axes or groups");
    for (const auto& g : s.groups) {
      fuzz::Require(g.choice.size() == s.axes.size(), "a group without a choice per axis");
    }
  } else {
    fuzz::CheckError(loaded.error());
  }
  return 0;
}

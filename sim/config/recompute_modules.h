// Names of Megatron-Core's --recompute-modules (TransformerConfig.recompute_modules), as
// plan.recompute_modules and `import megatron` read them (transformer.h RecomputeModules).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "sim/workload/transformer.h"

namespace meshsim {

// The modules meshsim models, each with its flag.
inline const std::vector<std::pair<std::string, bool RecomputeModules::*>>& RecomputeModuleNames() {
  static const std::vector<std::pair<std::string, bool RecomputeModules::*>> names = {
      {"core_attn", &RecomputeModules::core_attn},
      {"layernorm", &RecomputeModules::layernorm},
      {"moe_act", &RecomputeModules::moe_act},
      {"mlp", &RecomputeModules::mlp},
      {"mla_up_proj", &RecomputeModules::mla_up_proj}};
  return names;
}

// Megatron-Core's other modules, which meshsim does not model.
inline const std::vector<std::string>& UnmodelledRecomputeModules() {
  static const std::vector<std::string> names = {"moe", "shared_experts"};
  return names;
}

// Sets the flag of `name`; false when meshsim does not model it (or it is no module).
inline bool SetRecomputeModule(const std::string& name, RecomputeModules* m) {
  for (const auto& [n, flag] : RecomputeModuleNames()) {
    if (n == name) {
      m->*flag = true;
      return true;
    }
  }
  return false;
}

// All flags off: the start of a list that names every module it wants.
inline RecomputeModules NoRecomputeModules() {
  RecomputeModules m;
  m.core_attn = false;
  return m;
}

// The YAML flow list of the set flags, e.g. "[layernorm, moe_act]".
inline std::string RecomputeModulesText(const RecomputeModules& m) {
  std::string s = "[";
  for (const auto& [n, flag] : RecomputeModuleNames()) {
    if (!(m.*flag)) continue;
    if (s.size() > 1) s += ", ";
    s += n;
  }
  return s + "]";
}

}  // namespace meshsim

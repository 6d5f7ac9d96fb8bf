// Decoding an experiment from a YAML tree (config-layer internal).
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "sim/plan/experiment.h"

namespace meshsim::config {

// Resolves and decodes the experiment mapping `root` (modified in place by `sets`: pass
// a clone to keep the original). `path` is where the tree came from: relative model and
// cluster paths resolve against its folder, and errors name it with the nodes' lines.
// `sets` are --set overrides "dotted.key=VALUE". Throws ConfigError on bad input; with
// validate_plan, also on a plan that ValidatePlan rejects or a JAX-style plan that
// DerivePlan rejects (without it such a plan keeps the degrees it could derive).
Experiment DecodeExperimentNode(YAML::Node root, const std::string& path,
                                const std::vector<std::string>& sets, bool validate_plan);

// The node a dotted key (with optional [i] list indices) names under `root`, skipping
// the first `skip` components; as deep as it exists (`root` itself when none does).
YAML::Node FindKey(const YAML::Node& root, const std::string& key, size_t skip = 0);

}  // namespace meshsim::config

// Checks shared by the YAML decoders (config-layer internal): each fails with the
// file, line, column and dotted key of the value at fault.
#pragma once

#include <cstdint>
#include <string>

#include "sim/config/yaml_reader.h"

namespace meshsim::config {

void RequirePositive(YamlReader& r, const std::string& key, double v);
void RequireAtLeast(YamlReader& r, const std::string& key, int64_t v, int64_t min);
void RequireFraction(YamlReader& r, const std::string& key, double v);
void FailKey(YamlReader& r, const std::string& key, const std::string& message);
// Fails when `r` holds an experiment (model:, cluster:, plan:) where a `what` file was
// expected: the user passed the wrong file, and "layers: required key is missing" would
// not say so.
void RejectExperiment(const YamlReader& r, const std::string& what);

}  // namespace meshsim::config

// Refusing duplicate keys in YAML mappings (config-layer internal).
//
// yaml-cpp keeps every pair of a mapping and answers a lookup with the first, where other
// YAML tools take the last: a file with a repeated key would mean different things to
// meshsim and to the user's other tools. Loading therefore refuses it.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

namespace meshsim::config {

// Throws ConfigError at the second occurrence of the first repeated key (depth first, in
// document order) in any mapping under `node`, naming the dotted key and both lines.
// `file` is where the tree came from: a path (the message gives lines and columns), or
// with `in_file` false a command-line value such as "--set KEY=VALUE" (positions inside
// it would read as lines of a file, so none are given).
void CheckNoDuplicateKeys(const YAML::Node& node, const std::string& file, bool in_file = true);

}  // namespace meshsim::config

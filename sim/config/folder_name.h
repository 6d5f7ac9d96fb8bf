// Names that become folder names (config-layer internal).
//
// An experiment's and a sweep's `name` become a folder under results/runs/ or
// results/sweeps/: a name such as "../../x" or "/etc" would steer the outputs out of that
// folder. Such names are refused where they are read.
#pragma once

#include <string>

#include "sim/config/yaml_reader.h"

namespace meshsim::config {

// True for 1..128 characters from letters, digits, '.', '_', '-', '+', not starting with
// '.' (so neither "." nor ".." nor a hidden folder).
bool IsFolderName(const std::string& name);

// Reads the required string `key` of `r` into `out`; fails (ConfigError, with the key's
// position) unless IsFolderName.
void GetFolderName(YamlReader& r, const std::string& key, std::string* out);

}  // namespace meshsim::config

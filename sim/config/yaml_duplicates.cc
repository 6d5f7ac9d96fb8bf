#include "sim/config/yaml_duplicates.h"

#include <map>

#include "sim/config/yaml_reader.h"

namespace meshsim::config {
namespace {

// A mapping key as a string: scalars as written, anything else by its node kind.
std::string KeyText(const YAML::Node& key) {
  return key.IsScalar() ? key.Scalar() : "(" + Describe(key) + " as a key)";
}

int LineOf(const YAML::Node& node) { return node.Mark().line >= 0 ? node.Mark().line + 1 : 0; }

void Check(const YAML::Node& node, const std::string& prefix, const std::string& file,
           bool in_file) {
  if (node.IsSequence()) {
    for (size_t i = 0; i < node.size(); ++i) {
      Check(node[i], prefix + "[" + std::to_string(i) + "]", file, in_file);
    }
    return;
  }
  if (!node.IsMap()) return;
  std::map<std::string, YAML::Node> seen;
  for (const auto& kv : node) {
    const std::string key = KeyText(kv.first);
    const std::string path = prefix.empty() ? key : prefix + "." + key;
    const auto [it, fresh] = seen.emplace(key, kv.first);
    if (!fresh) {
      const int first = in_file ? LineOf(it->second) : 0;
      Sources src;
      src.file = file;
      Fail(src, in_file ? kv.first : YAML::Node(), path,
           "duplicate key" + (first > 0 ? " (first at line " + std::to_string(first) + ")" : "") +
               ": write each key once (meshsim refuses repeats; other YAML tools would silently "
               "take the last value)");
    }
    Check(kv.second, path, file, in_file);
  }
}

}  // namespace

void CheckNoDuplicateKeys(const YAML::Node& node, const std::string& file, bool in_file) {
  Check(node, "", file, in_file);
}

}  // namespace meshsim::config

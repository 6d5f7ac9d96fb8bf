// A MaxText configuration as MaxText's pyconfig assembles it (config-layer internal, for
// sim/config/import_maxtext.h): the top-level keys of a base YAML file, then of a model
// YAML file, then KEY=VALUE command-line overrides, the later layer winning key by key.
//
// Values keep where they were set (file, line, column of the value, or the override as
// given), so that a bad value is reported there. Typed getters throw ConfigError (the
// config layer's internal exception; the importer returns it as an InputError) naming
// that place, the key, and what was expected and found. A getter given a fallback
// returns it for a key no layer sets and records the key in Defaulted().
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "sim/config/yaml_reader.h"

namespace meshsim::config {

// The `file` of errors in command-line overrides.
inline constexpr const char* kMaxTextCommandLine = "command line";

class MaxTextConfig {
 public:
  // Adds the top-level mapping of a YAML file's text (an empty file adds nothing).
  // Fails on YAML syntax errors and on a top level that is not a mapping.
  void AddFile(const std::string& text, const std::string& file);
  // Adds one KEY=VALUE override. VALUE is a string, as MaxText reads it (the getters
  // convert it); one starting with '[' or '{' is parsed as a YAML flow list or mapping.
  // Fails when there is no '=' or KEY is empty.
  void AddOverride(const std::string& arg);

  bool Has(const std::string& key) const { return values_.count(key) != 0; }
  // Every key set by some layer, sorted.
  std::vector<std::string> Keys() const;
  // "base.yml" or "command line": where `key` was last set. Precondition: Has(key).
  std::string SourceOf(const std::string& key) const;

  // An integer in [min, max]; `fallback` when absent. A float with no fraction (8.0)
  // counts as an integer, as Python's int() of a YAML float does.
  int64_t Int(const std::string& key, int64_t fallback, int64_t min, int64_t max) const;
  // A finite number >= min.
  double Number(const std::string& key, double fallback, double min) const;
  // true/false (any case, as MaxText's string_to_bool), YAML booleans.
  bool Bool(const std::string& key, bool fallback) const;
  // A scalar as text.
  std::string String(const std::string& key, const std::string& fallback) const;
  // A list of strings (a YAML list of scalars, or one scalar: a list of one).
  std::vector<std::string> StringList(const std::string& key,
                                      const std::vector<std::string>& fallback) const;
  // The value's node, for lists of lists; a null node when absent.
  YAML::Node Node(const std::string& key) const;

  // Fails at `key`'s value, or at `at` (a node inside it), with no position when the key
  // is absent or set on the command line; `subkey` is appended to the key as written
  // ("logical_axis_rules[2]").
  [[noreturn]] void Fail(const std::string& key, const std::string& message,
                         const YAML::Node* at = nullptr, const std::string& subkey = "") const;

  // Every key a getter or Node() was asked for, set or not.
  const std::set<std::string>& Read() const { return read_; }
  // Keys a getter read that no layer sets, in the order first read, with the fallback.
  const std::vector<std::pair<std::string, std::string>>& Defaulted() const { return defaulted_; }

 private:
  struct Value {
    YAML::Node node;
    std::string file;  // kMaxTextCommandLine for an override
  };
  const Value* Find(const std::string& key, const std::string& fallback_text) const;

  std::map<std::string, Value> values_;
  mutable std::vector<std::pair<std::string, std::string>> defaulted_;
  mutable std::set<std::string> read_;
};

}  // namespace meshsim::config

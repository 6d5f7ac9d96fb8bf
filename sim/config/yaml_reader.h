// Typed reading of YAML mappings with precise error locations.
//
// A YamlReader wraps one mapping node and the dotted key that leads to it. Get* methods
// read one child each and remember it; Finish() reports any child nobody asked for as an
// unknown key. Every failure throws ConfigError (internal to the config layer; the
// public Load* functions turn it into an InputError value), carrying the file, line and
// column of the offending node.
#pragma once

#include <yaml-cpp/yaml.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "sim/core/status.h"

namespace meshsim::config {

struct ConfigError {
  InputError error;
};

// Where nodes come from: by default `file`; keys merged from elsewhere are listed in
// `origins` (dotted key -> file they came from). Keys set on the command line are listed
// in `set_args` (dotted key -> the --set argument); their nodes carry no position.
struct Sources {
  std::string file;
  std::map<std::string, std::string> origins;
  std::map<std::string, std::string> set_args;
};

// A test instrument, so that the reference in docs/ can be checked against the decoders:
// while a KeyRecorder is alive, every key that a YamlReader on the same thread reads
// (Get*), opens (Map) or marks known (Skip) is recorded, by the file its reader came
// from and its dotted path, with list indices written as [] (cluster.what_if.links[].link).
// Recorders nest as scopes do (the innermost records). When none is alive, recording costs one test
// per key read.
class KeyRecorder {
 public:
  // What a decoder asked of one key.
  struct Key {
    std::string kind;  // integer | number | boolean | string | choice | mapping | "" (Skip)
    std::vector<std::string> choices;  // the names a choice accepts
    bool required = false;             // a Get* that fails when the key is absent
  };
  using Keys = std::map<std::string, Key>;  // dotted key -> what was asked

  KeyRecorder();
  ~KeyRecorder();
  KeyRecorder(const KeyRecorder&) = delete;
  KeyRecorder& operator=(const KeyRecorder&) = delete;

  // The recorder alive on this thread, or nullptr.
  static KeyRecorder* Active();
  // Records `key` (its list indices are normalised here). The first non-empty kind
  // recorded for a key stays (a Skip and a later Get* give the Get*'s); required
  // accumulates.
  void Note(const std::string& file, const std::string& key, const std::string& kind, bool required,
            const std::vector<std::string>& choices = {});

  // File (Sources::file of the reader) -> keys read from it.
  const std::map<std::string, Keys>& by_file() const { return by_file_; }
  // Every key, whatever file it came from.
  Keys All() const;

 private:
  KeyRecorder* previous_;
  std::map<std::string, Keys> by_file_;
};

// The file the dotted `key` was read from (the file of its longest recorded prefix), or
// "" when the key was set on the command line.
std::string OriginFile(const Sources& src, const std::string& key);

[[noreturn]] void Fail(const Sources& src, const YAML::Node& node, const std::string& key,
                       const std::string& message);
std::string Describe(const YAML::Node& node);  // "'abc'", "a mapping", "a list", "nothing"

class YamlReader {
 public:
  // Precondition: none; a non-mapping node fails with "expected a mapping".
  YamlReader(const YAML::Node& node, std::string prefix, const Sources& src);

  bool Has(const std::string& key) const;
  YAML::Node Child(const std::string& key) const;
  std::string KeyPath(const std::string& key) const;

  // Each reads `key` if present (marking it known); `required` makes absence an error.
  void GetInt(const std::string& key, int* out, bool required = false);
  void GetInt64(const std::string& key, int64_t* out, bool required = false);
  void GetDouble(const std::string& key, double* out, bool required = false);
  void GetBool(const std::string& key, bool* out, bool required = false);
  void GetString(const std::string& key, std::string* out, bool required = false);
  // Reads one of `choices` (name -> value).
  template <typename E>
  void GetEnum(const std::string& key, const std::vector<std::pair<std::string, E>>& choices,
               E* out, bool required = false) {
    if (KeyRecorder* recorder = KeyRecorder::Active()) {
      std::vector<std::string> names;
      for (const auto& choice : choices) names.push_back(choice.first);
      recorder->Note(src_.file, KeyPath(key), "choice", required, names);
    }
    std::string s;
    if (!Has(key)) {
      GetString(key, &s, required);
      return;
    }
    s = Required(key, true).Scalar();  // as GetString, without recording it as required
    std::string names;
    for (const auto& [name, value] : choices) {
      if (name == s) {
        *out = value;
        return;
      }
      names += (names.empty() ? "" : " | ") + name;
    }
    Fail(src_, Child(key), KeyPath(key), "expected one of " + names + ", found '" + s + "'");
  }
  // A list of numbers ([1, 2.5]); fails on anything else.
  void GetNumberList(const std::string& key, std::vector<double>* out, bool required = false);
  // A nested mapping; marks the key known. Fails if present but not a mapping.
  YamlReader Map(const std::string& key);
  // Marks a key known without reading it.
  void Skip(const std::string& key);
  // Fails on the first key that was never read.
  void Finish() const;

  const Sources& sources() const { return src_; }
  const YAML::Node& node() const { return node_; }

 private:
  YAML::Node Required(const std::string& key, bool required);
  void Note(const std::string& key, const char* kind, bool required) const;
  YAML::Node node_;
  std::string prefix_;
  const Sources& src_;
  std::set<std::string> known_;
};

// A yaml-cpp exception other than a parse error (e.g. a bad conversion) as an InputError.
InputError FromYamlException(const std::string& path, const YAML::Exception& e);

// Parses a YAML file; syntax errors and missing files fail with their location.
YAML::Node LoadYamlFile(const std::string& path);
// Parses `text`, the contents of file `path`; syntax errors fail with their location.
YAML::Node ParseYamlFileText(const std::string& text, const std::string& path);
// Parses YAML text (for --set values).
YAML::Node LoadYamlText(const std::string& text, const std::string& origin);

}  // namespace meshsim::config

#include "sim/config/maxtext_config.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace meshsim::config {
namespace {

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// A scalar's text as a number: nullopt-like false when it is not one.
bool ParseNumber(const std::string& s, double* out) {
  if (s.empty()) return false;
  std::string t;
  for (const char c : s) {
    if (c != '_') t += c;  // YAML 1.1 and Python allow 32_768
  }
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (end == t.c_str() || *end != '\0' || errno == ERANGE || !std::isfinite(v)) return false;
  *out = v;
  return true;
}

std::string Text(int64_t v) { return std::to_string(v); }

std::string NumberText(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.15g", v);
  return buf;
}

}  // namespace

void MaxTextConfig::AddFile(const std::string& text, const std::string& file) {
  const YAML::Node root = ParseYamlFileText(text, file);
  if (!root.IsDefined() || root.IsNull()) return;
  if (!root.IsMap()) {
    InputError e;
    e.file = file;
    e.key = "(top level)";
    e.message = "expected a mapping of MaxText keys, found " + Describe(root);
    if (root.Mark().line >= 0) {
      e.line = root.Mark().line + 1;
      e.column = root.Mark().column + 1;
    }
    throw ConfigError{e};
  }
  for (const auto& kv : root) {
    const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : std::string();
    if (key.empty()) {
      InputError e;
      e.file = file;
      e.key = "(top level)";
      e.message = "expected a key name, found " + Describe(kv.first);
      if (kv.first.Mark().line >= 0) {
        e.line = kv.first.Mark().line + 1;
        e.column = kv.first.Mark().column + 1;
      }
      throw ConfigError{e};
    }
    values_[key] = Value{kv.second, file};
  }
}

void MaxTextConfig::AddOverride(const std::string& arg) {
  const size_t eq = arg.find('=');
  if (eq == std::string::npos || eq == 0) {
    InputError e;
    e.file = kMaxTextCommandLine;
    e.key = eq == 0 ? "(override)" : arg;
    e.message = "expected KEY=VALUE, found '" + arg + "'";
    throw ConfigError{e};
  }
  const std::string key = arg.substr(0, eq), value = arg.substr(eq + 1);
  YAML::Node node(value);
  if (!value.empty() && (value[0] == '[' || value[0] == '{')) {
    node = LoadYamlText(value, std::string(kMaxTextCommandLine) + " (" + key + ")");
  }
  values_[key] = Value{node, kMaxTextCommandLine};
}

std::vector<std::string> MaxTextConfig::Keys() const {
  std::vector<std::string> keys;
  for (const auto& kv : values_) keys.push_back(kv.first);
  return keys;
}

std::string MaxTextConfig::SourceOf(const std::string& key) const { return values_.at(key).file; }

const MaxTextConfig::Value* MaxTextConfig::Find(const std::string& key,
                                                const std::string& fallback_text) const {
  read_.insert(key);
  const auto it = values_.find(key);
  if (it != values_.end()) return &it->second;
  for (const auto& [k, v] : defaulted_) {
    if (k == key) return nullptr;
  }
  defaulted_.emplace_back(key, fallback_text);
  return nullptr;
}

void MaxTextConfig::Fail(const std::string& key, const std::string& message, const YAML::Node* at,
                         const std::string& subkey) const {
  InputError e;
  e.key = key + subkey;
  e.message = message;
  const auto it = values_.find(key);
  if (it != values_.end()) {
    e.file = it->second.file;
    const YAML::Node& node = at ? *at : it->second.node;
    if (e.file != kMaxTextCommandLine && node.Mark().line >= 0) {
      e.line = node.Mark().line + 1;
      e.column = node.Mark().column + 1;
    }
  }
  throw ConfigError{e};
}

int64_t MaxTextConfig::Int(const std::string& key, int64_t fallback, int64_t min,
                           int64_t max) const {
  const Value* v = Find(key, Text(fallback));
  if (!v) return fallback;
  double x = 0;
  const bool number = v->node.IsScalar() && ParseNumber(v->node.Scalar(), &x);
  const std::string range = "an integer in " + Text(min) + ".." + Text(max);
  if (!number || x != std::floor(x))
    Fail(key, "expected " + range + ", found " + Describe(v->node));
  if (x < static_cast<double>(min) || x > static_cast<double>(max)) {
    Fail(key, "expected " + range + ", found " + NumberText(x));
  }
  return static_cast<int64_t>(x);
}

double MaxTextConfig::Number(const std::string& key, double fallback, double min) const {
  const Value* v = Find(key, NumberText(fallback));
  if (!v) return fallback;
  double x = 0;
  if (!v->node.IsScalar() || !ParseNumber(v->node.Scalar(), &x) || x < min || x > 1e15) {
    Fail(key, "expected a number in " + NumberText(min) + "..1e15, found " + Describe(v->node));
  }
  return x;
}

bool MaxTextConfig::Bool(const std::string& key, bool fallback) const {
  const Value* v = Find(key, fallback ? "True" : "False");
  if (!v) return fallback;
  const std::string s = v->node.IsScalar() ? Lower(v->node.Scalar()) : std::string();
  if (s != "true" && s != "false") {
    Fail(key, "expected true or false, found " + Describe(v->node));
  }
  return s == "true";
}

std::string MaxTextConfig::String(const std::string& key, const std::string& fallback) const {
  const Value* v = Find(key, fallback.empty() ? "''" : fallback);
  if (!v) return fallback;
  if (v->node.IsNull()) return "";
  if (!v->node.IsScalar()) Fail(key, "expected a string, found " + Describe(v->node));
  return v->node.Scalar();
}

std::vector<std::string> MaxTextConfig::StringList(const std::string& key,
                                                   const std::vector<std::string>& fallback) const {
  std::string shown;
  for (const std::string& s : fallback) shown += (shown.empty() ? "" : ", ") + s;
  const Value* v = Find(key, "[" + shown + "]");
  if (!v) return fallback;
  if (v->node.IsScalar()) return {v->node.Scalar()};
  if (!v->node.IsSequence()) Fail(key, "expected a list of names, found " + Describe(v->node));
  std::vector<std::string> out;
  for (size_t i = 0; i < v->node.size(); ++i) {
    const YAML::Node item = v->node[i];
    if (!item.IsScalar()) {
      Fail(key, "expected a name, found " + Describe(item), &item, "[" + std::to_string(i) + "]");
    }
    out.push_back(item.Scalar());
  }
  return out;
}

YAML::Node MaxTextConfig::Node(const std::string& key) const {
  read_.insert(key);
  const auto it = values_.find(key);
  return it == values_.end() ? YAML::Node() : it->second.node;
}

}  // namespace meshsim::config

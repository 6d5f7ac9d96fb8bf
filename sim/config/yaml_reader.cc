#include "sim/config/yaml_reader.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

namespace meshsim::config {

void Fail(const Sources& src, const YAML::Node& node, const std::string& key,
          const std::string& message) {
  InputError e;
  e.key = key;
  e.message = message;
  auto it = src.set_args.find(key);
  if (it != src.set_args.end()) {
    e.file = "--set " + it->second;
  } else {
    // The file of the longest recorded prefix of the key (a merged subtree's origin).
    e.file = src.file;
    for (std::string prefix = key; !prefix.empty();) {
      auto origin = src.origins.find(prefix);
      if (origin != src.origins.end()) {
        e.file = origin->second;
        break;
      }
      const size_t cut = prefix.find_last_of(".[");
      prefix = cut == std::string::npos ? std::string() : prefix.substr(0, cut);
    }
    if (node.IsDefined() && node.Mark().line >= 0) {
      e.line = node.Mark().line + 1;
      e.column = node.Mark().column + 1;
    }
  }
  throw ConfigError{e};
}

std::string Describe(const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return "nothing";
  if (node.IsMap()) return "a mapping";
  if (node.IsSequence()) return "a list";
  return "'" + node.Scalar() + "'";
}

YamlReader::YamlReader(const YAML::Node& node, std::string prefix, const Sources& src)
    : node_(node), prefix_(std::move(prefix)), src_(src) {
  if (!node_.IsMap()) {
    Fail(src_, node_, prefix_.empty() ? "(top level)" : prefix_,
         "expected a mapping, found " + Describe(node_));
  }
}

std::string YamlReader::KeyPath(const std::string& key) const {
  return prefix_.empty() ? key : prefix_ + "." + key;
}

bool YamlReader::Has(const std::string& key) const { return static_cast<bool>(node_[key]); }

YAML::Node YamlReader::Child(const std::string& key) const { return node_[key]; }

YAML::Node YamlReader::Required(const std::string& key, bool required) {
  known_.insert(key);
  YAML::Node child = node_[key];
  if (!child && required) Fail(src_, node_, KeyPath(key), "required key is missing");
  if (child && !child.IsScalar()) {
    Fail(src_, child, KeyPath(key), "expected a value, found " + Describe(child));
  }
  return child;
}

namespace {

bool ParseInt64(const std::string& s, int64_t* out) {
  if (s.empty()) return false;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return false;
  *out = v;
  return true;
}

bool ParseDouble(const std::string& s, double* out) {
  if (s.empty()) return false;
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (errno != 0 || *end != '\0' || !std::isfinite(v)) return false;
  *out = v;
  return true;
}

}  // namespace

void YamlReader::GetInt64(const std::string& key, int64_t* out, bool required) {
  YAML::Node n = Required(key, required);
  if (!n) return;
  if (!ParseInt64(n.Scalar(), out)) {
    Fail(src_, n, KeyPath(key), "expected an integer, found " + Describe(n));
  }
}

void YamlReader::GetInt(const std::string& key, int* out, bool required) {
  int64_t v = *out;
  GetInt64(key, &v, required);
  if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max()) {
    Fail(src_, Child(key), KeyPath(key), "integer out of range: " + std::to_string(v));
  }
  *out = static_cast<int>(v);
}

void YamlReader::GetDouble(const std::string& key, double* out, bool required) {
  YAML::Node n = Required(key, required);
  if (!n) return;
  if (!ParseDouble(n.Scalar(), out)) {
    Fail(src_, n, KeyPath(key), "expected a number, found " + Describe(n));
  }
}

void YamlReader::GetBool(const std::string& key, bool* out, bool required) {
  YAML::Node n = Required(key, required);
  if (!n) return;
  const std::string& s = n.Scalar();
  if (s == "true") {
    *out = true;
  } else if (s == "false") {
    *out = false;
  } else {
    Fail(src_, n, KeyPath(key), "expected true or false, found " + Describe(n));
  }
}

void YamlReader::GetString(const std::string& key, std::string* out, bool required) {
  YAML::Node n = Required(key, required);
  if (!n) return;
  *out = n.Scalar();
}

YamlReader YamlReader::Map(const std::string& key) {
  known_.insert(key);
  return YamlReader(node_[key], KeyPath(key), src_);
}

void YamlReader::Finish() const {
  for (const auto& kv : node_) {
    const std::string key = kv.first.Scalar();
    if (!known_.count(key)) {
      std::string names;
      for (const std::string& k : known_) names += (names.empty() ? "" : ", ") + k;
      Fail(src_, kv.first, KeyPath(key), "unknown key (known keys here: " + names + ")");
    }
  }
}

InputError FromYamlException(const std::string& path, const YAML::Exception& e) {
  InputError err;
  err.file = path;
  err.message = std::string("YAML error: ") + e.what();
  return err;
}

YAML::Node LoadYamlFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    InputError e;
    e.file = path;
    e.message = std::string("cannot open file: ") + std::strerror(errno);
    throw ConfigError{e};
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return ParseYamlFileText(ss.str(), path);
}

YAML::Node ParseYamlFileText(const std::string& text, const std::string& path) {
  try {
    return YAML::Load(text);
  } catch (const YAML::ParserException& ex) {
    InputError e;
    e.file = path;
    e.line = ex.mark.line + 1;
    e.column = ex.mark.column + 1;
    e.message = "YAML syntax error: " + ex.msg;
    throw ConfigError{e};
  }
}

YAML::Node LoadYamlText(const std::string& text, const std::string& origin) {
  try {
    return YAML::Load(text);
  } catch (const YAML::ParserException& ex) {
    InputError e;
    e.file = origin;
    e.message = "YAML syntax error: " + ex.msg;
    throw ConfigError{e};
  }
}

}  // namespace meshsim::config

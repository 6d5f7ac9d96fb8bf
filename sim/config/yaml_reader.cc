#include "sim/config/yaml_reader.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <regex>
#include <sstream>

#include "sim/config/yaml_duplicates.h"

namespace meshsim::config {

namespace {

thread_local KeyRecorder* active_recorder = nullptr;

// The entry of `by_key` for the longest prefix of the dotted `key` (the key itself, then
// its parents: "a.b[0].c", "a.b[0]", "a.b", "a"), or nullptr.
const std::string* LongestPrefixEntry(const std::map<std::string, std::string>& by_key,
                                      std::string key) {
  while (!key.empty()) {
    const auto it = by_key.find(key);
    if (it != by_key.end()) return &it->second;
    const size_t cut = key.find_last_of(".[");
    key = cut == std::string::npos ? std::string() : key.substr(0, cut);
  }
  return nullptr;
}

}  // namespace

KeyRecorder::KeyRecorder() : previous_(active_recorder) { active_recorder = this; }

KeyRecorder::~KeyRecorder() { active_recorder = previous_; }

KeyRecorder* KeyRecorder::Active() { return active_recorder; }

void KeyRecorder::Note(const std::string& file, const std::string& key, const std::string& kind,
                       bool required, const std::vector<std::string>& choices) {
  static const std::regex index(R"(\[[0-9]+\])");
  Key& k = by_file_[file][std::regex_replace(key, index, "[]")];
  if (k.kind.empty()) {
    k.kind = kind;
    k.choices = choices;
  }
  k.required = k.required || required;
}

KeyRecorder::Keys KeyRecorder::All() const {
  Keys all;
  for (const auto& [file, keys] : by_file_) {
    for (const auto& [key, k] : keys) {
      Key& merged = all[key];
      if (merged.kind.empty()) {
        merged.kind = k.kind;
        merged.choices = k.choices;
      }
      merged.required = merged.required || k.required;
    }
  }
  return all;
}

std::string OriginFile(const Sources& src, const std::string& key) {
  if (LongestPrefixEntry(src.set_args, key)) return "";
  const std::string* origin = LongestPrefixEntry(src.origins, key);
  return origin ? *origin : src.file;
}

void Fail(const Sources& src, const YAML::Node& node, const std::string& key,
          const std::string& message) {
  InputError e;
  e.key = key;
  e.message = message;
  if (const std::string* arg = LongestPrefixEntry(src.set_args, key)) {
    // Set on the command line (the key itself or a mapping above it): name the argument;
    // positions inside its value would read as lines of a file.
    e.file = "--set " + *arg;
  } else {
    // The file of the longest recorded prefix of the key (a merged subtree's origin).
    const std::string* origin = LongestPrefixEntry(src.origins, key);
    e.file = origin ? *origin : src.file;
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

void YamlReader::Note(const std::string& key, const char* kind, bool required) const {
  if (KeyRecorder* recorder = KeyRecorder::Active()) {
    recorder->Note(src_.file, KeyPath(key), kind, required);
  }
}

void YamlReader::Skip(const std::string& key) {
  Note(key, "", false);
  known_.insert(key);
}

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
  Note(key, "integer", required);
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
  Note(key, "number", required);
  YAML::Node n = Required(key, required);
  if (!n) return;
  if (!ParseDouble(n.Scalar(), out)) {
    Fail(src_, n, KeyPath(key), "expected a number, found " + Describe(n));
  }
}

void YamlReader::GetNumberList(const std::string& key, std::vector<double>* out, bool required) {
  Note(key, "list", required);
  known_.insert(key);
  const YAML::Node n = node_[key];
  if (!n) {
    if (required) Fail(src_, node_, KeyPath(key), "required key is missing");
    return;
  }
  if (!n.IsSequence())
    Fail(src_, n, KeyPath(key), "expected a list of numbers, found " + Describe(n));
  out->clear();
  for (size_t i = 0; i < n.size(); ++i) {
    double v = 0;
    if (!n[i].IsScalar() || !ParseDouble(n[i].Scalar(), &v)) {
      Fail(src_, n[i], KeyPath(key) + "[" + std::to_string(i) + "]",
           "expected a number, found " + Describe(n[i]));
    }
    out->push_back(v);
  }
}

void YamlReader::GetBool(const std::string& key, bool* out, bool required) {
  Note(key, "boolean", required);
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
  Note(key, "string", required);
  YAML::Node n = Required(key, required);
  if (!n) return;
  *out = n.Scalar();
}

YamlReader YamlReader::Map(const std::string& key) {
  Note(key, "mapping", false);
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
    YAML::Node root = YAML::Load(text);
    CheckNoDuplicateKeys(root, path);
    return root;
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
    YAML::Node root = YAML::Load(text);
    CheckNoDuplicateKeys(root, origin, /*in_file=*/false);
    return root;
  } catch (const YAML::ParserException& ex) {
    InputError e;
    e.file = origin;
    e.message = "YAML syntax error: " + ex.msg;
    throw ConfigError{e};
  }
}

}  // namespace meshsim::config

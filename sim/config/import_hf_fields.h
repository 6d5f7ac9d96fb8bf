// Internals of `meshsim import hf` shared by import_hf*.cc: typed access to the fields of
// one config.json, failing with the file, the field and its line and column. Not part of
// the config API (import_hf.h is).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <string>
#include <utility>

#include "sim/config/import_hf.h"

namespace meshsim::hf_internal {

using json = nlohmann::json;

// Thrown inside the importer only; ImportHfConfig turns it into a Result.
struct ImportFailure {
  InputError error;
};

// 1-based line and column of byte `offset` (0-based) of `text`.
std::pair<int, int> LineColumn(const std::string& text, size_t offset);
// "null", "true", "the string \"x\"", "an object", "a list", or the number.
std::string Describe(const json& v);
// The parsed JSON; throws ImportFailure with line and column on a syntax error.
json ParseJson(const std::string& text, const std::string& file);

// Typed access to the top-level fields of one config.json, failing with the file, the
// field and (where the field occurs once in the text) its line and column.
class Fields {
 public:
  Fields(const json& root, const std::string& text, const std::string& file)
      : root_(root), text_(text), file_(file) {}

  // Present and not null (HF writes null for "not set").
  bool Has(const std::string& key) const {
    auto it = root_.find(key);
    return it != root_.end() && !it->is_null();
  }
  const json& At(const std::string& key) const { return root_.at(key); }

  [[noreturn]] void Fail(const std::string& key, const std::string& message) const {
    InputError e;
    e.file = file_;
    e.key = key;
    e.message = message;
    if (const auto at = Locate(key)) std::tie(e.line, e.column) = *at;
    throw ImportFailure{e};
  }

  int64_t Int(const std::string& key, int64_t min) const {
    if (!Has(key)) Fail(key, "required field is missing (expected an integer >= " + N(min) + ")");
    return IntOr(key, 0, min);
  }
  int64_t IntOr(const std::string& key, int64_t fallback, int64_t min) const {
    if (!Has(key)) return fallback;
    const json& v = At(key);
    if (!v.is_number_integer()) Fail(key, "expected an integer, found " + Describe(v));
    const int64_t x = v.get<int64_t>();
    if (x < min) Fail(key, "expected an integer >= " + N(min) + ", found " + N(x));
    if (x > int64_t{1} << 40) Fail(key, "expected a plausible size, found " + N(x));
    return x;
  }
  int Int32(const std::string& key, int64_t min) const {
    if (!Has(key)) Fail(key, "required field is missing (expected an integer >= " + N(min) + ")");
    return Int32Or(key, 0, min);
  }
  int Int32Or(const std::string& key, int64_t fallback, int64_t min) const {
    const int64_t x = IntOr(key, fallback, min);
    if (x > 1 << 30) Fail(key, "expected a plausible count, found " + N(x));
    return static_cast<int>(x);
  }
  bool BoolOr(const std::string& key, bool fallback) const {
    if (!Has(key)) return fallback;
    const json& v = At(key);
    if (!v.is_boolean()) Fail(key, "expected true or false, found " + Describe(v));
    return v.get<bool>();
  }
  // A number (integer or not) >= 0; `fallback` when absent.
  double NumberOr(const std::string& key, double fallback) const {
    if (!Has(key)) return fallback;
    const json& v = At(key);
    if (!v.is_number() || v.get<double>() < 0)
      Fail(key, "expected a number >= 0, found " + Describe(v));
    return v.get<double>();
  }
  std::string StringOr(const std::string& key, const std::string& fallback) const {
    if (!Has(key)) return fallback;
    const json& v = At(key);
    if (!v.is_string()) Fail(key, "expected a string, found " + Describe(v));
    return v.get<std::string>();
  }

  static std::string N(int64_t v) { return std::to_string(v); }

 private:
  // Line and column of `"key":` when it occurs exactly once in the text.
  std::optional<std::pair<int, int>> Locate(const std::string& key) const {
    const std::regex pattern(
        "\"" + std::regex_replace(key, std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)") + "\"\\s*:");
    auto begin = std::sregex_iterator(text_.begin(), text_.end(), pattern);
    auto end = std::sregex_iterator();
    if (begin == end || std::next(begin) != end) return std::nullopt;
    return LineColumn(text_, static_cast<size_t>(begin->position()));
  }

  const json& root_;
  const std::string& text_;
  std::string file_;
};

}  // namespace meshsim::hf_internal

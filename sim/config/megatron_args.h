// Reading Megatron-LM argument words (config-layer internal, for import_megatron.cc):
// which flags take values, the words sorted into values, flags and unknowns, and typed
// access that fails with the flag's name.
#pragma once

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "sim/config/import_megatron.h"

namespace meshsim::megatron_internal {

// Thrown inside the Megatron importer only; its public functions turn it into a Result.
struct ImportFailure {
  InputError error;
};

[[noreturn]] inline void Fail(const std::string& flag, const std::string& message) {
  InputError e;
  e.file = kMegatronSource;
  e.key = flag;
  e.message = message;
  throw ImportFailure{e};
}

inline std::string N(long long v) { return std::to_string(v); }

// The parsed words: value flags with their (last) values, flags present, the rest.
struct Words {
  std::map<std::string, std::string> values;
  std::set<std::string> flags;
};

// Sorts the words; unknown flags (with their values) go to out->unknown, stray words to
// out->warnings. A known value flag without a value fails.
Words Classify(const std::vector<std::string>& tokens, MegatronImport* out);

class Args {
 public:
  explicit Args(Words w) : w_(std::move(w)) {}

  bool Has(const std::string& flag) const { return w_.values.count(flag) || w_.flags.count(flag); }
  bool Flag(const std::string& flag) const { return w_.flags.count(flag) > 0; }
  std::string String(const std::string& flag, const std::string& fallback) const {
    auto it = w_.values.find(flag);
    return it == w_.values.end() ? fallback : it->second;
  }
  // An integer >= min; `fallback` when absent.
  int64_t Int(const std::string& flag, int64_t fallback, int64_t min) const {
    auto it = w_.values.find(flag);
    if (it == w_.values.end()) return fallback;
    const std::string& s = it->second;
    errno = 0;
    char* end = nullptr;
    const long long v = std::strtoll(s.c_str(), &end, 10);
    if (s.empty() || errno != 0 || *end != '\0' || std::isspace(static_cast<unsigned char>(s[0]))) {
      Fail(flag, "expected an integer, found '" + s + "'");
    }
    if (v < min) Fail(flag, "expected an integer >= " + N(min) + ", found " + N(v));
    if (v > (1LL << 40)) Fail(flag, "expected a plausible size, found " + N(v));
    return v;
  }
  int Int32(const std::string& flag, int64_t fallback, int64_t min) const {
    const int64_t v = Int(flag, fallback, min);
    if (v > (1 << 30)) Fail(flag, "expected a plausible count, found " + N(v));
    return static_cast<int>(v);
  }
  int64_t Required(const std::string& flag, int64_t min) const {
    if (!w_.values.count(flag)) Fail(flag, "required flag is missing");
    return Int(flag, 0, min);
  }
  int Required32(const std::string& flag, int64_t min) const {
    if (!w_.values.count(flag)) Fail(flag, "required flag is missing");
    return Int32(flag, 0, min);
  }
  // One of `choices`.
  std::string Choice(const std::string& flag, const std::vector<std::string>& choices,
                     const std::string& fallback) const {
    const std::string s = String(flag, fallback);
    if (std::find(choices.begin(), choices.end(), s) != choices.end()) return s;
    std::string names;
    for (const std::string& c : choices) names += (names.empty() ? "" : " | ") + c;
    Fail(flag, "expected one of " + names + ", found '" + s + "'");
  }

 private:
  Words w_;
};

}  // namespace meshsim::megatron_internal

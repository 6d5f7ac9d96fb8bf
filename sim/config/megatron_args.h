// Reading Megatron-LM argument words (config-layer internal, for import_megatron.cc):
// the table of flags meshsim knows (what each does to the simulated step, and how many
// words it takes), the words sorted into values, flags and unknowns, and typed access
// that fails with the flag's name.
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

// What a Megatron-LM flag does to the step meshsim simulates.
enum class FlagUse {
  kMapped,       // read by import_megatron.cc: sets an experiment key, or is checked against
                 // what meshsim models there (a mismatch is warned by the decoder)
  kNotModelled,  // changes the real step, not modelled: one warning naming the flag, with
                 // `assumption`, on stderr and in the output's header
  kNoEffect,     // changes nothing meshsim simulates (learning rate, data, logging,
                 // checkpoints, seeds, ...): accepted silently
};

// How many words a flag takes.
enum class FlagArity {
  kSwitch,  // none (store_true / store_false)
  kOne,     // the next word, or --flag=value
  kList,    // every following word up to the next flag (argparse nargs='+')
};

struct FlagInfo {
  const char* name;
  FlagArity arity;
  FlagUse use;
  const char* assumption;  // kNotModelled: what meshsim assumes instead; else empty
};

// The flag table (Megatron-LM's megatron/training/arguments.py and the config dataclasses
// it turns into flags, current and older names), each flag once.
const std::vector<FlagInfo>& MegatronFlagTable();  // megatron_flags.cc

// Prefixes of flag families that change nothing meshsim simulates (--log-, --wandb-, ...).
const std::vector<std::string>& MegatronNoEffectPrefixes();  // megatron_flags.cc

// The entry for `name` ("--tp-comm-overlap"): an exact entry of the table, else a no-effect
// entry (kList) when the name starts with a prefix of a family that changes nothing
// (--log-, --wandb-, --inference-, ...); nullptr for a flag meshsim does not know.
const FlagInfo* FindMegatronFlag(const std::string& name);

// The parsed words: flags with their (last) values, switches present.
struct Words {
  std::map<std::string, std::vector<std::string>> values;
  std::set<std::string> flags;
};

// Sorts the words. Unknown flags (with their next word unless it is a flag) go to
// out->unknown, not-modelled flags to out->not_modelled (one line each), stray words to
// out->warnings. A mapped flag that takes a value but has none fails, and so does a
// switch given a value.
Words Classify(const std::vector<std::string>& tokens, MegatronImport* out);

class Args {
 public:
  explicit Args(Words w) : w_(std::move(w)) {}

  bool Has(const std::string& flag) const { return w_.values.count(flag) || w_.flags.count(flag); }
  bool Flag(const std::string& flag) const { return w_.flags.count(flag) > 0; }
  // The value's words joined by blanks; `fallback` when absent.
  std::string String(const std::string& flag, const std::string& fallback) const {
    auto it = w_.values.find(flag);
    if (it == w_.values.end()) return fallback;
    std::string s;
    for (const std::string& v : it->second) s += (s.empty() ? "" : " ") + v;
    return s;
  }
  // The words of a list flag; empty when absent.
  std::vector<std::string> List(const std::string& flag) const {
    auto it = w_.values.find(flag);
    return it == w_.values.end() ? std::vector<std::string>() : it->second;
  }
  // An integer >= min; `fallback` when absent.
  int64_t Int(const std::string& flag, int64_t fallback, int64_t min) const {
    if (!w_.values.count(flag)) return fallback;
    const std::string s = String(flag, "");
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
  // A finite number > 0; `fallback` when absent.
  double Positive(const std::string& flag, double fallback) const {
    if (!w_.values.count(flag)) return fallback;
    const std::string s = String(flag, "");
    errno = 0;
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (s.empty() || errno != 0 || *end != '\0' || std::isspace(static_cast<unsigned char>(s[0])) ||
        !(v > 0) || v > 1e9) {
      Fail(flag, "expected a number > 0, found '" + s + "'");
    }
    return v;
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

#include "sim/config/decode_checks.h"

namespace meshsim::config {

void RequirePositive(YamlReader& r, const std::string& key, double v) {
  if (!(v > 0)) {
    Fail(r.sources(), r.Child(key), r.KeyPath(key),
         "expected a positive number, found " + Describe(r.Child(key)));
  }
}

void RequireAtLeast(YamlReader& r, const std::string& key, int64_t v, int64_t min) {
  if (v < min) {
    Fail(r.sources(), r.Child(key), r.KeyPath(key),
         "expected an integer >= " + std::to_string(min) + ", found " + std::to_string(v));
  }
}

void RequireFraction(YamlReader& r, const std::string& key, double v) {
  if (!(v > 0 && v <= 1)) {
    Fail(r.sources(), r.Child(key), r.KeyPath(key),
         "expected a fraction in (0, 1], found " + Describe(r.Child(key)));
  }
}

void FailKey(YamlReader& r, const std::string& key, const std::string& message) {
  Fail(r.sources(), r.Child(key), r.KeyPath(key), message);
}

void RejectExperiment(const YamlReader& r, const std::string& what) {
  if (!r.Has("plan") || !(r.Has("model") || r.Has("cluster"))) return;
  std::string where = r.KeyPath("");  // "model." inside an experiment, "" for a file
  if (!where.empty()) where.pop_back();
  Fail(r.sources(), r.node(), where.empty() ? "(top level)" : where,
       "expected a " + what + " YAML, found an experiment (it has model:, cluster: and plan:); " +
           "pass the " + what + " file the experiment names");
}

}  // namespace meshsim::config

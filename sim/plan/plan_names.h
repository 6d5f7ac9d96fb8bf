// The names of a plan's choices as YAML, results.csv and the importers write them. One
// table per choice: the decoder reads with it and every writer names with it.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "sim/plan/plan_spec.h"

namespace meshsim {

template <typename E>
using NameTable = std::vector<std::pair<std::string, E>>;

inline const NameTable<ScheduleKind>& ScheduleNames() {
  static const NameTable<ScheduleKind> names = {{"gpipe", ScheduleKind::kGpipe},
                                                {"1f1b", ScheduleKind::kOneFOneB},
                                                {"interleaved", ScheduleKind::kInterleaved}};
  return names;
}

inline const NameTable<Recompute>& RecomputeNames() {
  static const NameTable<Recompute> names = {{"none", Recompute::kNone},
                                             {"selective", Recompute::kSelective},
                                             {"full", Recompute::kFull},
                                             {"projections", Recompute::kProjections}};
  return names;
}

inline const NameTable<Framework>& FrameworkNames() {
  static const NameTable<Framework> names = {{"megatron", Framework::kMegatron},
                                             {"deepspeed", Framework::kDeepSpeed},
                                             {"fsdp", Framework::kFsdp},
                                             {"fsdp2", Framework::kFsdp2}};
  return names;
}

inline const NameTable<BackwardPrefetch>& BackwardPrefetchNames() {
  static const NameTable<BackwardPrefetch> names = {
      {"backward_pre", BackwardPrefetch::kBackwardPre},
      {"backward_post", BackwardPrefetch::kBackwardPost},
      {"none", BackwardPrefetch::kNone}};
  return names;
}

// The name of `value` in `table`; "?" if absent (a table missing a value is a bug).
template <typename E>
const std::string& NameOf(const NameTable<E>& table, E value) {
  static const std::string unknown = "?";
  for (const auto& [name, v] : table) {
    if (v == value) return name;
  }
  return unknown;
}

// The value named `name` in `table`, or false.
template <typename E>
bool ValueOf(const NameTable<E>& table, const std::string& name, E* out) {
  for (const auto& [n, v] : table) {
    if (n == name) {
      *out = v;
      return true;
    }
  }
  return false;
}

}  // namespace meshsim

// The routed plans of replayed groups, memoised by where the replay keeps each group
// (FlowCollectiveNetwork::GroupPlanFor): one lookup per collective started.
//
// An open-addressing table (linear probing, at most half full) keyed by (where the group
// is stored, op, bytes). An entry keeps the group's members, up to kInline of them in the
// entry itself (one 64-byte line per lookup), and serves only if they match: a group stored
// again at the same place may differ, and then replaces the entry's plan.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sim/core/collective_kinds.h"
#include "sim/net/flow_plan.h"

namespace meshsim {

class GroupPlanMemo {
 public:
  GroupPlanMemo();
  // The plan stored for this group (where it is stored and its members), op and bytes;
  // null if none.
  const RoutedPlan* Find(CommOp op, std::span<const int> gpus, double bytes) const;
  // Stores `plan` for them. Amortised O(group size).
  void Store(CommOp op, std::span<const int> gpus, double bytes, const RoutedPlan* plan);

 private:
  static constexpr size_t kInline = 8;
  struct Entry {
    const int* data = nullptr;  // null: empty
    const RoutedPlan* plan = nullptr;
    double bytes = 0;
    uint32_t size = 0;
    CommOp op = CommOp::kAllReduce;
    // The members, or (more than kInline) members[0] is where they start in spill_.
    int members[kInline] = {};
  };
  size_t Slot(CommOp op, const int* data, double bytes) const;  // its entry or an empty one
  const int* Members(const Entry& e) const;
  void Grow();

  std::vector<Entry> entries_;  // a power of two of them
  size_t used_ = 0;
  std::vector<int> spill_;  // members of groups larger than kInline
};

}  // namespace meshsim

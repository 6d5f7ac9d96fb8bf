// What a network remembers per collective, found by where the replay keeps its group:
// the flow network's routed plans (FlowCollectiveNetwork::GroupPlanFor) and the cost
// model's collective costs (CostModelNetwork::Cost), one lookup per collective started.
//
// An open-addressing table (linear probing, at most half full) keyed by (where the group
// is stored, op, bytes). An entry keeps the group's members, up to kInline of them in the
// entry itself, and serves only if they match: a group stored again at the same place may
// differ, and then its value is replaced. An entry is one cache line (64 bytes, aligned):
// a full replay's lookups land all over a table of megabytes, and a hit then costs one
// miss, not the two of an entry straddling lines (80 bytes, as it was: 5-8 % of a full
// replay on the cost model, nearly all in that load).
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "sim/core/collective_kinds.h"
#include "sim/core/hash.h"

namespace meshsim {

template <class Value>
class GroupMemo {
 public:
  GroupMemo() : entries_(256) {}
  // The value stored for this group (where it is stored and its members), op and bytes;
  // null if none. Valid until the next Store.
  const Value* Find(CommOp op, std::span<const int> gpus, double bytes) const {
    const Entry& e = entries_[Slot(op, gpus.data(), bytes)];
    if (e.data == nullptr || e.size != gpus.size()) return nullptr;
    // Element by element: groups are mostly a few ranks (TP, pipeline pairs), for which a
    // call to memcmp (std::equal's) cost more than the compare (2.6 % of a GPT-1T full replay).
    const int* m = Members(e);
    for (size_t i = 0; i < gpus.size(); ++i) {
      if (gpus[i] != m[i]) return nullptr;
    }
    return &e.value;
  }
  // Stores `value` for them and returns it. Amortised O(group size).
  const Value& Store(CommOp op, std::span<const int> gpus, double bytes, Value value) {
    if (2 * (used_ + 1) > entries_.size()) Grow();
    Entry& e = entries_[Slot(op, gpus.data(), bytes)];
    if (e.data == nullptr) ++used_;
    e.data = gpus.data();
    e.op = op;
    e.bytes = bytes;
    e.value = std::move(value);
    e.size = static_cast<uint32_t>(gpus.size());
    if (gpus.size() <= kInline) {
      std::copy(gpus.begin(), gpus.end(), e.members);
    } else {
      e.members[0] = static_cast<int>(spill_.size());
      spill_.insert(spill_.end(), gpus.begin(), gpus.end());
    }
    return e.value;
  }

 private:
  static constexpr size_t kLine = 64;
  static constexpr size_t kKeyBytes = sizeof(const int*) + sizeof(double) + 2 * sizeof(uint32_t);
  // As many members as fill the line (a sendrecv's 2 at least); 8 if the value is larger.
  static constexpr size_t kInline = kKeyBytes + sizeof(Value) + 2 * sizeof(int) <= kLine
                                        ? (kLine - kKeyBytes - sizeof(Value)) / sizeof(int)
                                        : 8;
  struct alignas(kLine) Entry {
    const int* data = nullptr;  // null: empty
    double bytes = 0;
    uint32_t size = 0;
    CommOp op = CommOp::kAllReduce;
    Value value{};
    // The members, or (more than kInline) members[0] is where they start in spill_.
    int members[kInline] = {};
  };
  static_assert(kInline == 8 || sizeof(Entry) == kLine, "an entry is one cache line");
  // The entry of this key, or the empty one where it would go.
  size_t Slot(CommOp op, const int* data, double bytes) const {
    const uint64_t key = reinterpret_cast<uintptr_t>(data) ^
                         (std::bit_cast<uint64_t>(bytes) * 0x9e3779b97f4a7c15ull) ^
                         static_cast<uint64_t>(op);
    const size_t mask = entries_.size() - 1;
    for (size_t i = Fmix64(key) & mask;; i = (i + 1) & mask) {
      const Entry& e = entries_[i];
      if (e.data == nullptr || (e.data == data && e.op == op && e.bytes == bytes)) return i;
    }
  }
  const int* Members(const Entry& e) const {
    return e.size <= kInline ? e.members : spill_.data() + e.members[0];
  }
  void Grow() {
    std::vector<Entry> old(entries_.size() * 2);
    old.swap(entries_);
    for (Entry& e : old) {
      if (e.data != nullptr) entries_[Slot(e.op, e.data, e.bytes)] = std::move(e);
    }
  }

  std::vector<Entry> entries_;  // a power of two of them
  size_t used_ = 0;
  std::vector<int> spill_;  // members of groups larger than kInline
};

}  // namespace meshsim

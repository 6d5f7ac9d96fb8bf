#include "sim/net/flow_plan_memo.h"

#include <algorithm>
#include <bit>

#include "sim/core/hash.h"

namespace meshsim {

GroupPlanMemo::GroupPlanMemo() : entries_(1024) {}

size_t GroupPlanMemo::Slot(CommOp op, const int* data, double bytes) const {
  const uint64_t key = reinterpret_cast<uintptr_t>(data) ^
                       (std::bit_cast<uint64_t>(bytes) * 0x9e3779b97f4a7c15ull) ^
                       static_cast<uint64_t>(op);
  const size_t mask = entries_.size() - 1;
  for (size_t i = Fmix64(key) & mask;; i = (i + 1) & mask) {
    const Entry& e = entries_[i];
    if (e.data == nullptr || (e.data == data && e.op == op && e.bytes == bytes)) return i;
  }
}

const int* GroupPlanMemo::Members(const Entry& e) const {
  return e.size <= kInline ? e.members : spill_.data() + e.members[0];
}

const RoutedPlan* GroupPlanMemo::Find(CommOp op, std::span<const int> gpus, double bytes) const {
  const Entry& e = entries_[Slot(op, gpus.data(), bytes)];
  if (e.data == nullptr || e.size != gpus.size()) return nullptr;
  return std::equal(gpus.begin(), gpus.end(), Members(e)) ? e.plan : nullptr;
}

void GroupPlanMemo::Store(CommOp op, std::span<const int> gpus, double bytes,
                          const RoutedPlan* plan) {
  if (2 * (used_ + 1) > entries_.size()) Grow();
  Entry& e = entries_[Slot(op, gpus.data(), bytes)];
  if (e.data == nullptr) ++used_;
  e.data = gpus.data();
  e.op = op;
  e.bytes = bytes;
  e.plan = plan;
  e.size = static_cast<uint32_t>(gpus.size());
  if (gpus.size() <= kInline) {
    std::copy(gpus.begin(), gpus.end(), e.members);
  } else {
    e.members[0] = static_cast<int>(spill_.size());
    spill_.insert(spill_.end(), gpus.begin(), gpus.end());
  }
}

void GroupPlanMemo::Grow() {
  std::vector<Entry> old(entries_.size() * 2);
  old.swap(entries_);
  for (const Entry& e : old) {
    if (e.data != nullptr) entries_[Slot(e.op, e.data, e.bytes)] = e;
  }
}

}  // namespace meshsim

#include "sim/core/event_queue.h"

#include <algorithm>
#include <cassert>

namespace meshsim {

EventId EventQueue::Push(SimTime at, Callback cb) {
  const uint32_t slot = slots_.Add(std::move(cb));
  assert(at >= SimTime::Zero());
  assert(slot < (1u << kSlotBits) && next_sequence_ < (uint64_t{1} << (64 - kSlotBits)));
  const Key key =
      (static_cast<Key>(at.picoseconds()) << 64) | (next_sequence_++ << kSlotBits) | slot;
  heap_.emplace_back();
  SiftUp(heap_.size() - 1, key);
  ++live_;
  return slots_.IdOf(slot);
}

bool EventQueue::Cancel(EventId id) {
  if (!slots_.Cancel(id)) return false;
  --live_;
  return true;
}

void EventQueue::SiftUp(size_t hole, Key key) {
  while (hole > 0) {
    const size_t parent = (hole - 1) / kArity;
    if (heap_[parent] <= key) break;
    heap_[hole] = heap_[parent];
    hole = parent;
  }
  heap_[hole] = key;
}

// Removes the root. The last key usually belongs near the bottom, so the hole left at the
// root goes down along the least children to a leaf without comparing against it (one
// comparison per level fewer than a sift-down), and the last key then sifts up from there.
void EventQueue::PopKey() {
  const Key last = heap_.back();
  heap_.pop_back();
  const size_t n = heap_.size();
  if (n == 0) return;
  size_t hole = 0;
  while (true) {
    const size_t first = hole * kArity + 1;
    if (first >= n) break;
    const size_t end = std::min(first + kArity, n);
    size_t best = first;
    for (size_t c = first + 1; c < end; ++c) {
      if (heap_[c] < heap_[best]) best = c;
    }
    heap_[hole] = heap_[best];
    hole = best;
  }
  SiftUp(hole, last);
}

void EventQueue::DropCancelledTop() {
  while (!heap_.empty() && slots_.Cancelled(SlotOf(heap_.front()))) {
    const uint32_t slot = SlotOf(heap_.front());
    PopKey();
    slots_.Discard(slot);
  }
}

SimTime EventQueue::NextTime() {
  assert(!Empty());
  DropCancelledTop();
  return TimeOf(heap_.front());
}

SimTime EventQueue::Pop(Callback* cb) {
  assert(!Empty());
  DropCancelledTop();
  const Key top = heap_.front();
  PopKey();
  slots_.Take(SlotOf(top), cb);
  --live_;
  return TimeOf(top);
}

void EventQueue::Reserve(size_t n) {
  heap_.reserve(n);
  slots_.Reserve(n);
}

}  // namespace meshsim

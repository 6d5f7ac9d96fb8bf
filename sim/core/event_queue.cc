#include "sim/core/event_queue.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <new>

namespace meshsim {

namespace {
constexpr std::align_val_t kLine{64};
}  // namespace

void EventQueue::FreeAligned::operator()(Key* p) const { ::operator delete[](p, kLine); }

EventId EventQueue::Push(SimTime at, Callback cb) {
  const uint32_t slot = slots_.Add(std::move(cb));
  assert(at >= SimTime::Zero());
  assert(slot < (1u << kSlotBits) && next_sequence_ < (uint64_t{1} << (64 - kSlotBits)));
  const Key key =
      (static_cast<Key>(at.picoseconds()) << 64) | (next_sequence_++ << kSlotBits) | slot;
  if (end_ == capacity_) Grow();
  SiftUp(end_++, key);
  ++live_;
  return slots_.IdOf(slot);
}

bool EventQueue::Cancel(EventId id) {
  if (!slots_.Cancel(id)) return false;
  --live_;
  return true;
}

void EventQueue::SiftUp(size_t hole, Key key) {
  Key* h = heap_.get();
  while (hole > kRoot) {
    const size_t parent = Parent(hole);
    if (h[parent] <= key) break;
    h[hole] = h[parent];
    hole = parent;
  }
  h[hole] = key;
}

// Removes the root. The last key usually belongs near the bottom, so the hole left at the
// root goes down along the least children to a leaf without comparing against it (one
// comparison per level fewer than a sift-down), and the last key then sifts up from there.
// Where all four children exist, the least is found by a two-round tournament.
void EventQueue::PopKey() {
  Key* h = heap_.get();
  const Key last = h[--end_];
  const size_t n = end_;
  if (n == kRoot) return;
  size_t hole = kRoot;
  while (true) {
    const size_t first = FirstChild(hole);
    size_t best;
    if (first + 4 <= n) {
      const size_t a = first + (h[first + 1] < h[first]);
      const size_t b = first + 2 + (h[first + 3] < h[first + 2]);
      best = h[b] < h[a] ? b : a;
    } else {
      if (first >= n) break;
      best = first;
      for (size_t c = first + 1; c < n; ++c) {
        if (h[c] < h[best]) best = c;
      }
    }
    h[hole] = h[best];
    hole = best;
  }
  SiftUp(hole, last);
}

void EventQueue::DropCancelledTop() {
  while (end_ > kRoot && slots_.Cancelled(SlotOf(heap_[kRoot]))) {
    const uint32_t slot = SlotOf(heap_[kRoot]);
    PopKey();
    slots_.Discard(slot);
  }
}

SimTime EventQueue::NextTime() {
  assert(!Empty());
  DropCancelledTop();
  return TimeOf(heap_[kRoot]);
}

SimTime EventQueue::Pop(Callback* cb) {
  assert(!Empty());
  DropCancelledTop();
  const Key top = heap_[kRoot];
  PopKey();
  if (end_ > kRoot) slots_.Prefetch(SlotOf(heap_[kRoot]));
  slots_.Take(SlotOf(top), cb);
  --live_;
  return TimeOf(top);
}

// Doubles the array (at least 64 keys), keeping its keys.
void EventQueue::Grow() { Reserve(std::max<size_t>(64, 2 * capacity_)); }

void EventQueue::Reserve(size_t n) {
  slots_.Reserve(n);
  if (n + kRoot <= capacity_) return;
  const size_t capacity = (n + kRoot + 3) & ~size_t{3};  // whole cache lines
  std::unique_ptr<Key[], FreeAligned> grown(new (kLine) Key[capacity]);
  if (end_ > kRoot) std::memcpy(grown.get() + kRoot, heap_.get() + kRoot, (end_ - kRoot) * sizeof(Key));
  heap_ = std::move(grown);
  capacity_ = capacity;
}

}  // namespace meshsim

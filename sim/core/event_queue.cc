#include "sim/core/event_queue.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <cstring>
#include <new>

namespace meshsim {

EventQueue::EventQueue() { Grow(64); }

EventQueue::~EventQueue() { ::operator delete (storage_, std::align_val_t{kLine}); }

void EventQueue::Grow(size_t capacity) {
  auto* grown =
      static_cast<Key*>(::operator new ((kPad + capacity) * sizeof(Key), std::align_val_t{kLine}));
  if (storage_) {
    std::memcpy(grown + kPad, Heap(), size_ * sizeof(Key));
    ::operator delete (storage_, std::align_val_t{kLine});
  }
  storage_ = grown;
  capacity_ = capacity;
}

EventId EventQueue::Push(SimTime at, Callback cb) {
  const uint32_t slot = slots_.Add(std::move(cb));
  assert(at >= SimTime::Zero());
  assert(slot < (1u << kSlotBits) && next_sequence_ < (uint64_t{1} << (64 - kSlotBits)));
  if (slot == next_.size()) {
    next_.push_back(kNoSlot);
  } else {
    next_[slot] = kNoSlot;
  }
  ++live_;
  const EventId id = slots_.IdOf(slot);
  // The newest group of time `at` takes the event if the table still knows the group: its
  // last event has neither run nor left the queue cancelled (either bumps its slot's
  // generation). Otherwise the event starts a group of its own.
  Recent& r = recent_[RecentIndex(at)];
  if (r.at == at && slots_.IdOf(r.last.slot).generation == r.last.generation) {
    next_[r.last.slot] = slot;
    r.last = id;
  } else {
    r = Recent{at, id};
    PushKey((static_cast<Key>(at.picoseconds()) << 64) | (next_sequence_++ << kSlotBits) | slot);
  }
  return id;
}

size_t EventQueue::RecentIndex(SimTime at) {
  constexpr int kBits = std::countr_zero(kRecentTimes);
  return static_cast<size_t>((static_cast<uint64_t>(at.picoseconds()) * 0x9E3779B97F4A7C15ull) >>
                             (64 - kBits));
}

void EventQueue::PushKey(Key key) {
  if (root_vacant_) {
    root_vacant_ = false;
    SiftUp(HoleToLeaf(), key);
  } else {
    if (size_ == capacity_) Grow(2 * capacity_);
    SiftUp(size_++, key);
  }
}

bool EventQueue::Cancel(EventId id) {
  if (!slots_.Cancel(id)) return false;
  --live_;
  return true;
}

void EventQueue::SiftUp(size_t hole, Key key) {
  Key* h = Heap();
  while (hole > 0) {
    const size_t parent = (hole - 1) / kArity;
    if (h[parent] <= key) break;
    h[hole] = h[parent];
    hole = parent;
  }
  h[hole] = key;
}

// Moves the hole at the root down along the least children to a leaf, without comparing
// against the key that will fill it (one comparison per level fewer than a sift-down; the
// key usually belongs near the bottom), and returns the leaf. Each level's four children
// are one cache line; in a heap larger than a core's L1 data cache, their children, the
// next level's candidates, are prefetched while this level is compared.
size_t EventQueue::HoleToLeaf() {
  Key* h = Heap();
  const size_t n = size_;
  const bool prefetch = n >= kPrefetchFrom;
  size_t hole = 0;
  while (true) {
    const size_t first = hole * kArity + 1;
    if (first >= n) return hole;
    const size_t next = first * kArity + 1;
    if (prefetch) {
      for (size_t c = next; c < n && c < next + kArity * kArity; c += kArity) {
        __builtin_prefetch(&h[c]);
      }
    }
    const size_t end = std::min(first + kArity, n);
    size_t best = first;
    for (size_t c = first + 1; c < end; ++c) {
      if (h[c] < h[best]) best = c;
    }
    h[hole] = h[best];
    hole = best;
  }
}

// Removes the root: the hole goes to a leaf and the last key fills it, sifting up.
void EventQueue::PopKey() {
  const Key last = Heap()[--size_];
  if (size_ == 0) return;
  SiftUp(HoleToLeaf(), last);
}

// Removes a vacant root left by Pop.
void EventQueue::Settle() {
  if (!root_vacant_) return;
  root_vacant_ = false;
  PopKey();
}

// The top group's first event is done: the group goes on with `next`, or its key leaves
// the heap.
void EventQueue::AdvanceTop(uint32_t next) {
  if (next == kNoSlot) {
    PopKey();
  } else {
    Heap()[0] = WithSlot(Heap()[0], next);
  }
}

void EventQueue::DropCancelledTop() {
  while (size_ > 0 && slots_.Cancelled(SlotOf(Heap()[0]))) {
    const uint32_t slot = SlotOf(Heap()[0]);
    const uint32_t next = next_[slot];
    slots_.Discard(slot);
    AdvanceTop(next);
  }
}

SimTime EventQueue::NextTime() {
  assert(!Empty());
  Settle();
  DropCancelledTop();
  return TimeOf(Heap()[0]);
}

SimTime EventQueue::Pop(Callback* cb) {
  assert(!Empty());
  Settle();
  DropCancelledTop();
  Key& top = Heap()[0];
  const uint32_t slot = SlotOf(top);
  const uint32_t next = next_[slot];
  slots_.Take(slot, cb);
  if (next == kNoSlot) {
    root_vacant_ = true;
  } else {
    top = WithSlot(top, next);
  }
  PrefetchNext(next);
  --live_;
  return TimeOf(top);
}

// The next event is the popped one's successor in its group, or else, unless a Push
// brings an earlier key, the first of the least of the root's children: fetch its
// callback while the popped one runs.
void EventQueue::PrefetchNext(uint32_t next) const {
  if (next != kNoSlot) {
    slots_.Prefetch(next);
    return;
  }
  const Key* h = Heap();
  const size_t end = std::min<size_t>(kArity + 1, size_);
  if (end <= 1) return;
  size_t best = 1;
  for (size_t c = 2; c < end; ++c) {
    if (h[c] < h[best]) best = c;
  }
  slots_.Prefetch(SlotOf(h[best]));
}

void EventQueue::Reserve(size_t n) {
  if (n > capacity_) Grow(n);
  slots_.Reserve(n);
  next_.reserve(n);
}

}  // namespace meshsim

#include "sim/core/event_queue.h"

#include <algorithm>
#include <bit>
#include <cassert>

namespace meshsim {

// Into the bucket of a time after last_ (or at last_, from Refill's redistribution).
inline void EventQueue::Insert(Entry entry) {
  const int b = std::bit_width(entry.time ^ last_);
  buckets_[b].push_back(entry);
  occupied_ |= uint64_t{1} << b;
}

EventId EventQueue::Push(SimTime at, Callback cb) {
  const uint32_t slot = slots_.Add(std::move(cb));
  const auto time = static_cast<uint64_t>(at.picoseconds());
  assert(at >= SimTime::Zero() && time >= popped_);
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
    if (time > last_) {
      Insert(Entry{time, slot});
    } else {
      InsertIntoRun(Entry{time, slot});
    }
  }
  return id;
}

size_t EventQueue::RecentIndex(SimTime at) {
  constexpr int kBits = std::countr_zero(kRecentTimes);
  return static_cast<size_t>((static_cast<uint64_t>(at.picoseconds()) * 0x9E3779B97F4A7C15ull) >>
                             (64 - kBits));
}

// Into the run, after every entry at or before its time. Scans from the back: O(1) for a
// time at last_, at most kSortMax steps after a Pop (only a sorted bucket's run holds
// times after the popped one), O(run) after NextTime looked ahead.
void EventQueue::InsertIntoRun(Entry entry) {
  std::vector<Entry>& run = buckets_[0];
  if (head_ == run.size()) {
    run.clear();
    head_ = 0;
  }
  size_t at = run.size();
  while (at > head_ && run[at - 1].time > entry.time) --at;
  run.insert(run.begin() + static_cast<ptrdiff_t>(at), entry);
}

bool EventQueue::Cancel(EventId id) {
  if (!slots_.Cancel(id)) return false;
  --live_;
  return true;
}

// The run is used up: the lowest non-empty bucket, whose times precede every other
// bucket's, becomes the run. A small one is sorted (stably: ties keep their order) and
// last_ becomes its latest time; a large one is redistributed: its least time becomes
// last_, and its entries move, front to back, to the buckets below it (those at the least
// time to the run). Either way the new last_ agrees with the old one in every bit above the
// bucket, so the entries of higher buckets stay where they are.
void EventQueue::Refill() {
  std::vector<Entry>& run = buckets_[0];
  run.clear();
  head_ = 0;
  const uint64_t occupied = occupied_ & ~uint64_t{1};
  assert(occupied != 0);
  const int b = std::countr_zero(occupied);
  std::vector<Entry>& from = buckets_[b];
  occupied_ &= ~(uint64_t{1} << b);
  if (from.size() <= kSortMax) {
    run.swap(from);
    SortRun();
  } else {
    uint64_t least = from.front().time;
    for (const Entry& e : from) least = std::min(least, e.time);
    last_ = least;
    for (const Entry& e : from) Insert(e);
  }
  from.clear();
}

// A stable insertion sort of the run by time (it holds at most kSortMax entries); last_
// becomes the latest time.
void EventQueue::SortRun() {
  std::vector<Entry>& run = buckets_[0];
  for (size_t i = 1; i < run.size(); ++i) {
    const Entry e = run[i];
    size_t at = i;
    while (at > 0 && run[at - 1].time > e.time) {
      run[at] = run[at - 1];
      --at;
    }
    run[at] = e;
  }
  last_ = run.back().time;
}

// Brings the earliest live event to the front of the run, dropping cancelled ones.
// Precondition: a live event is pending.
void EventQueue::Settle() {
  while (true) {
    std::vector<Entry>& front = buckets_[0];
    if (head_ == front.size()) {
      Refill();
      continue;
    }
    Entry& e = front[head_];
    if (!slots_.Cancelled(e.slot)) return;
    const uint32_t next = next_[e.slot];
    slots_.Discard(e.slot);
    if (next == kNoSlot) {
      ++head_;
    } else {
      e.slot = next;
    }
  }
}

SimTime EventQueue::NextTime() {
  assert(!Empty());
  Settle();
  return SimTime::Picoseconds(static_cast<int64_t>(buckets_[0][head_].time));
}

SimTime EventQueue::Pop(Callback* cb) {
  assert(!Empty());
  Settle();
  Entry& top = buckets_[0][head_];
  const uint64_t time = top.time;
  const uint32_t slot = top.slot;
  const uint32_t next = next_[slot];
  slots_.Take(slot, cb);
  if (next == kNoSlot) {
    ++head_;
  } else {
    top.slot = next;
  }
  PrefetchFront();
  --live_;
  popped_ = time;
  return SimTime::Picoseconds(static_cast<int64_t>(time));
}

// The next event is the front of the run (a Push before it is rare), unless it is
// cancelled or the run is used up: fetch its callback while the popped one runs.
void EventQueue::PrefetchFront() const {
  const std::vector<Entry>& front = buckets_[0];
  if (head_ < front.size()) slots_.Prefetch(front[head_].slot);
}

void EventQueue::Reserve(size_t n) {
  slots_.Reserve(n);
  next_.reserve(n);
}

}  // namespace meshsim

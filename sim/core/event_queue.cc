#include "sim/core/event_queue.h"

#include <algorithm>
#include <bit>
#include <cassert>

namespace meshsim {

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
    if (time < last_) Rewind(time);
    Insert(Entry{time, slot});
  }
  return id;
}

size_t EventQueue::RecentIndex(SimTime at) {
  constexpr int kBits = std::countr_zero(kRecentTimes);
  return static_cast<size_t>((static_cast<uint64_t>(at.picoseconds()) * 0x9E3779B97F4A7C15ull) >>
                             (64 - kBits));
}

void EventQueue::Insert(Entry entry) {
  const int b = std::bit_width(entry.time ^ last_);
  buckets_[b].push_back(entry);
  occupied_ |= uint64_t{1} << b;
}

bool EventQueue::Cancel(EventId id) {
  if (!slots_.Cancel(id)) return false;
  --live_;
  return true;
}

// Bucket 0 is used up: the least time of the lowest non-empty bucket becomes last_, and
// that bucket's entries move, front to back, to the buckets below it (those at the least
// time to bucket 0).
void EventQueue::Refill() {
  buckets_[0].clear();
  head_ = 0;
  const uint64_t occupied = occupied_ & ~uint64_t{1};
  assert(occupied != 0);
  const int b = std::countr_zero(occupied);
  std::vector<Entry>& from = buckets_[b];
  uint64_t least = from.front().time;
  for (const Entry& e : from) least = std::min(least, e.time);
  last_ = least;
  occupied_ &= ~(uint64_t{1} << b);
  for (const Entry& e : from) Insert(e);
  from.clear();
}

// A Push before last_ (possible only after NextTime advanced last_ past the last popped
// time): every entry goes to its bucket for the new last_. The entries of one time are in
// one bucket, in Push order, and are collected and reinserted in that order.
void EventQueue::Rewind(uint64_t time) {
  std::vector<Entry> all(buckets_[0].begin() + static_cast<ptrdiff_t>(head_), buckets_[0].end());
  for (int b = 1; b < kBuckets; ++b) all.insert(all.end(), buckets_[b].begin(), buckets_[b].end());
  for (std::vector<Entry>& bucket : buckets_) bucket.clear();
  head_ = 0;
  occupied_ = 0;
  last_ = time;
  for (const Entry& e : all) Insert(e);
}

// Brings the earliest live event to the front of bucket 0, dropping cancelled ones.
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
  return SimTime::Picoseconds(static_cast<int64_t>(last_));
}

SimTime EventQueue::Pop(Callback* cb) {
  assert(!Empty());
  Settle();
  Entry& top = buckets_[0][head_];
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
  popped_ = last_;
  return SimTime::Picoseconds(static_cast<int64_t>(last_));
}

// The next event is the front of bucket 0 (no Push can come earlier), unless it is
// cancelled or bucket 0 is used up: fetch its callback while the popped one runs.
void EventQueue::PrefetchFront() const {
  const std::vector<Entry>& front = buckets_[0];
  if (head_ < front.size()) slots_.Prefetch(front[head_].slot);
}

void EventQueue::Reserve(size_t n) {
  slots_.Reserve(n);
  next_.reserve(n);
}

}  // namespace meshsim

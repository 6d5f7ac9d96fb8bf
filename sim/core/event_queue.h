// Deterministic priority queues of timed callbacks: the interface, and the radix heap
// that the simulator runs on.
//
// Events are ordered by (time, sequence): two events at the same time run in the order
// they were scheduled, so a replay is reproducible bit for bit. Cancellation sets a flag
// (EventSlots); the cancelled event is skipped when it reaches the front.
//
// EventQueueLike is the interface. It is a concept, not a virtual base, so that the
// simulator loop calls its queue directly: a replay runs millions of events. Two queues
// satisfy it: EventQueue below, and PriorityEventQueue (priority_event_queue.h), the
// std::priority_queue baseline. tests/unit/event_queue_test.cc runs one typed suite over
// both, and tests/bench/event_queue_bench.cc times both in the same run.
#pragma once

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/core/event_slots.h"
#include "sim/core/time.h"

namespace meshsim {

// What the simulator needs of a queue:
//   Push(at, cb) -> EventId   adds an event at absolute time `at` (>= 0, and not before
//                             the time of the last popped event: a simulator never
//                             schedules in the past).
//   Cancel(id) -> bool        flags an event cancelled; false if it already ran or was
//                             cancelled, or `id` is stale or default.
//   Empty(), Size()           live (pending, not cancelled) events.
//   NextTime() -> SimTime     time of the earliest live event. Precondition: !Empty().
//   Pop(&cb) -> SimTime       removes the earliest live event, moves its callback into
//                             *cb (without running it) and returns its time.
//                             Precondition: !Empty().
//   Reserve(n)                room for n pending events; changes no behaviour.
// Ties in time pop in Push order. Queues are not copyable (they own callbacks).
template <typename Q>
concept EventQueueLike =
    std::default_initializable<Q> && !std::copyable<Q> &&
    requires(Q q, const Q cq, SimTime at, EventCallback cb, EventId id, size_t n) {
  { q.Push(at, std::move(cb)) } -> std::same_as<EventId>;
  { q.Cancel(id) } -> std::same_as<bool>;
  { cq.Empty() } -> std::same_as<bool>;
  { cq.Size() } -> std::same_as<size_t>;
  { q.NextTime() } -> std::same_as<SimTime>;
  { q.Pop(&cb) } -> std::same_as<SimTime>;
  q.Reserve(n);
};

// A radix heap (Ahuja, Mehlhorn, Orlin and Tarjan, "Faster algorithms for the shortest
// path problem", J. ACM 37(2), 1990) of FIFO buckets, with a sorted run in front, over
// groups of events at one time.
//
// Entries are (time, first event of a group): 16 bytes; no sequence number. The heap keeps
// last_: every pending time up to last_ is in the run (buckets_[0], sorted by time, ties in
// Push order, consumed from head_), and every later one at time t in bucket
// bit_width(t ^ last_) >= 1, the bucket of the highest bit in which t differs from last_.
// Every time in bucket b precedes every time in a higher bucket. Push appends to a bucket
// (O(1)), or, for a time not after last_, inserts into the run from its back. Pop takes the
// run's front. When the run is used up, the lowest non-empty bucket becomes the next run:
// one of at most kSortMax entries is sorted (the times nearest the front are few and far
// apart); a larger one is redistributed: its least time becomes last_ and its entries
// move, front to back, to lower buckets, those at that time to the run. Either way the new
// last_ agrees with the old in every bit above the bucket, so entries in higher buckets
// stay put. An entry moves at most 63 times (in practice a few), through arrays read and
// appended front to back instead of a heap's scattered parent and child slots. This needs
// monotone keys, which a simulator gives: Push asserts that `at` is not before the last
// popped time.
//
// Ties need no sequence numbers: the events at one time are always together, in the run
// or in one bucket (a bucket depends on the time alone); buckets are FIFO, a redistribution
// moves entries front to back and the sort is stable, so they stay in Push order.
//
// An event pushed at a time that has pending events in the newest group of that time
// joins that group (a list through the slots) instead of adding an entry: every event of
// an older group of that time, an entry before it in the same bucket or run, was pushed
// before it. A full replay pushes most events at a time that other events already wait
// for (identical ranks finish together: 97% of GPT-1T's 4.2 M events at 3,072 GPUs run at
// the time of the event before them), so most pushes and pops then move no entry. The
// newest group of each recent time is found in a small table indexed by a hash of the
// time (kRecentTimes entries, each the time and its group's last event); a time whose
// entry another time took starts a new group, whose entry lands behind the old one.
class EventQueue {
 public:
  using Callback = EventCallback;

  EventQueue() = default;
  EventQueue(const EventQueue&) = delete;
  EventQueue& operator=(const EventQueue&) = delete;

  EventId Push(SimTime at, Callback cb);
  bool Cancel(EventId id);
  bool Empty() const { return live_ == 0; }
  size_t Size() const { return live_; }
  SimTime NextTime();
  SimTime Pop(Callback* cb);
  void Reserve(size_t n);

 private:
  // A group of events at one time: the time in picoseconds and its first pending event.
  struct Entry {
    uint64_t time;
    uint32_t slot;
  };
  static constexpr uint32_t kNoSlot = UINT32_MAX;
  // Times are non-negative int64 picoseconds: t ^ last_ < 2^63, so buckets 0 .. 63.
  static constexpr int kBuckets = 64;
  // The largest bucket that Refill sorts into the run instead of redistributing.
  static constexpr size_t kSortMax = 16;
  // Recent times remembered with their newest group: a power of two. A replay's pending
  // times number a few hundred at a time (a rank's next event, a collective's end).
  static constexpr size_t kRecentTimes = 256;
  struct Recent {
    SimTime at = SimTime::Picoseconds(-1);  // no event's time
    EventId last;                           // the last event of at's newest group
  };
  static size_t RecentIndex(SimTime at);
  void Insert(Entry entry);
  void InsertIntoRun(Entry entry);
  void Refill();
  void SortRun();
  void Settle();
  void PrefetchFront() const;

  // buckets_[0], the run, is consumed from head_; the others are appended to and emptied
  // whole.
  std::array<std::vector<Entry>, kBuckets> buckets_;
  size_t head_ = 0;
  uint64_t occupied_ = 0;  // bit b set: buckets_[b] may be non-empty (bit 0 means nothing)
  uint64_t last_ = 0;      // the run holds every pending time up to last_, buckets the rest
  uint64_t popped_ = 0;    // the time of the last popped event: Push's lower bound
  EventSlots slots_;
  std::vector<uint32_t> next_;  // per slot: the next event of its group (kNoSlot: none)
  std::array<Recent, kRecentTimes> recent_{};
  size_t live_ = 0;
};
static_assert(EventQueueLike<EventQueue>);

}  // namespace meshsim

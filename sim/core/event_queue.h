// Deterministic priority queues of timed callbacks: the interface, and the 4-ary heap
// that the simulator runs on.
//
// Events are ordered by (time, sequence): two events at the same time run in the order
// they were scheduled, so a replay is reproducible bit for bit. Cancellation sets a flag
// (EventSlots); the cancelled event is skipped when it reaches the top.
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
//   Push(at, cb) -> EventId   adds an event at absolute time `at` (>= 0).
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

// A 4-ary heap of compact keys over groups of events at one time: (time, sequence)
// packed into one 128-bit integer so that a comparison is a single branch-free compare.
// Push and Pop are O(log n) in the worst case, Cancel O(1).
//
// Events at one time run in push order, so an event pushed at a time that has pending
// events in the newest group of that time joins that group (a list through the slots)
// instead of entering the heap: the group's key keeps its first event's sequence, and
// every event of an older group of the same time was pushed before it. A full replay
// pushes most events at a time that other events already wait for (identical ranks
// finish together: 97% of GPT-1T's 4.2 M events at 3,072 GPUs run at the time of the
// event before them), so most pushes and pops then touch no heap. The newest group of
// each recent time is found in a small table indexed by a hash of the time (kRecentTimes
// entries, each the time and its group's last event); a time whose entry another time
// took starts a new group, which orders after the old one as its sequence says.
//
// These make the heap faster than a plain d-ary heap (tests/bench/event_queue_bench.cc):
//  - a node's four children fill one 64-byte cache line: the array starts on a line, and
//    the root sits kPad keys into it, so that children 4i+1 .. 4i+4 start on a line;
//  - while a pop walks down a large heap, the next level's lines are prefetched (the walk
//    is a chain of dependent loads otherwise);
//  - Pop prefetches the callback of the likely next event (the next of its group, or the
//    first of the least of the root's children);
//  - Pop leaves the root vacant when it takes a group's last event, and a Push right after
//    (an event that schedules its successor, the common case) fills the vacancy: one walk
//    down instead of a walk down and a walk up. Any other call first removes the vacant
//    root as a pop would.
// Keys are distinct, so the pop order is the keys' order whatever the heap's layout.
class EventQueue {
 public:
  using Callback = EventCallback;

  EventQueue();
  ~EventQueue();
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
  // time << 64 | sequence << kSlotBits | slot: time is non-negative, so unsigned order is
  // (time, sequence); the slot of the group's first pending event rides in the low bits,
  // so that a key is 16 bytes and a node's four children share one cache line.
  __extension__ typedef unsigned __int128 Key;
  static constexpr int kSlotBits = 24;  // pending events at once: up to 16 M
  static constexpr uint32_t kSlotMask = (1u << kSlotBits) - 1;
  static constexpr uint32_t kNoSlot = UINT32_MAX;
  static uint32_t SlotOf(Key k) { return static_cast<uint32_t>(k) & kSlotMask; }
  static SimTime TimeOf(Key k) { return SimTime::Picoseconds(static_cast<int64_t>(k >> 64)); }
  static Key WithSlot(Key k, uint32_t slot) { return (k & ~Key{kSlotMask}) | slot; }
  static constexpr size_t kArity = 4;
  static constexpr size_t kLine = 64;
  static constexpr size_t kPad = kArity - 1;  // keys before the root: children start a line
  // Heaps of at least this many keys (128 KiB, beyond the 32-48 KiB L1 data cache of
  // current x86 cores) prefetch the next level as a pop walks down; smaller ones sit in
  // L1, where prefetching only adds instructions.
  static constexpr size_t kPrefetchFrom = 8192;
  // Recent times remembered with their newest group: a power of two. A replay's pending
  // times number a few hundred at a time (a rank's next event, a collective's end).
  static constexpr size_t kRecentTimes = 256;
  struct Recent {
    SimTime at = SimTime::Picoseconds(-1);  // no event's time
    EventId last;                           // the last event of at's newest group
  };
  static size_t RecentIndex(SimTime at);
  Key* Heap() const { return storage_ + kPad; }
  void PushKey(Key key);
  void Grow(size_t capacity);
  void SiftUp(size_t hole, Key key);
  size_t HoleToLeaf();
  void Settle();
  void PrefetchNext(uint32_t next) const;
  void DropCancelledTop();
  void AdvanceTop(uint32_t next);
  void PopKey();

  Key* storage_ = nullptr;  // kLine-aligned, kPad + capacity_ keys
  size_t size_ = 0;         // keys in the heap, the vacant root included
  size_t capacity_ = 0;
  bool root_vacant_ = false;  // Heap()[0] was popped: Push fills it, anything else removes it
  EventSlots slots_;
  std::vector<uint32_t> next_;  // per slot: the next event of its group (kNoSlot: none)
  std::array<Recent, kRecentTimes> recent_{};
  uint64_t next_sequence_ = 0;  // below 2^(64 - kSlotBits): a trillion groups
  size_t live_ = 0;
};
static_assert(EventQueueLike<EventQueue>);

}  // namespace meshsim

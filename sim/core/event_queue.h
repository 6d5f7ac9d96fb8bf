// A deterministic priority queue of timed callbacks.
//
// Events are ordered by (time, sequence): two events at the same time run in the order
// they were scheduled, so a replay is reproducible bit for bit. Storage is a 4-ary heap
// on a std::vector of compact keys, (time, sequence) packed into one 128-bit integer so
// that a comparison is a single branch-free compare; callbacks live in a slot array
// reused through a free list, so steady-state scheduling does not allocate (small
// lambdas fit std::function's inline buffer). Cancellation sets a flag; the cancelled
// key is skipped when popped. Push and Pop are O(log n).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "sim/core/time.h"

namespace meshsim {

// Identifies a scheduled event for cancellation. Valid until the event runs or is cancelled.
struct EventId {
  uint32_t slot = UINT32_MAX;
  uint32_t generation = 0;
};

class EventQueue {
 public:
  using Callback = std::function<void()>;

  EventQueue() = default;
  EventQueue(const EventQueue&) = delete;
  EventQueue& operator=(const EventQueue&) = delete;

  // Adds an event. O(log n).
  EventId Push(SimTime at, Callback cb);
  // Marks an event as cancelled; returns false if it already ran or was cancelled. O(1).
  bool Cancel(EventId id);
  // True when no live (non-cancelled) event remains.
  bool Empty() const { return live_ == 0; }
  size_t Size() const { return live_; }
  // Time of the earliest live event. Precondition: !Empty().
  SimTime NextTime();
  // Removes the earliest live event and returns its time and callback.
  // Precondition: !Empty(). O(log n).
  SimTime Pop(Callback* cb);
  void Reserve(size_t n);

 private:
  // time << 64 | sequence << kSlotBits | slot: time is non-negative, so unsigned order is
  // (time, sequence); the slot rides in the low bits, so that a key is 16 bytes and a node's
  // four children share one cache line.
  __extension__ typedef unsigned __int128 Key;
  static constexpr int kSlotBits = 24;  // pending events at once: up to 16 M
  static uint32_t SlotOf(Key k) { return static_cast<uint32_t>(k) & ((1u << kSlotBits) - 1); }
  static SimTime TimeOf(Key k) { return SimTime::Picoseconds(static_cast<int64_t>(k >> 64)); }
  static constexpr size_t kArity = 4;
  struct Slot {
    Callback callback;
    uint32_t generation = 0;
    bool cancelled = false;
  };
  void SiftUp(size_t hole, Key key);
  void DropCancelledTop();
  void PopKey();

  std::vector<Key> heap_;
  std::vector<Slot> slots_;
  std::vector<uint32_t> free_slots_;
  uint64_t next_sequence_ = 0;  // below 2^(64 - kSlotBits): a trillion events
  size_t live_ = 0;
};

}  // namespace meshsim

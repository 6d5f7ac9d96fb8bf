// The baseline event queue: std::priority_queue (a binary heap) of (time, sequence, slot)
// records, with the callbacks in EventSlots as EventQueue keeps them.
//
// Same contract as EventQueue (EventQueueLike, event_queue.h), so the same tests run over
// it; it exists so that the radix heap's speed is measured against the obvious choice
// (tests/bench/event_queue_bench.cc). Push and Pop are O(log n), Cancel O(1).
#pragma once

#include <cstdint>
#include <queue>
#include <vector>

#include "sim/core/event_queue.h"

namespace meshsim {

class PriorityEventQueue {
 public:
  using Callback = EventCallback;

  PriorityEventQueue() = default;
  PriorityEventQueue(const PriorityEventQueue&) = delete;
  PriorityEventQueue& operator=(const PriorityEventQueue&) = delete;

  EventId Push(SimTime at, Callback cb);
  bool Cancel(EventId id);
  bool Empty() const { return live_ == 0; }
  size_t Size() const { return live_; }
  SimTime NextTime();
  SimTime Pop(Callback* cb);
  void Reserve(size_t n) {
    heap_.Reserve(n);
    slots_.Reserve(n);
  }

 private:
  struct Entry {
    SimTime at;
    uint64_t sequence;
    uint32_t slot;
  };
  // std::priority_queue keeps the greatest on top: "greater" pops the earliest.
  struct Later {
    bool operator()(const Entry& a, const Entry& b) const {
      return a.at != b.at ? a.at > b.at : a.sequence > b.sequence;
    }
  };
  struct Heap : std::priority_queue<Entry, std::vector<Entry>, Later> {
    void Reserve(size_t n) { c.reserve(n); }
  };
  void DropCancelledTop();

  Heap heap_;
  EventSlots slots_;
  uint64_t next_sequence_ = 0;
  size_t live_ = 0;
};
static_assert(EventQueueLike<PriorityEventQueue>);

}  // namespace meshsim

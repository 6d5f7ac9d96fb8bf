// The callbacks of pending events, kept for an event queue.
//
// A slot array reused through a free list, so that steady-state scheduling does not
// allocate (small lambdas fit std::function's inline buffer). Each slot has a generation,
// bumped when its event runs or its cancelled key leaves the queue, so that an EventId
// of an event that is gone matches nothing even when its slot has been reused. A
// cancelled event keeps its slot, flagged, until the queue pops its key. Every operation
// is O(1).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

namespace meshsim {

// Identifies a scheduled event for cancellation. Valid until the event runs or is cancelled.
struct EventId {
  uint32_t slot = UINT32_MAX;
  uint32_t generation = 0;
};

using EventCallback = std::function<void()>;

class EventSlots {
 public:
  // Moves `cb` into a free slot and returns the slot (by reference: a by-value
  // std::function would cost one more move and destruction per event).
  uint32_t Add(EventCallback&& cb) {
    uint32_t slot;
    if (!free_.empty()) {
      slot = free_.back();
      free_.pop_back();
    } else {
      slot = static_cast<uint32_t>(slots_.size());
      slots_.emplace_back();
    }
    Slot& s = slots_[slot];
    s.callback = std::move(cb);
    s.cancelled = false;
    return slot;
  }
  EventId IdOf(uint32_t slot) const { return EventId{slot, slots_[slot].generation}; }
  // Flags the event cancelled and drops its callback. False if `id` is stale (its event
  // ran, or its slot was reused) or already cancelled.
  bool Cancel(EventId id) {
    if (id.slot >= slots_.size()) return false;
    Slot& s = slots_[id.slot];
    if (s.generation != id.generation || s.cancelled) return false;
    s.cancelled = true;
    s.callback = nullptr;
    return true;
  }
  bool Cancelled(uint32_t slot) const { return slots_[slot].cancelled; }
  // Frees the slot of a cancelled event whose key has left the queue.
  void Discard(uint32_t slot) {
    ++slots_[slot].generation;
    slots_[slot].cancelled = false;
    free_.push_back(slot);
  }
  // Moves the callback of an event that is due into *cb and frees its slot.
  void Take(uint32_t slot, EventCallback* cb) {
    Slot& s = slots_[slot];
    *cb = std::move(s.callback);
    s.callback = nullptr;
    ++s.generation;
    free_.push_back(slot);
  }
  void Reserve(size_t n) {
    slots_.reserve(n);
    free_.reserve(n);
  }

 private:
  struct Slot {
    EventCallback callback;
    uint32_t generation = 0;
    bool cancelled = false;
  };
  std::vector<Slot> slots_;
  std::vector<uint32_t> free_;
};

}  // namespace meshsim

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
      slot = static_cast<uint32_t>(callbacks_.size());
      callbacks_.emplace_back();
      generations_.push_back(0);
      cancelled_.push_back(0);
    }
    callbacks_[slot] = std::move(cb);
    return slot;
  }
  EventId IdOf(uint32_t slot) const { return EventId{slot, generations_[slot]}; }
  // Flags the event cancelled and drops its callback. False if `id` is stale (its event
  // ran, or its slot was reused) or already cancelled.
  bool Cancel(EventId id) {
    if (id.slot >= callbacks_.size()) return false;
    if (generations_[id.slot] != id.generation || cancelled_[id.slot]) return false;
    cancelled_[id.slot] = 1;
    callbacks_[id.slot] = nullptr;
    return true;
  }
  bool Cancelled(uint32_t slot) const { return cancelled_[slot] != 0; }
  // Frees the slot of a cancelled event whose key has left the queue.
  void Discard(uint32_t slot) {
    ++generations_[slot];
    cancelled_[slot] = 0;
    free_.push_back(slot);
  }
  // Moves the callback of an event that is due into *cb and frees its slot.
  void Take(uint32_t slot, EventCallback* cb) {
    EventCallback& c = callbacks_[slot];
    *cb = std::move(c);
    c = nullptr;
    ++generations_[slot];
    free_.push_back(slot);
  }
  // A hint: the event in `slot` is likely due next.
  void Prefetch(uint32_t slot) const { __builtin_prefetch(&callbacks_[slot]); }
  void Reserve(size_t n) {
    callbacks_.reserve(n);
    generations_.reserve(n);
    cancelled_.reserve(n);
    free_.reserve(n);
  }

 private:
  // Per slot, in three arrays: the callbacks (32 bytes each, touched when an event is
  // added and when it runs), and the generations and cancelled flags, small enough to
  // stay in cache (the queue reads a flag for every key that reaches the top).
  std::vector<EventCallback> callbacks_;
  std::vector<uint32_t> generations_;
  std::vector<uint8_t> cancelled_;
  std::vector<uint32_t> free_;
};

}  // namespace meshsim

#include "sim/core/event_queue.h"

#include <algorithm>
#include <cassert>

namespace meshsim {

EventId EventQueue::Push(SimTime at, Callback cb) {
  uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slot = static_cast<uint32_t>(slots_.size());
    slots_.emplace_back();
  }
  Slot& s = slots_[slot];
  s.callback = std::move(cb);
  s.cancelled = false;
  heap_.push_back(Key{at.picoseconds(), next_sequence_++, slot});
  std::push_heap(heap_.begin(), heap_.end(), Later);
  ++live_;
  return EventId{slot, s.generation};
}

bool EventQueue::Cancel(EventId id) {
  if (id.slot >= slots_.size()) return false;
  Slot& s = slots_[id.slot];
  if (s.generation != id.generation || s.cancelled) return false;
  s.cancelled = true;
  s.callback = nullptr;
  --live_;
  return true;
}

void EventQueue::PopKey() {
  std::pop_heap(heap_.begin(), heap_.end(), Later);
  heap_.pop_back();
}

void EventQueue::DropCancelledTop() {
  while (!heap_.empty() && slots_[heap_.front().slot].cancelled) {
    uint32_t slot = heap_.front().slot;
    PopKey();
    ++slots_[slot].generation;
    slots_[slot].cancelled = false;
    free_slots_.push_back(slot);
  }
}

SimTime EventQueue::NextTime() {
  assert(!Empty());
  DropCancelledTop();
  return SimTime::Picoseconds(heap_.front().time_ps);
}

SimTime EventQueue::Pop(Callback* cb) {
  assert(!Empty());
  DropCancelledTop();
  const Key top = heap_.front();
  PopKey();
  Slot& s = slots_[top.slot];
  *cb = std::move(s.callback);
  s.callback = nullptr;
  ++s.generation;
  free_slots_.push_back(top.slot);
  --live_;
  return SimTime::Picoseconds(top.time_ps);
}

void EventQueue::Reserve(size_t n) {
  heap_.reserve(n);
  slots_.reserve(n);
  free_slots_.reserve(n);
}

}  // namespace meshsim

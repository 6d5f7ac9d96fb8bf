#include "sim/core/priority_event_queue.h"

#include <cassert>

namespace meshsim {

EventId PriorityEventQueue::Push(SimTime at, Callback cb) {
  assert(at >= SimTime::Zero());
  const uint32_t slot = slots_.Add(std::move(cb));
  heap_.push(Entry{at, next_sequence_++, slot});
  ++live_;
  return slots_.IdOf(slot);
}

bool PriorityEventQueue::Cancel(EventId id) {
  if (!slots_.Cancel(id)) return false;
  --live_;
  return true;
}

void PriorityEventQueue::DropCancelledTop() {
  while (!heap_.empty() && slots_.Cancelled(heap_.top().slot)) {
    const uint32_t slot = heap_.top().slot;
    heap_.pop();
    slots_.Discard(slot);
  }
}

SimTime PriorityEventQueue::NextTime() {
  assert(!Empty());
  DropCancelledTop();
  return heap_.top().at;
}

SimTime PriorityEventQueue::Pop(Callback* cb) {
  assert(!Empty());
  DropCancelledTop();
  const Entry top = heap_.top();
  heap_.pop();
  slots_.Take(top.slot, cb);
  --live_;
  return top.at;
}

}  // namespace meshsim

#include "sim/core/simulator.h"

#include <cassert>

#include "sim/core/priority_event_queue.h"

namespace meshsim {

template <EventQueueLike Queue>
EventId BasicSimulator<Queue>::Schedule(SimTime delay, EventCallback cb) {
  assert(delay >= SimTime::Zero());
  return queue_.Push(now_ + delay, std::move(cb));
}

template <EventQueueLike Queue>
EventId BasicSimulator<Queue>::ScheduleAt(SimTime at, EventCallback cb) {
  assert(at >= now_);
  return queue_.Push(at, std::move(cb));
}

template <EventQueueLike Queue>
uint64_t BasicSimulator<Queue>::Run() {
  uint64_t n = 0;
  EventCallback cb;
  while (!queue_.Empty()) {
    const SimTime t = queue_.Pop(&cb);
    assert(t >= now_);
    now_ = t;
    cb();
    ++n;
  }
  executed_ += n;
  return n;
}

template class BasicSimulator<EventQueue>;
template class BasicSimulator<PriorityEventQueue>;

}  // namespace meshsim

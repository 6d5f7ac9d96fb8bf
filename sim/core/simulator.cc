#include "sim/core/simulator.h"

#include <cassert>

namespace meshsim {

EventId Simulator::Schedule(SimTime delay, EventQueue::Callback cb) {
  assert(delay >= SimTime::Zero());
  return queue_.Push(now_ + delay, std::move(cb));
}

EventId Simulator::ScheduleAt(SimTime at, EventQueue::Callback cb) {
  assert(at >= now_);
  return queue_.Push(at, std::move(cb));
}

uint64_t Simulator::Run() {
  uint64_t n = 0;
  EventQueue::Callback cb;
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

}  // namespace meshsim

// The simulation loop: a clock and an event queue.
//
// Time never goes backwards: an event may only be scheduled at or after Now().
// Callbacks run one at a time, in (time, sequence) order, and may schedule or cancel
// further events.
#pragma once

#include <cstdint>

#include "sim/core/event_queue.h"
#include "sim/core/time.h"

namespace meshsim {

class Simulator {
 public:
  Simulator() = default;
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  SimTime Now() const { return now_; }
  // Runs cb at Now() + delay.
  EventId Schedule(SimTime delay, EventQueue::Callback cb);
  // Runs cb at absolute time `at`. Precondition: at >= Now().
  EventId ScheduleAt(SimTime at, EventQueue::Callback cb);
  bool Cancel(EventId id) { return queue_.Cancel(id); }
  // Runs events until none remain. Returns the number of events executed.
  uint64_t Run();
  uint64_t EventsExecuted() const { return executed_; }
  void Reserve(size_t n) { queue_.Reserve(n); }

 private:
  EventQueue queue_;
  SimTime now_ = SimTime::Zero();
  uint64_t executed_ = 0;
};

}  // namespace meshsim

// The simulation loop: a clock and an event queue.
//
// Time never goes backwards: an event may only be scheduled at or after Now().
// Callbacks run one at a time, in (time, sequence) order, and may schedule or cancel
// further events.
//
// BasicSimulator takes its queue as a template argument (any EventQueueLike) so that the
// loop calls it without a virtual call; every model runs on Simulator, the radix heap.
// The members are defined in simulator.cc, instantiated there for EventQueue and
// PriorityEventQueue (the latter for tests and benchmarks).
#pragma once

#include <cstdint>

#include "sim/core/event_queue.h"
#include "sim/core/time.h"

namespace meshsim {

template <EventQueueLike Queue>
class BasicSimulator {
 public:
  BasicSimulator() = default;
  BasicSimulator(const BasicSimulator&) = delete;
  BasicSimulator& operator=(const BasicSimulator&) = delete;

  SimTime Now() const { return now_; }
  // Runs cb at Now() + delay. Precondition: delay >= 0.
  EventId Schedule(SimTime delay, EventCallback cb);
  // Runs cb at absolute time `at`. Precondition: at >= Now().
  EventId ScheduleAt(SimTime at, EventCallback cb);
  // False if the event already ran or was cancelled.
  bool Cancel(EventId id) { return queue_.Cancel(id); }
  // Runs events until none remain. Returns the number of events executed.
  uint64_t Run();
  uint64_t EventsExecuted() const { return executed_; }
  void Reserve(size_t n) { queue_.Reserve(n); }

 private:
  Queue queue_;
  SimTime now_ = SimTime::Zero();
  uint64_t executed_ = 0;
};

using Simulator = BasicSimulator<EventQueue>;

}  // namespace meshsim

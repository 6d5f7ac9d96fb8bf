// Event-queue throughput in the "hold" model: keep N events pending; each step pops the
// earliest and schedules a new one a pseudo-random delay later (BM_EventQueueHoldTies:
// one of a few delays, so that events share their times as in a replay). Every EventQueueLike
// queue runs in the same process: BM_EventQueueHold<EventQueue> (the radix heap the
// simulator uses) against BM_EventQueueHold<PriorityEventQueue> (std::priority_queue).
#include <benchmark/benchmark.h>

#include <cstdint>

#include "sim/core/event_queue.h"
#include "sim/core/priority_event_queue.h"
#include "sim/core/simulator.h"

namespace meshsim {
namespace {

uint64_t NextRandom(uint64_t& state) {
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return state;
}

template <EventQueueLike Queue>
void BM_EventQueueHold(benchmark::State& state) {
  const int pending = static_cast<int>(state.range(0));
  Queue q;
  q.Reserve(pending + 1);
  uint64_t rng = 88172645463325252ull;
  int64_t fired = 0;
  for (int i = 0; i < pending; ++i) {
    q.Push(SimTime::Picoseconds(NextRandom(rng) % 1'000'000), [&fired] { ++fired; });
  }
  EventCallback cb;
  for (auto _ : state) {
    const SimTime now = q.Pop(&cb);
    cb();
    q.Push(now + SimTime::Picoseconds(NextRandom(rng) % 1'000'000), [&fired] { ++fired; });
  }
  benchmark::DoNotOptimize(fired);
  state.SetItemsProcessed(state.iterations());
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK_TEMPLATE(BM_EventQueueHold, EventQueue)->Arg(100)->Arg(10'000)->Arg(1'000'000);
BENCHMARK_TEMPLATE(BM_EventQueueHold, PriorityEventQueue)->Arg(100)->Arg(10'000)->Arg(1'000'000);

// The hold model as a replay of identical ranks runs it: a delay is one of 16 values
// (ranks doing the same work finish together), so most events share their time with
// others; EventQueue keeps such events in groups off the heap.
template <EventQueueLike Queue>
void BM_EventQueueHoldTies(benchmark::State& state) {
  const int pending = static_cast<int>(state.range(0));
  Queue q;
  q.Reserve(pending + 1);
  uint64_t rng = 88172645463325252ull;
  int64_t fired = 0;
  auto delay = [&rng] {
    return SimTime::Picoseconds(static_cast<int64_t>(NextRandom(rng) % 16) * 1000);
  };
  for (int i = 0; i < pending; ++i) q.Push(delay(), [&fired] { ++fired; });
  EventCallback cb;
  for (auto _ : state) {
    const SimTime now = q.Pop(&cb);
    cb();
    q.Push(now + delay(), [&fired] { ++fired; });
  }
  benchmark::DoNotOptimize(fired);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK_TEMPLATE(BM_EventQueueHoldTies, EventQueue)->Arg(10'000);
BENCHMARK_TEMPLATE(BM_EventQueueHoldTies, PriorityEventQueue)->Arg(10'000);

// The same through Simulator::Run: each callback schedules its successor.
void BM_SimulatorHold(benchmark::State& state) {
  const int pending = static_cast<int>(state.range(0));
  constexpr int kEventsPerRun = 1'000'000;
  for (auto _ : state) {
    Simulator sim;
    sim.Reserve(pending + 1);
    uint64_t rng = 88172645463325252ull;
    int remaining = kEventsPerRun;
    struct Chain {
      Simulator* sim;
      uint64_t* rng;
      int* remaining;
      void operator()() const {
        if (--*remaining <= 0) return;
        sim->Schedule(SimTime::Picoseconds(NextRandom(*rng) % 1'000'000), *this);
      }
    };
    for (int i = 0; i < pending; ++i) {
      sim.Schedule(SimTime::Picoseconds(NextRandom(rng) % 1'000'000),
                   Chain{&sim, &rng, &remaining});
    }
    sim.Run();
    benchmark::DoNotOptimize(sim.EventsExecuted());
  }
  state.counters["events_per_s"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * kEventsPerRun, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SimulatorHold)->Arg(10'000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace meshsim

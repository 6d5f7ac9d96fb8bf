// Tests for the simulator loop: the clock follows events in (time, sequence) order,
// callbacks may schedule and cancel, and time never goes backwards. One typed suite over
// the loop on each event queue (Simulator is the loop on the radix heap).
#include "sim/core/simulator.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "sim/core/priority_event_queue.h"

namespace meshsim {
namespace {

SimTime Ps(int64_t ps) { return SimTime::Picoseconds(ps); }

template <typename Sim>
class SimulatorTest : public ::testing::Test {};

struct SimulatorNames {
  template <typename Sim>
  static std::string GetName(int) {
    return std::is_same_v<Sim, Simulator> ? "FourAryHeap" : "PriorityQueue";
  }
};
using Simulators = ::testing::Types<Simulator, BasicSimulator<PriorityEventQueue>>;
TYPED_TEST_SUITE(SimulatorTest, Simulators, SimulatorNames);

TYPED_TEST(SimulatorTest, StartsAtZero) {
  TypeParam sim;
  EXPECT_EQ(sim.Now(), SimTime::Zero());
  EXPECT_EQ(sim.EventsExecuted(), 0u);
}

TYPED_TEST(SimulatorTest, RunWithNoEventsDoesNothing) {
  TypeParam sim;
  EXPECT_EQ(sim.Run(), 0u);
  EXPECT_EQ(sim.Now(), SimTime::Zero());
}

TYPED_TEST(SimulatorTest, RunsEventsAtTheirScheduledTimes) {
  TypeParam sim;
  std::vector<int64_t> seen;
  for (int64_t t : {300, 100, 200}) {
    sim.ScheduleAt(Ps(t), [&] { seen.push_back(sim.Now().picoseconds()); });
  }
  EXPECT_EQ(sim.Run(), 3u);
  EXPECT_EQ(seen, (std::vector<int64_t>{100, 200, 300}));
  EXPECT_EQ(sim.Now(), Ps(300));
}

TYPED_TEST(SimulatorTest, ScheduleIsRelativeToNow) {
  TypeParam sim;
  SimTime inner = SimTime::Zero();
  sim.ScheduleAt(Ps(1000), [&] { sim.Schedule(Ps(5), [&] { inner = sim.Now(); }); });
  sim.Run();
  EXPECT_EQ(inner, Ps(1005));
}

TYPED_TEST(SimulatorTest, TiesRunInSchedulingOrder) {
  TypeParam sim;
  std::vector<int> order;
  for (int i = 0; i < 5; ++i) sim.ScheduleAt(Ps(42), [&order, i] { order.push_back(i); });
  sim.Run();
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4}));
}

TYPED_TEST(SimulatorTest, ZeroDelayEventRunsAfterThoseAlreadyDueNow) {
  TypeParam sim;
  std::vector<char> order;
  sim.ScheduleAt(Ps(10), [&] {
    order.push_back('a');
    sim.Schedule(SimTime::Zero(), [&] { order.push_back('c'); });
  });
  sim.ScheduleAt(Ps(10), [&] { order.push_back('b'); });
  sim.Run();
  EXPECT_EQ(order, (std::vector<char>{'a', 'b', 'c'}));
}

TYPED_TEST(SimulatorTest, CallbacksCanScheduleChains) {
  TypeParam sim;
  int remaining = 100;
  std::function<void()> tick = [&] {
    if (--remaining > 0) sim.Schedule(Ps(7), tick);
  };
  sim.Schedule(Ps(7), tick);
  EXPECT_EQ(sim.Run(), 100u);
  EXPECT_EQ(remaining, 0);
  EXPECT_EQ(sim.Now(), Ps(700));
}

TYPED_TEST(SimulatorTest, CancelledEventDoesNotRun) {
  TypeParam sim;
  bool ran = false;
  const EventId id = sim.Schedule(Ps(5), [&] { ran = true; });
  EXPECT_TRUE(sim.Cancel(id));
  EXPECT_FALSE(sim.Cancel(id));
  EXPECT_EQ(sim.Run(), 0u);
  EXPECT_FALSE(ran);
  EXPECT_EQ(sim.Now(), SimTime::Zero()) << "a cancelled event must not move the clock";
}

TYPED_TEST(SimulatorTest, CallbackCanCancelALaterEvent) {
  TypeParam sim;
  bool later_ran = false;
  const EventId later = sim.ScheduleAt(Ps(20), [&] { later_ran = true; });
  bool cancel_result = false;
  sim.ScheduleAt(Ps(10), [&] { cancel_result = sim.Cancel(later); });
  EXPECT_EQ(sim.Run(), 1u);
  EXPECT_TRUE(cancel_result);
  EXPECT_FALSE(later_ran);
  EXPECT_EQ(sim.Now(), Ps(10));
}

TYPED_TEST(SimulatorTest, CancelAfterTheEventRanReturnsFalse) {
  TypeParam sim;
  const EventId id = sim.Schedule(Ps(1), [] {});
  sim.Run();
  EXPECT_FALSE(sim.Cancel(id));
}

TYPED_TEST(SimulatorTest, EventsExecutedAccumulatesAcrossRuns) {
  TypeParam sim;
  sim.Schedule(Ps(1), [] {});
  sim.Schedule(Ps(2), [] {});
  EXPECT_EQ(sim.Run(), 2u);
  sim.Schedule(Ps(1), [] {});
  EXPECT_EQ(sim.Run(), 1u);
  EXPECT_EQ(sim.EventsExecuted(), 3u);
  EXPECT_EQ(sim.Now(), Ps(3));
}

// One executed event: when it was due and what the clock said when it ran.
struct Observation {
  int64_t due_ps;
  int64_t now_ps;
};

// Builds a randomized cascade: each event schedules 0..3 followers at random delays
// (zero included, to exercise ties), and some events cancel a random pending one.
template <typename Sim>
class RandomCascade {
 public:
  RandomCascade(Sim& sim, uint64_t seed, int budget) : sim_(sim), rng_(seed), budget_(budget) {}

  void Start(int roots) {
    for (int i = 0; i < roots; ++i) Add(SimTime::Zero() + Ps(Delay()));
  }
  const std::vector<Observation>& observations() const { return observations_; }
  int cancelled() const { return cancelled_; }

 private:
  int64_t Delay() { return rng_() % 4 == 0 ? 0 : static_cast<int64_t>(rng_() % 1000); }

  void Add(SimTime at) {
    if (budget_-- <= 0) return;
    const int64_t due = at.picoseconds();
    pending_.push_back(sim_.ScheduleAt(at, [this, due] { Fire(due); }));
  }

  void Fire(int64_t due) {
    observations_.push_back({due, sim_.Now().picoseconds()});
    const int followers = static_cast<int>(rng_() % 4);
    for (int i = 0; i < followers; ++i) Add(sim_.Now() + Ps(Delay()));
    if (rng_() % 8 == 0 && !pending_.empty()) {
      if (sim_.Cancel(pending_[rng_() % pending_.size()])) ++cancelled_;
    }
  }

  Sim& sim_;
  std::mt19937_64 rng_;
  int budget_;
  std::vector<EventId> pending_;
  std::vector<Observation> observations_;
  int cancelled_ = 0;
};

TYPED_TEST(SimulatorTest, TimeNeverGoesBackwardsUnderARandomSchedule) {
  TypeParam sim;
  RandomCascade<TypeParam> cascade(sim, /*seed=*/12345, /*budget=*/20000);
  cascade.Start(/*roots=*/200);
  const uint64_t executed = sim.Run();

  const std::vector<Observation>& obs = cascade.observations();
  ASSERT_GT(obs.size(), 1000u) << "the cascade died out too early to test anything";
  EXPECT_EQ(executed, obs.size());
  EXPECT_GT(cascade.cancelled(), 0);
  for (size_t i = 0; i < obs.size(); ++i) {
    ASSERT_EQ(obs[i].now_ps, obs[i].due_ps) << "event " << i << " ran at the wrong time";
    if (i > 0) {
      ASSERT_GE(obs[i].now_ps, obs[i - 1].now_ps) << "time went backwards at " << i;
    }
  }
  EXPECT_EQ(sim.Now().picoseconds(), obs.back().now_ps);
}

TYPED_TEST(SimulatorTest, RandomScheduleIsDeterministic) {
  auto run = [](uint64_t seed) {
    TypeParam sim;
    RandomCascade<TypeParam> cascade(sim, seed, /*budget=*/5000);
    cascade.Start(/*roots=*/50);
    sim.Run();
    std::vector<int64_t> times;
    for (const Observation& o : cascade.observations()) times.push_back(o.now_ps);
    return times;
  };
  EXPECT_EQ(run(7), run(7));
}

}  // namespace
}  // namespace meshsim

// Tests for the event queues (EventQueueLike): (time, sequence) order, cancellation, live
// counts, and randomized comparisons against a std::multimap and a std::priority_queue
// of (time, sequence) reference models. One typed suite runs over every implementation:
// the radix heap and the std::priority_queue baseline.
#include "sim/core/event_queue.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <iterator>
#include <map>
#include <queue>
#include <random>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "sim/core/priority_event_queue.h"

namespace meshsim {
namespace {

SimTime Ps(int64_t ps) { return SimTime::Picoseconds(ps); }

// Pops every live event, running each callback; returns the popped times.
template <EventQueueLike Queue>
std::vector<int64_t> DrainTimes(Queue& q) {
  std::vector<int64_t> times;
  EventCallback cb;
  while (!q.Empty()) {
    times.push_back(q.Pop(&cb).picoseconds());
    cb();
  }
  return times;
}

template <typename Queue>
class EventQueueTest : public ::testing::Test {};

struct QueueNames {
  template <typename Queue>
  static std::string GetName(int) {
    return std::is_same_v<Queue, EventQueue> ? "RadixHeap" : "PriorityQueue";
  }
};
using Queues = ::testing::Types<EventQueue, PriorityEventQueue>;

// The interface asks for cancellation: a queue without it is not EventQueueLike.
struct QueueWithoutCancel {
  EventId Push(SimTime, EventCallback);
  bool Empty() const;
  size_t Size() const;
  SimTime NextTime();
  SimTime Pop(EventCallback*);
  void Reserve(size_t);
};
static_assert(!EventQueueLike<QueueWithoutCancel>);
TYPED_TEST_SUITE(EventQueueTest, Queues, QueueNames);

TYPED_TEST(EventQueueTest, StartsEmpty) {
  TypeParam q;
  EXPECT_TRUE(q.Empty());
  EXPECT_EQ(q.Size(), 0u);
}

TYPED_TEST(EventQueueTest, PopsInTimeOrder) {
  TypeParam q;
  for (int64_t t : {50, 10, 40, 20, 30, 0}) q.Push(Ps(t), [] {});
  EXPECT_EQ(DrainTimes(q), (std::vector<int64_t>{0, 10, 20, 30, 40, 50}));
}

TYPED_TEST(EventQueueTest, RunsTiesInSchedulingOrder) {
  TypeParam q;
  std::vector<int> order;
  for (int i = 0; i < 10; ++i) q.Push(Ps(7), [&order, i] { order.push_back(i); });
  DrainTimes(q);
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
}

TYPED_TEST(EventQueueTest, OrdersByTimeBeforeSequence) {
  TypeParam q;
  std::vector<char> order;
  q.Push(Ps(2), [&] { order.push_back('a'); });
  q.Push(Ps(1), [&] { order.push_back('b'); });
  q.Push(Ps(2), [&] { order.push_back('c'); });
  q.Push(Ps(1), [&] { order.push_back('d'); });
  DrainTimes(q);
  EXPECT_EQ(order, (std::vector<char>{'b', 'd', 'a', 'c'}));
}

TYPED_TEST(EventQueueTest, PopReturnsTheEventsCallback) {
  TypeParam q;
  int ran = 0;
  q.Push(Ps(5), [&] { ran = 5; });
  EventCallback cb;
  EXPECT_EQ(q.Pop(&cb), Ps(5));
  EXPECT_EQ(ran, 0) << "Pop must hand the callback over, not run it";
  cb();
  EXPECT_EQ(ran, 5);
}

TYPED_TEST(EventQueueTest, CancelPreventsTheCallback) {
  TypeParam q;
  bool cancelled_ran = false;
  bool other_ran = false;
  const EventId id = q.Push(Ps(1), [&] { cancelled_ran = true; });
  q.Push(Ps(2), [&] { other_ran = true; });
  EXPECT_TRUE(q.Cancel(id));
  EXPECT_EQ(DrainTimes(q), (std::vector<int64_t>{2}));
  EXPECT_FALSE(cancelled_ran);
  EXPECT_TRUE(other_ran);
}

TYPED_TEST(EventQueueTest, CancelTwiceReturnsFalse) {
  TypeParam q;
  const EventId id = q.Push(Ps(1), [] {});
  EXPECT_TRUE(q.Cancel(id));
  EXPECT_FALSE(q.Cancel(id));
}

TYPED_TEST(EventQueueTest, CancelAfterPopReturnsFalse) {
  TypeParam q;
  const EventId id = q.Push(Ps(1), [] {});
  DrainTimes(q);
  EXPECT_FALSE(q.Cancel(id));
}

TYPED_TEST(EventQueueTest, CancelOfDefaultIdReturnsFalse) {
  TypeParam q;
  q.Push(Ps(1), [] {});
  EXPECT_FALSE(q.Cancel(EventId{}));
  EXPECT_EQ(q.Size(), 1u);
}

TYPED_TEST(EventQueueTest, StaleIdDoesNotCancelTheEventReusingItsSlot) {
  TypeParam q;
  const EventId stale = q.Push(Ps(1), [] {});
  DrainTimes(q);
  bool ran = false;
  const EventId fresh = q.Push(Ps(2), [&] { ran = true; });
  ASSERT_EQ(fresh.slot, stale.slot) << "expected the freed slot to be reused";
  EXPECT_FALSE(q.Cancel(stale));
  EXPECT_EQ(q.Size(), 1u);
  DrainTimes(q);
  EXPECT_TRUE(ran);
}

TYPED_TEST(EventQueueTest, SizeAndEmptyTrackLiveEvents) {
  TypeParam q;
  const EventId a = q.Push(Ps(1), [] {});
  const EventId b = q.Push(Ps(2), [] {});
  q.Push(Ps(3), [] {});
  EXPECT_EQ(q.Size(), 3u);
  EXPECT_TRUE(q.Cancel(b));
  EXPECT_EQ(q.Size(), 2u);
  EXPECT_FALSE(q.Cancel(b));
  EXPECT_EQ(q.Size(), 2u);
  EventCallback cb;
  q.Pop(&cb);
  EXPECT_EQ(q.Size(), 1u);
  EXPECT_FALSE(q.Cancel(a));
  q.Pop(&cb);
  EXPECT_EQ(q.Size(), 0u);
  EXPECT_TRUE(q.Empty());
}

TYPED_TEST(EventQueueTest, IsEmptyWhenEveryEventIsCancelled) {
  TypeParam q;
  const EventId a = q.Push(Ps(1), [] {});
  const EventId b = q.Push(Ps(1), [] {});
  EXPECT_TRUE(q.Cancel(a));
  EXPECT_TRUE(q.Cancel(b));
  EXPECT_TRUE(q.Empty());
  EXPECT_EQ(q.Size(), 0u);
}

TYPED_TEST(EventQueueTest, NextTimeSkipsCancelledEvents) {
  TypeParam q;
  const EventId first = q.Push(Ps(1), [] {});
  q.Push(Ps(9), [] {});
  EXPECT_EQ(q.NextTime(), Ps(1));
  EXPECT_TRUE(q.Cancel(first));
  EXPECT_EQ(q.NextTime(), Ps(9));
  EXPECT_EQ(q.Size(), 1u);
}

TYPED_TEST(EventQueueTest, CallbackCanPushMoreEvents) {
  TypeParam q;
  std::vector<int64_t> ran;
  q.Push(Ps(1), [&] {
    ran.push_back(1);
    q.Push(Ps(3), [&] { ran.push_back(3); });
  });
  q.Push(Ps(2), [&] { ran.push_back(2); });
  DrainTimes(q);
  EXPECT_EQ(ran, (std::vector<int64_t>{1, 2, 3}));
}

TYPED_TEST(EventQueueTest, ReserveKeepsBehaviour) {
  TypeParam q;
  q.Reserve(1000);
  EXPECT_TRUE(q.Empty());
  q.Push(Ps(2), [] {});
  q.Push(Ps(1), [] {});
  EXPECT_EQ(DrainTimes(q), (std::vector<int64_t>{1, 2}));
}

// The hold model the simulator runs: pop one, push one. The pushed key is sometimes earlier than
// every pending one, often a tie, and the queue grows well past its initial capacity; the order
// stays (time, push order).
TYPED_TEST(EventQueueTest, PopThenPushKeepsTimeAndPushOrder) {
  std::mt19937_64 rng(7);
  TypeParam q;
  std::multimap<int64_t, int> ref;
  int last_ran = -1;
  int tags = 0;
  auto push = [&](int64_t t) {
    const int tag = tags++;
    q.Push(Ps(t), [&last_ran, tag] { last_ran = tag; });
    ref.emplace(t, tag);
  };
  for (int i = 0; i < 5000; ++i) push(static_cast<int64_t>(rng() % 1000));
  EventCallback cb;
  for (int step = 0; step < 20000; ++step) {
    const auto top = ref.begin();
    ASSERT_EQ(q.Pop(&cb), Ps(top->first)) << "step " << step;
    cb();
    ASSERT_EQ(last_ran, top->second) << "step " << step;
    const int64_t now = top->first;
    ref.erase(top);
    const int64_t pick = static_cast<int64_t>(rng() % 4);
    push(pick == 0 ? now : now + static_cast<int64_t>(rng() % (pick == 1 ? 2 : 1000)));
    if (step % 7 == 0) push(now + 500);  // grows
  }
  while (!ref.empty()) {
    ASSERT_EQ(q.Pop(&cb), Ps(ref.begin()->first));
    cb();
    ASSERT_EQ(last_ran, ref.begin()->second);
    ref.erase(ref.begin());
  }
  EXPECT_TRUE(q.Empty());
}

// Events at one time interleaved with events at hundreds of other times (more than
// EventQueue remembers at once, so that one time's events fall into several groups), some
// cancelled, among them the last pushed at their time: the order stays (time, push order).
TYPED_TEST(EventQueueTest, TiesAcrossManyInterleavedTimesKeepPushOrder) {
  TypeParam q;
  std::vector<int> order;
  std::vector<EventId> ids;
  std::multimap<int64_t, int> ref;
  for (int i = 0; i < 6000; ++i) {
    const int64_t t = (i * 7919) % 1000;  // each of 1000 times six times, spread apart
    ids.push_back(q.Push(Ps(t), [&order, i] { order.push_back(i); }));
    ref.emplace(t, i);
    if (i % 5 == 4) {
      ASSERT_TRUE(q.Cancel(ids[i - (i % 10 == 9 ? 0 : 2)]));
      const int gone = i - (i % 10 == 9 ? 0 : 2);
      for (auto it = ref.begin(); it != ref.end(); ++it) {
        if (it->second == gone) {
          ref.erase(it);
          break;
        }
      }
    }
  }
  std::vector<int> expected;
  for (const auto& [t, i] : ref) expected.push_back(i);
  DrainTimes(q);
  EXPECT_EQ(order, expected);
}

// An event that runs at the time being popped, pushed between two events of that time,
// runs after both: it was pushed after them.
TYPED_TEST(EventQueueTest, PushAtTheCurrentTimeRunsAfterThatTimesEarlierEvents) {
  TypeParam q;
  std::vector<char> order;
  q.Push(Ps(5), [&] {
    order.push_back('a');
    q.Push(Ps(5), [&] { order.push_back('d'); });
  });
  q.Push(Ps(5), [&] { order.push_back('b'); });
  q.Push(Ps(6), [&] { order.push_back('e'); });
  const EventId c = q.Push(Ps(5), [&] { order.push_back('c'); });
  EventCallback cb;
  EXPECT_EQ(q.Pop(&cb), Ps(5));
  cb();
  EXPECT_TRUE(q.Cancel(c));  // the last of its time, cancelled after 'd' joined
  DrainTimes(q);
  EXPECT_EQ(order, (std::vector<char>{'a', 'b', 'd', 'e'}));
}

// NextTime, Cancel and Size between a Pop and the next Push see the popped event gone.
TYPED_TEST(EventQueueTest, CallsBetweenPopAndPushSeeThePoppedEventGone) {
  TypeParam q;
  q.Push(Ps(1), [] {});
  const EventId second = q.Push(Ps(2), [] {});
  q.Push(Ps(3), [] {});
  EventCallback cb;
  EXPECT_EQ(q.Pop(&cb), Ps(1));
  EXPECT_EQ(q.Size(), 2u);
  EXPECT_EQ(q.NextTime(), Ps(2));
  EXPECT_TRUE(q.Cancel(second));
  EXPECT_EQ(q.NextTime(), Ps(3));
  EXPECT_EQ(q.Pop(&cb), Ps(3));
  EXPECT_TRUE(q.Empty());
  q.Push(Ps(4), [] {});
  EXPECT_EQ(DrainTimes(q), (std::vector<int64_t>{4}));
}

// The reference model: std::multimap keeps equal keys in insertion order, which is the
// FIFO tie-break the queue promises.
struct ReferenceQueue {
  using Map = std::multimap<int64_t, int>;
  Map events;                         // time -> tag
  std::map<int, Map::iterator> live;  // tag -> position in `events`
};

// 100k random pushes, cancels (of live, dead and stale ids) and pops, checked step by
// step against the reference model; slots are recycled heavily along the way.
TYPED_TEST(EventQueueTest, MatchesMultimapModelUnderRandomPushesAndCancels) {
  std::mt19937_64 rng(20240613);
  TypeParam q;
  ReferenceQueue ref;
  std::vector<EventId> ids;  // by tag
  int last_ran = -1;
  int64_t now = 0;
  for (int step = 0; step < 100000; ++step) {
    const int action = static_cast<int>(rng() % 10);
    if (action < 5) {
      const int tag = static_cast<int>(ids.size());
      const int64_t t = now + static_cast<int64_t>(rng() % 64);  // many ties
      ids.push_back(q.Push(Ps(t), [&last_ran, tag] { last_ran = tag; }));
      ref.live[tag] = ref.events.emplace(t, tag);
    } else if (action < 7 && !ids.empty()) {
      const int tag = static_cast<int>(rng() % ids.size());
      auto it = ref.live.find(tag);
      const bool expect = it != ref.live.end();
      ASSERT_EQ(q.Cancel(ids[tag]), expect) << "step " << step << ", tag " << tag;
      if (expect) {
        ref.events.erase(it->second);
        ref.live.erase(it);
      }
    } else if (!ref.events.empty()) {
      ASSERT_FALSE(q.Empty());
      const auto top = ref.events.begin();
      ASSERT_EQ(q.NextTime(), Ps(top->first)) << "step " << step;
      EventCallback cb;
      ASSERT_EQ(q.Pop(&cb), Ps(top->first)) << "step " << step;
      cb();
      ASSERT_EQ(last_ran, top->second) << "step " << step;
      now = top->first;
      ref.live.erase(top->second);
      ref.events.erase(top);
    }
    ASSERT_EQ(q.Size(), ref.events.size()) << "step " << step;
    ASSERT_EQ(q.Empty(), ref.events.empty()) << "step " << step;
  }
  EventCallback cb;
  for (const auto& [t, tag] : ref.events) {
    ASSERT_EQ(q.Pop(&cb), Ps(t));
    cb();
    ASSERT_EQ(last_ran, tag);
  }
  EXPECT_TRUE(q.Empty());
}

// NextTime may look ahead past the last popped time; a Push between that time and the
// one NextTime saw still runs first, and ties on either side keep their push order.
TYPED_TEST(EventQueueTest, PushBeforeTheTimeNextTimeSawRunsFirst) {
  TypeParam q;
  std::vector<char> order;
  auto tag = [&order](char c) { return [&order, c] { order.push_back(c); }; };
  q.Push(Ps(10), tag('a'));
  q.Push(Ps(100), tag('b'));
  q.Push(Ps(1000), tag('c'));
  EventCallback cb;
  EXPECT_EQ(q.Pop(&cb), Ps(10));
  cb();
  EXPECT_EQ(q.NextTime(), Ps(100));
  q.Push(Ps(10), tag('d'));  // at the popped time
  q.Push(Ps(100), tag('e'));
  q.Push(Ps(50), tag('f'));
  EXPECT_EQ(q.NextTime(), Ps(10));
  q.Push(Ps(1000), tag('g'));
  EXPECT_EQ(DrainTimes(q), (std::vector<int64_t>{10, 50, 100, 100, 1000, 1000}));
  EXPECT_EQ(order, (std::vector<char>{'a', 'd', 'f', 'b', 'e', 'c', 'g'}));
}

// Times far apart (up to 2^62 ps) and close together, in one queue.
TYPED_TEST(EventQueueTest, PopsTimesAcrossTheWholeRangeInOrder) {
  TypeParam q;
  const std::vector<int64_t> times = {int64_t{1} << 62,       3, (int64_t{1} << 62) - 1, 0, 1 << 20,
                                      (int64_t{1} << 40) + 5, 2, (int64_t{1} << 40) + 4};
  for (int64_t t : times) q.Push(Ps(t), [] {});
  std::vector<int64_t> sorted = times;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(DrainTimes(q), sorted);
}

// A std::priority_queue of (time, sequence, tag): the order the queues promise, spelled
// out. Pops the least (time, sequence).
struct SequenceReference {
  using Item = std::tuple<int64_t, uint64_t, int>;
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> heap;
  uint64_t sequence = 0;
  void Push(int64_t t, int tag) { heap.emplace(t, sequence++, tag); }
};

// Long random runs of interleaved pushes and pops (bursts of either, so that the queue
// grows and shrinks through thousands of events), at delays drawn from several scales
// (ties at the current time, a few picoseconds, a microsecond, up to 2^45 ps), checked
// event by event against the (time, sequence) reference.
TYPED_TEST(EventQueueTest, MatchesPriorityQueueOfTimeAndSequenceUnderRandomHolds) {
  for (uint64_t seed : {1u, 2u, 3u}) {
    std::mt19937_64 rng(seed);
    TypeParam q;
    SequenceReference ref;
    int last_ran = -1;
    int tags = 0;
    int64_t now = 0;
    auto push = [&] {
      const int scale = static_cast<int>(rng() % 4);
      const uint64_t span = scale == 0 ? 1 : scale == 1 ? 8 : scale == 2 ? 1'000'000 : 1ull << 45;
      const int64_t t = now + static_cast<int64_t>(rng() % span);
      const int tag = tags++;
      q.Push(Ps(t), [&last_ran, tag] { last_ran = tag; });
      ref.Push(t, tag);
    };
    for (int burst = 0; burst < 400; ++burst) {
      const int pushes = static_cast<int>(rng() % 500);
      for (int i = 0; i < pushes; ++i) push();
      const int pops = static_cast<int>(rng() % 600);
      for (int i = 0; i < pops && !ref.heap.empty(); ++i) {
        const auto [t, seq, tag] = ref.heap.top();
        ref.heap.pop();
        EventCallback cb;
        ASSERT_EQ(q.Pop(&cb), Ps(t)) << "seed " << seed << ", burst " << burst;
        cb();
        ASSERT_EQ(last_ran, tag) << "seed " << seed << ", burst " << burst;
        now = t;
        if (rng() % 2 == 0) push();  // the popped event schedules another
      }
      ASSERT_EQ(q.Size(), ref.heap.size());
    }
  }
}

#ifndef NDEBUG
// The radix heap needs monotone keys: a Push before the last popped time is a bug in the
// caller, caught in debug builds.
TEST(EventQueueDeathTest, PushBeforeTheLastPoppedTimeAsserts) {
  EventQueue q;
  q.Push(Ps(5), [] {});
  EventCallback cb;
  q.Pop(&cb);
  EXPECT_DEATH(q.Push(Ps(4), [] {}), "");
}
#endif

}  // namespace
}  // namespace meshsim

// Tests for CostModelNetwork's memo of collective costs: each distinct collective (where
// its group lives, its members, op and bytes) asks the CollectiveModel once, however many
// collectives a replay has (a full replay of 3,072 GPUs has over 7,000 groups), and a
// group whose storage now holds other members is costed again.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "sim/net/network.h"

namespace meshsim {
namespace {

// Takes gpus[0] + gpus.size() ns plus bytes ps, and counts the calls.
class CountingModel final : public CollectiveModel {
 public:
  explicit CountingModel(int* calls) : calls_(calls) {}
  CollectiveCost Cost(CommOp op, std::span<const int> gpus, double bytes) const override {
    ++*calls_;
    CollectiveCost c;
    c.duration =
        SimTime::Picoseconds((gpus[0] + static_cast<int64_t>(gpus.size())) * 1000 +
                             static_cast<int64_t>(bytes) + (op == CommOp::kAllGather ? 1 : 0));
    c.intra_node_bytes = bytes;
    return c;
  }

 private:
  int* calls_;
};

// Starts every collective of `groups` at once, `rounds` times over (a round when the last
// one ended); returns how long each of the last round took, ps.
std::vector<int64_t> RunRounds(CostModelNetwork& net, const std::vector<std::vector<int>>& groups,
                               CommOp op, double bytes, int rounds) {
  Simulator sim;
  std::vector<int64_t> end(groups.size(), -1);
  int64_t round_start = 0;
  for (int round = 0; round < rounds; ++round) {
    round_start = sim.Now().picoseconds();
    for (size_t g = 0; g < groups.size(); ++g) {
      net.Start(sim, op, groups[g], bytes, [&end, &sim, g] { end[g] = sim.Now().picoseconds(); },
                {});
    }
    sim.Run();
  }
  for (int64_t& e : end) e -= round_start;
  return end;
}

TEST(CostModelNetwork, CostsEachOfThousandsOfGroupsOnce) {
  int calls = 0;
  CostModelNetwork net(std::make_unique<CountingModel>(&calls), 1e9, 1e9);
  std::vector<std::vector<int>> groups;
  for (int g = 0; g < 5000; ++g) groups.push_back({g, g + 1, g + 2, g + 3});
  const std::vector<int64_t> end = RunRounds(net, groups, CommOp::kAllReduce, 100, 3);
  EXPECT_EQ(calls, 5000);
  for (int g = 0; g < 5000; ++g) {
    EXPECT_EQ(end[g], (g + 4) * int64_t{1000} + 100) << g;
  }
  EXPECT_DOUBLE_EQ(net.IntraNodeBytes(), 3 * 5000 * 100.0);
}

TEST(CostModelNetwork, OpAndBytesArePartOfTheKey) {
  int calls = 0;
  CostModelNetwork net(std::make_unique<CountingModel>(&calls), 1e9, 1e9);
  const std::vector<std::vector<int>> groups = {{7, 8}};
  EXPECT_EQ(RunRounds(net, groups, CommOp::kAllReduce, 10, 1)[0], 9'010);
  EXPECT_EQ(RunRounds(net, groups, CommOp::kAllGather, 10, 1)[0], 9'011);
  EXPECT_EQ(RunRounds(net, groups, CommOp::kAllReduce, 20, 1)[0], 9'020);
  EXPECT_EQ(RunRounds(net, groups, CommOp::kAllReduce, 10, 2)[0], 9'010);
  EXPECT_EQ(calls, 3);
}

TEST(CostModelNetwork, StorageWithOtherMembersIsCostedAgain) {
  int calls = 0;
  CostModelNetwork net(std::make_unique<CountingModel>(&calls), 1e9, 1e9);
  std::vector<std::vector<int>> groups = {{1, 2, 3}};
  EXPECT_EQ(RunRounds(net, groups, CommOp::kAllReduce, 0, 1)[0], 4'000);
  groups[0][0] = 5;  // the same storage, another group
  EXPECT_EQ(RunRounds(net, groups, CommOp::kAllReduce, 0, 1)[0], 8'000);
  EXPECT_EQ(calls, 2);
}

// StartKnown: a key's cost is worked out once and kept by the key; keys of other
// collectives (other ops, groups or bytes) give their own costs, as Start does.
TEST(CostModelNetwork, KnownCollectivesAreCostedOncePerKey) {
  int calls = 0, start_calls = 0;
  CostModelNetwork net(std::make_unique<CountingModel>(&calls), 1e9, 1e9);
  CostModelNetwork by_start(std::make_unique<CountingModel>(&start_calls), 1e9, 1e9);
  struct Known {
    CommOp op;
    std::vector<int> group;
    double bytes;
  };
  // Keys out of order and sparse: 9 before 0, none between 2 and 9.
  const std::vector<std::pair<uint32_t, Known>> keys = {{9, {CommOp::kAllReduce, {7, 8}, 10}},
                                                        {0, {CommOp::kAllGather, {7, 8}, 10}},
                                                        {2, {CommOp::kAllReduce, {1, 2, 3}, 20}},
                                                        {1, {CommOp::kAllReduce, {7, 8}, 20}}};
  Simulator sim, sim_start;
  for (int round = 0; round < 3; ++round) {
    for (const auto& [key, k] : keys) {
      int64_t known = -1, started = -1;
      const int64_t t0 = sim.Now().picoseconds(), t1 = sim_start.Now().picoseconds();
      net.StartKnown(sim, key, k.op, k.group, k.bytes,
                     [&] { known = sim.Now().picoseconds() - t0; }, {});
      by_start.Start(sim_start, k.op, k.group, k.bytes,
                     [&] { started = sim_start.Now().picoseconds() - t1; }, {});
      sim.Run();
      sim_start.Run();
      EXPECT_EQ(known, started) << "key " << key << " round " << round;
    }
  }
  EXPECT_EQ(calls, 4);
  EXPECT_EQ(sim.Now(), SimTime::Picoseconds(3 * (9'010 + 9'011 + 4'020 + 9'020)));
  EXPECT_DOUBLE_EQ(net.IntraNodeBytes(), by_start.IntraNodeBytes());
}

}  // namespace
}  // namespace meshsim

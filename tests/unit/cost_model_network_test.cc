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

}  // namespace
}  // namespace meshsim

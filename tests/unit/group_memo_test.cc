// GroupMemo: values found by where a group is stored, its op and bytes, and served only
// while the members stored there are the same.
#include "sim/net/group_memo.h"

#include <gtest/gtest.h>

#include <span>
#include <vector>

#include "sim/net/collective.h"
#include "sim/net/flow_plan.h"

namespace meshsim {
namespace {

using GroupPlanMemo = GroupMemo<const RoutedPlan*>;

// The plan stored for the group, or null.
const RoutedPlan* Lookup(const GroupPlanMemo& memo, CommOp op, std::span<const int> gpus,
                         double bytes) {
  const RoutedPlan* const* plan = memo.Find(op, gpus, bytes);
  return plan != nullptr ? *plan : nullptr;
}

TEST(GroupPlanMemo, FindsWhatWasStoredForTheSameGroupOpAndBytes) {
  GroupPlanMemo memo;
  const std::vector<int> group{0, 1, 2, 3};
  RoutedPlan a, b;
  EXPECT_EQ(Lookup(memo, CommOp::kAllReduce, group, 1e6), nullptr);
  memo.Store(CommOp::kAllReduce, group, 1e6, &a);
  memo.Store(CommOp::kAllGather, group, 1e6, &b);
  EXPECT_EQ(Lookup(memo, CommOp::kAllReduce, group, 1e6), &a);
  EXPECT_EQ(Lookup(memo, CommOp::kAllGather, group, 1e6), &b);
  EXPECT_EQ(Lookup(memo, CommOp::kAllReduce, group, 2e6), nullptr);
  // The same members stored elsewhere are another key.
  const std::vector<int> copy = group;
  EXPECT_EQ(Lookup(memo, CommOp::kAllReduce, copy, 1e6), nullptr);
}

TEST(GroupPlanMemo, OtherMembersAtTheSamePlaceMissAndReplace) {
  GroupPlanMemo memo;
  std::vector<int> group{0, 1, 2, 3};
  RoutedPlan a, b;
  memo.Store(CommOp::kAllReduce, group, 1e6, &a);
  group[2] = 7;  // same storage, other members
  EXPECT_EQ(Lookup(memo, CommOp::kAllReduce, group, 1e6), nullptr);
  memo.Store(CommOp::kAllReduce, group, 1e6, &b);
  EXPECT_EQ(Lookup(memo, CommOp::kAllReduce, group, 1e6), &b);
  group[2] = 2;
  EXPECT_EQ(Lookup(memo, CommOp::kAllReduce, group, 1e6), nullptr);
}

TEST(GroupPlanMemo, LargeGroupsAndManyKeysKeepTheirPlans) {
  GroupPlanMemo memo;
  // More keys than the first table holds (it grows), groups larger than the inline members.
  std::vector<std::vector<int>> groups;
  for (int g = 0; g < 3000; ++g) {
    std::vector<int> members;
    for (int i = 0; i < 1 + g % 20; ++i) members.push_back(g * 20 + i);
    groups.push_back(members);
  }
  std::vector<RoutedPlan> plans(groups.size());
  for (size_t g = 0; g < groups.size(); ++g) {
    memo.Store(CommOp::kReduceScatter, groups[g], 4096, &plans[g]);
  }
  for (size_t g = 0; g < groups.size(); ++g) {
    ASSERT_EQ(Lookup(memo, CommOp::kReduceScatter, groups[g], 4096), &plans[g]) << g;
  }
  groups[1999].back() += 1;  // 20 members: compared where they spill
  EXPECT_EQ(Lookup(memo, CommOp::kReduceScatter, groups[1999], 4096), nullptr);
}

// The cost model's memo keeps fewer members inline (its value is larger, the entry one
// cache line): groups on both sides of that limit keep their values and are compared.
TEST(GroupCostMemo, GroupsOfEverySizeKeepTheirCosts) {
  GroupMemo<CollectiveCost> memo;
  std::vector<std::vector<int>> groups;
  for (int g = 0; g < 2000; ++g) {
    std::vector<int> members;
    for (int i = 0; i < 1 + g % 12; ++i) members.push_back(g * 12 + i);
    groups.push_back(members);
  }
  for (size_t g = 0; g < groups.size(); ++g) {
    memo.Store(CommOp::kAllReduce, groups[g], 1e6,
               CollectiveCost{SimTime::Microseconds(static_cast<double>(g)), 1.0 * g, 2.0 * g});
  }
  for (size_t g = 0; g < groups.size(); ++g) {
    const CollectiveCost* c = memo.Find(CommOp::kAllReduce, groups[g], 1e6);
    ASSERT_NE(c, nullptr) << g;
    EXPECT_EQ(c->intra_node_bytes, 1.0 * g);
    EXPECT_EQ(c->inter_node_bytes, 2.0 * g);
  }
  for (size_t g : {3u, 4u, 5u, 11u}) {  // 4, 5, 6 and 12 members
    groups[g].back() += 1;
    EXPECT_EQ(memo.Find(CommOp::kAllReduce, groups[g], 1e6), nullptr) << g;
  }
}

}  // namespace
}  // namespace meshsim

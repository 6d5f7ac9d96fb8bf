// A Program's dependents lists built piecewise (Program::Seal after each rank, as the step
// builder does) are the lists one Finalize() builds from every edge at once: same
// dependents, in the order their edges were added, and the same replay.
#include <gtest/gtest.h>

#include <vector>

#include "sim/engine/replay.h"
#include "sim/engine/simulation.h"
#include "sim/report/summary.h"
#include "test_fixtures.h"
#include "tests/unit/experiment_step.h"

namespace meshsim {
namespace {

// Three ranks of a few kernels each, with dependencies inside each rank added out of
// order (a later op's edge before an earlier one's) and an op with no dependents; with
// `seal`, sealed after each rank.
Program ThreeRanks(bool seal) {
  Program p(3);
  for (int r = 0; r < 3; ++r) {
    std::vector<OpId> ids;
    for (int k = 0; k < 4 + r; ++k) {
      ids.push_back(p.AddCompute(r, Tag::kMlpFwd, KernelWork{1e9 * (k + 1), 0, 1}));
    }
    p.AddDep(ids[0], ids[3]);
    p.AddDep(ids[0], ids[1]);
    p.AddDep(ids[2], ids[3]);
    p.AddDep(ids[0], ids[2]);
    if (r == 2) p.AddDep(ids[1], ids[5]);
    if (seal) p.Seal();
  }
  p.Finalize();
  return p;
}

std::vector<std::vector<OpId>> ListsOf(const Program& p) {
  std::vector<std::vector<OpId>> lists;
  for (OpId id = 0; id < p.OpCount(); ++id) {
    lists.emplace_back(p.DependentsBegin(id), p.DependentsEnd(id));
  }
  return lists;
}

TEST(ProgramSeal, SealedListsAreTheListsOfOneFinalize) {
  const Program whole = ThreeRanks(false), sealed = ThreeRanks(true);
  ASSERT_EQ(whole.OpCount(), sealed.OpCount());
  EXPECT_EQ(ListsOf(sealed), ListsOf(whole));
  // Edges keep the order they were added in: op 0 of rank 0 released 3, then 1, then 2.
  EXPECT_EQ(ListsOf(sealed)[0], (std::vector<OpId>{3, 1, 2}));
  EXPECT_TRUE(ListsOf(sealed)[1].empty());
  EXPECT_EQ(sealed.DepCount(), whole.DepCount());
  EXPECT_EQ(sealed.DepCount(), 13u);
  EXPECT_EQ(sealed.SealedOps(), sealed.OpCount());
}

TEST(ProgramSeal, ASealedProgramReplaysAsTheWhole) {
  testing::FlopsOnlyComputeModel compute;
  testing::FreeNetwork network;
  const Program whole = ThreeRanks(false), sealed = ThreeRanks(true);
  const ReplayResult a = Replay(whole, compute, network);
  const ReplayResult b = Replay(sealed, compute, network);
  ASSERT_TRUE(b.completed) << b.stall;
  EXPECT_EQ(a.start, b.start);
  EXPECT_EQ(a.end, b.end);
  // Rank 0: op 3 waits for ops 0 and 2, which waits for 0: 1 + 3 + 4 us on one stream.
  EXPECT_EQ(b.end[3], SimTime::Picoseconds(10'000'000));
}

// An op with one dependent keeps it in its record; only ops with more have a list (its
// length, then its ops), so that most ops' dependents cost no list and no cache miss.
TEST(ProgramSeal, ALoneDependentLivesInItsRecord) {
  const Program p = ThreeRanks(true);
  // Rank 0: op 0 releases 3, 1 and 2; op 2 releases 3 alone; op 1 none.
  using Deps = ReplayRecord::Deps;
  EXPECT_EQ(p.Records()[0].deps(), Deps::kList);
  EXPECT_EQ(p.Records()[2].deps(), Deps::kOne);
  EXPECT_EQ(p.Records()[2].dependents, 3u);
  EXPECT_EQ(p.DependentsBegin(2), &p.Records()[2].dependents);
  EXPECT_EQ(p.Records()[1].deps(), Deps::kNone);
  // One list a rank (its op 0), of three ops each; the other six edges in records.
  EXPECT_EQ(p.DependentLists().size(), 3u * (1 + 3));
  EXPECT_EQ(p.DepCount(), 13u);
}

// Sealing is empty work when nothing was added since the last seal.
TEST(ProgramSeal, SealingTwiceChangesNothing) {
  Program p(1);
  const OpId a = p.AddCompute(0, Tag::kMlpFwd, KernelWork{1e9, 0, 1});
  const OpId b = p.AddCompute(0, Tag::kMlpFwd, KernelWork{1e9, 0, 1});
  p.AddDep(a, b);
  p.Seal();
  p.Seal();
  p.Finalize();
  ASSERT_EQ(p.DependentsEnd(a) - p.DependentsBegin(a), 1);
  EXPECT_EQ(*p.DependentsBegin(a), b);
  EXPECT_EQ(p.DependentsBegin(b), p.DependentsEnd(b));
}

// The step builder seals after each rank: every op is sealed and the replay completes
// (Program::AddDep asserts that no dependency leaves a sealed op; the golden runs and
// scripts/summary_md5.sh BIN --full-replay check that the numbers stay those of one Finalize()).
TEST(ProgramSeal, TheStepBuilderSealsEveryRank) {
  const auto sim = testing::DefaultFullReplay();
  EXPECT_TRUE(sim->replay.completed);
  EXPECT_EQ(sim->program.SealedOps(), sim->program.OpCount());
  EXPECT_GT(sim->program.DepCount(), sim->program.OpCount() / 2);
}

}  // namespace
}  // namespace meshsim

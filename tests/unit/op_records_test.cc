// A Program's op records: small (issue 14: at most 64 bytes each in a full replay), with
// each distinct work kept once in the program's table and shared by the ops that repeat
// it, and a replay that still times each op as its own rank runs it.
#include <gtest/gtest.h>

#include <cmath>

#include "sim/engine/replay.h"
#include "sim/engine/simulation.h"
#include "test_fixtures.h"
#include "tests/unit/experiment_step.h"

namespace meshsim {
namespace {

TEST(OpRecords, FitInSixtyFourBytes) {
  EXPECT_LE(sizeof(Op), 64u);
  EXPECT_EQ(sizeof(Op), 20u);
  // What the program keeps per op: its replay record and the rest.
  EXPECT_EQ(sizeof(ReplayRecord) + sizeof(OpInfo), 28u);
}

// Collectives of one kind over one group with the same bytes (by their bits) share one
// signature, which keeps those once; each collective keeps 16 bytes.
TEST(OpRecords, AlikeCollectivesShareOneSignature) {
  EXPECT_EQ(sizeof(CommRecord), 16u);
  Program p(4);
  const int32_t g = p.AddGroup({0, 1}), h = p.AddGroup({2, 3});
  const int32_t a = p.AddComm(CommOp::kAllReduce, g, 1e6);
  const int32_t other_op = p.AddComm(CommOp::kAllGather, g, 1e6);
  const int32_t other_group = p.AddComm(CommOp::kAllReduce, h, 1e6);
  const int32_t other_bytes = p.AddComm(CommOp::kAllReduce, g, 2e6);
  const int32_t again = p.AddComm(CommOp::kAllReduce, g, 1e6);
  const int32_t negative_zero = p.AddComm(CommOp::kAllReduce, g, -0.0);
  const int32_t zero = p.AddComm(CommOp::kAllReduce, g, 0.0);
  EXPECT_EQ(p.signatures().size(), 6u);
  EXPECT_EQ(p.comms()[again].signature, p.comms()[a].signature);
  EXPECT_NE(p.comms()[zero].signature, p.comms()[negative_zero].signature);
  for (int32_t c : {a, other_op, other_group, other_bytes, negative_zero}) {
    for (int32_t d : {a, other_op, other_group, other_bytes, negative_zero}) {
      if (c != d) {
        EXPECT_NE(p.comms()[c].signature, p.comms()[d].signature) << c << " " << d;
      }
    }
  }
  const Comm c = p.comms()[other_bytes];
  EXPECT_EQ(c.op, CommOp::kAllReduce);
  EXPECT_EQ(c.group, g);
  EXPECT_EQ(c.bytes, 2e6);
  EXPECT_EQ(p.works()[c.work].work.bytes, 2e6);
  EXPECT_EQ(p.comms()[other_group].group, h);
  EXPECT_EQ(p.comms()[other_op].op, CommOp::kAllGather);
  // Alike bytes share their work too, whichever collective made it.
  EXPECT_EQ(p.comms()[other_group].work, p.comms()[a].work);
  size_t n = 0;
  for (const Comm& each : p.comms()) {
    EXPECT_EQ(each.signature, p.comms()[static_cast<int32_t>(n)].signature);
    ++n;
  }
  EXPECT_EQ(n, p.comms().size());
}

// A collective's parts are listed together in the order they were added, whatever the
// order in which the ranks added parts of other collectives between them; a collective
// of several parts starts for all of them when its last part arrives.
TEST(OpRecords, ACollectivesPartsAreListedInTheOrderAdded) {
  Program p(3);
  const int32_t a = p.AddComm(CommOp::kAllReduce, p.AddGroup({0, 1, 2}), 1e6);
  const int32_t b = p.AddComm(CommOp::kAllGather, p.AddGroup({0, 2}), 1e6);
  const int32_t solo = p.AddComm(CommOp::kAllReduce, p.AddGroup({1}), 1e6);
  const OpId b0 = p.AddCommPart(0, Stream::kDp, b, Tag::kDpGradReduce);
  const OpId a0 = p.AddCommPart(0, Stream::kTp, a, Tag::kTpComm);
  const OpId slow = p.AddCompute(1, Tag::kMlpFwd, KernelWork{2e9, 0, 1, -1});  // 2 us
  const OpId a1 = p.AddCommPart(1, Stream::kTp, a, Tag::kTpComm);
  p.AddDep(slow, a1);
  const OpId s1 = p.AddCommPart(1, Stream::kDp, solo, Tag::kDpGradReduce);
  const OpId a2 = p.AddCommPart(2, Stream::kTp, a, Tag::kTpComm);
  const OpId b2 = p.AddCommPart(2, Stream::kDp, b, Tag::kDpGradReduce);
  p.Finalize();
  auto parts = [&p](int32_t c) {
    const Comm& comm = p.comms()[c];
    return std::vector<OpId>(p.PartsBegin(comm), p.PartsEnd(comm));
  };
  EXPECT_EQ(parts(a), (std::vector<OpId>{a0, a1, a2}));
  EXPECT_EQ(parts(b), (std::vector<OpId>{b0, b2}));
  EXPECT_EQ(parts(solo), (std::vector<OpId>{s1}));
  EXPECT_EQ(p.Records()[a0].kind(), ReplayRecord::Kind::kShared);
  EXPECT_EQ(p.Records()[s1].kind(), ReplayRecord::Kind::kSolo);
  testing::FlopsOnlyComputeModel compute;
  testing::FreeNetwork network;
  const ReplayResult r = Replay(p, compute, network);
  ASSERT_TRUE(r.completed) << r.stall;
  for (OpId part : {a0, a1, a2}) EXPECT_EQ(r.start[part], SimTime::Picoseconds(2'000'000));
  EXPECT_EQ(r.start[b0], SimTime::Zero());
  EXPECT_EQ(r.start[b2], SimTime::Zero());
}

TEST(OpRecords, OpsWithTheSameWorkShareOneEntry) {
  Program p(2);
  const KernelWork w{2e9, 1e6, 3, -1};
  const OpId a = p.AddCompute(0, Tag::kMlpFwd, w, 0, 0, 5e8);
  const OpId b = p.AddCompute(1, Tag::kMlpFwd, w, 1, 3, 5e8);
  const OpId c = p.AddCompute(1, Tag::kMlpFwd, w, 1, 4, 0);  // no recomputation
  EXPECT_EQ(p.op(a).work, p.op(b).work);
  EXPECT_NE(p.op(a).work, p.op(c).work);
  EXPECT_EQ(p.WorkOf(p.op(b)), w);
  EXPECT_EQ(p.RecomputeFlopsOf(p.op(b)), 5e8);
  EXPECT_EQ(p.RecomputeFlopsOf(p.op(c)), 0);
  EXPECT_EQ(p.op(b).layer, 1);
  EXPECT_EQ(p.op(b).micro_batch, 3);
  EXPECT_EQ(p.works().size(), 2u);
}

// Equal numbers with different bits (0 and -0) are kept apart: an entry stands for the
// exact values an op was given.
TEST(OpRecords, WorksAreEqualByTheirBits) {
  Program p(1);
  const OpId plus = p.AddCompute(0, Tag::kMlpFwd, KernelWork{0.0, 1, 1, -1});
  const OpId minus = p.AddCompute(0, Tag::kMlpFwd, KernelWork{-0.0, 1, 1, -1});
  EXPECT_NE(p.op(plus).work, p.op(minus).work);
  EXPECT_TRUE(std::signbit(p.WorkOf(p.op(minus)).flops));
}

TEST(OpRecords, MemoryAndCommOpsCarryTheirBytes) {
  Program p(2);
  const OpId alloc = p.AddMemory(0, Stream::kCompute, MemCategory::kActivations, 4096);
  const OpId release = p.AddMemory(0, Stream::kCompute, MemCategory::kActivations, -4096);
  const int32_t comm = p.AddComm(CommOp::kAllReduce, p.AddGroup({0, 1}), 1e6);
  const OpId part = p.AddCommPart(1, Stream::kTp, comm, Tag::kTpComm);
  EXPECT_EQ(p.WorkOf(p.op(alloc)).bytes, 4096);
  EXPECT_EQ(p.WorkOf(p.op(release)).bytes, -4096);
  EXPECT_EQ(p.WorkOf(p.op(part)).bytes, 1e6);
  EXPECT_EQ(p.op(part).comm, comm);
}

// Thousands of distinct works grow the table's index; every op keeps its own.
TEST(OpRecords, ManyDistinctWorksKeepTheirValues) {
  Program p(1);
  std::vector<OpId> ids;
  for (int i = 0; i < 5000; ++i) {
    ids.push_back(p.AddCompute(0, Tag::kMlpFwd, KernelWork{1e6 * (i % 2500), 0, 1, -1}));
  }
  EXPECT_EQ(p.works().size(), 2500u);
  for (int i = 0; i < 5000; ++i) EXPECT_EQ(p.WorkOf(p.op(ids[i])).flops, 1e6 * (i % 2500));
  EXPECT_EQ(p.op(ids[7]).work, p.op(ids[2507]).work);
}

// A step repeats its work across ranks, layers and micro-batches: a full replay holds
// far fewer distinct works than ops.
TEST(OpRecords, AFullReplayStepSharesItsWork) {
  const auto sim = testing::DefaultFullReplay();
  const Program& p = sim->program;
  EXPECT_GT(p.OpCount(), 10'000u);
  EXPECT_LT(p.works().size() * 50, p.OpCount());
}

// Ranks sharing a work still run at their own speed: a straggler's op takes longer.
TEST(OpRecords, SharedWorkRunsAtEachRanksSpeed) {
  Program p(2);
  const OpId fast = p.AddCompute(0, Tag::kMlpFwd, KernelWork{2e9, 0, 1, -1});  // 2 us
  const OpId slow = p.AddCompute(1, Tag::kMlpFwd, KernelWork{2e9, 0, 1, -1});
  p.Finalize();
  ASSERT_EQ(p.op(fast).work, p.op(slow).work);
  testing::FlopsOnlyComputeModel compute;
  testing::FreeNetwork network;
  ReplayOptions options;
  options.compute_slowdown = {1.0, 1.5};
  const ReplayResult r = Replay(p, compute, network, options);
  ASSERT_TRUE(r.completed) << r.stall;
  EXPECT_EQ(r.end[fast], SimTime::Picoseconds(2'000'000));
  EXPECT_EQ(r.end[slow], SimTime::Picoseconds(3'000'000));
}

}  // namespace
}  // namespace meshsim

// A second compute stream of the GPU (Stream::kSideCompute, ReplayOptions::
// side_stream_slowdown): hand-worked timelines on a fake compute model (1 us per 1e9 FLOPs).
#include <gtest/gtest.h>

#include "sim/engine/replay.h"
#include "tests/unit/fixed_time_network.h"
#include "tests/unit/test_fixtures.h"

namespace meshsim {
namespace {

ReplayResult ReplayWith(const Program& p, double side_slowdown) {
  testing::FlopsOnlyComputeModel compute;
  FixedTimeNetwork network{SimTime::Microseconds(4)};
  ReplayOptions options;
  options.side_stream_slowdown = side_slowdown;
  return Replay(p, compute, network, options);
}

// Kernel A (2 us), then B (10 us) on the compute stream and, after A, a side kernel S of
// 4 us: S and B share the GPU from 2 us.
struct Beside {
  Program program{1};
  OpId a, b, s;
};
Beside SideBesideKernel() {
  Beside x;
  x.a = x.program.AddCompute(0, Tag::kMlpFwd, KernelWork{2e9, 0, 1});
  x.b = x.program.AddCompute(0, Tag::kMlpFwd, KernelWork{10e9, 0, 1});
  x.s = x.program.AddSideCompute(0, Tag::kMoeStash, KernelWork{4e9, 0, 1});
  x.program.AddDep(x.a, x.s);
  x.program.Finalize();
  return x;
}

TEST(SideStream, SharesTheGpuWithTheComputeStream) {
  const Beside x = SideBesideKernel();
  const ReplayResult r = ReplayWith(x.program, 1.0);
  ASSERT_TRUE(r.completed) << r.stall;
  // From 2 us both run at half rate: S's 4 us end at 10 us, by when B has done 4 of its
  // 10; B's other 6 at full rate end it at 16 us: as if S had run between A and B.
  EXPECT_EQ(r.start[x.s], SimTime::Microseconds(2));
  EXPECT_EQ(r.end[x.s], SimTime::Microseconds(10));
  EXPECT_EQ(r.end[x.b], SimTime::Microseconds(16));
  EXPECT_EQ(r.Interference(x.program, x.b), SimTime::Microseconds(4));
  // At 0.25 each runs at 1 / 1.25 beside the other: S ends at 7 us (B has done 4 us), B
  // at 7 + 6 = 13 us.
  const ReplayResult q = ReplayWith(x.program, 0.25);
  EXPECT_EQ(q.end[x.s], SimTime::Microseconds(7));
  EXPECT_EQ(q.end[x.b], SimTime::Microseconds(13));
}

TEST(SideStream, RunsAtItsOwnRateWhileTheComputeStreamIsIdle) {
  // B waits for a 4 us collective that starts after A; S runs alone in that gap.
  Program p(1);
  const OpId a = p.AddCompute(0, Tag::kMlpFwd, KernelWork{2e9, 0, 1});
  const int32_t c = p.AddComm(CommOp::kAllToAll, p.AddGroup({0}), 1e6);
  const OpId comm = p.AddCommPart(0, Stream::kEp, c, Tag::kEpComm);
  p.AddDep(a, comm);
  const OpId s = p.AddSideCompute(0, Tag::kMoeStash, KernelWork{3e9, 0, 1});
  p.AddDep(a, s);
  const OpId b = p.AddCompute(0, Tag::kMlpFwd, KernelWork{10e9, 0, 1});
  p.AddDep(comm, b);
  p.Finalize();
  const ReplayResult r = ReplayWith(p, 1.0);
  ASSERT_TRUE(r.completed) << r.stall;
  EXPECT_EQ(r.end[s], SimTime::Microseconds(5));
  EXPECT_EQ(r.start[b], SimTime::Microseconds(6));
  EXPECT_EQ(r.end[b], SimTime::Microseconds(16));
  EXPECT_EQ(r.Interference(p, b), SimTime::Zero());
}

TEST(SideStream, AtZeroTheTwoDoNotShare) {
  const Beside x = SideBesideKernel();
  const ReplayResult r = ReplayWith(x.program, 0.0);
  EXPECT_EQ(r.end[x.s], SimTime::Microseconds(6));
  EXPECT_EQ(r.end[x.b], SimTime::Microseconds(12));
}

}  // namespace
}  // namespace meshsim

// Program::InterleaveRanks lays op ids out group by group, op k of each of a group's ranks
// side by side; each rank's ops, queues, dependents lists and collectives' parts keep their
// order, and a replay of either layout gives the same times and the same step summary.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "sim/config/loader.h"
#include "sim/engine/replay.h"
#include "sim/engine/simulation.h"
#include "sim/engine/step_stats.h"
#include "sim/report/step_summary.h"
#include "sim/report/summary.h"
#include "sim/schedule/step_builder.h"
#include "tests/unit/test_fixtures.h"

namespace meshsim {
namespace {

// Four ranks, one after another (as StepBuilder emits them): ranks 0 and 1 share a
// collective, as do 2 and 3; 0 sends to 2 and 1 to 3. Ranks 0 and 1 have 26 ops each,
// 2 and 3 27; allocations and frees on the compute queue, the sends' waits across queues.
// `interleave`: after adding rank r (its ops sealed), Program::InterleaveAdded from the
// first op of rank interleave[r] (-1: none); `interleaved` gets what each call returned.
Program FourRanks(const std::vector<int>& interleave = {},
                  std::vector<bool>* interleaved = nullptr) {
  Program p(4);
  std::vector<OpId> first(4, kNoOp);
  const int32_t tp[2] = {p.AddComm(CommOp::kAllReduce, p.AddGroup({0, 1}), 1e6),
                         p.AddComm(CommOp::kAllReduce, p.AddGroup({2, 3}), 2e6)};
  const int32_t pp[2] = {p.AddComm(CommOp::kSendRecv, p.AddGroup({0, 2}), 3e6),
                         p.AddComm(CommOp::kSendRecv, p.AddGroup({1, 3}), 3e6)};
  for (int r = 0; r < 4; ++r) {
    const double bytes = 100.0 * (r + 1);
    first[r] = static_cast<OpId>(p.OpCount());
    p.AddMemory(r, Stream::kCompute, MemCategory::kActivations, bytes);
    for (int k = 0; k < 20; ++k) {
      p.AddCompute(r, Tag::kAttentionFwd, KernelWork{1e8 * (k + r + 1), 0, 1}, k);
    }
    const OpId fwd = p.AddCompute(r, Tag::kMlpFwd, KernelWork{1e9 * (r + 1), 0, 1}, 0, r);
    const OpId part = p.AddCommPart(r, Stream::kTp, tp[r / 2], Tag::kTpComm, 0, r);
    p.AddDep(fwd, part);
    const OpId bwd = p.AddCompute(r, Tag::kMlpBwd, KernelWork{2e9 * (4 - r), 0, 1}, 1, r);
    p.AddDep(part, bwd);
    if (r < 2) {
      p.AddDep(bwd, p.AddCommPart(r, Stream::kSendNext, pp[r], Tag::kPpActivation));
    } else {
      const OpId recv = p.AddCommPart(r, Stream::kRecvPrev, pp[r - 2], Tag::kPpActivation);
      const OpId last = p.AddCompute(r, Tag::kMlpWgrad, KernelWork{3e9, 0, 1});
      p.AddDep(recv, last);
      p.AddDep(bwd, last);
    }
    p.AddMemory(r, Stream::kCompute, MemCategory::kActivations, -bytes);
    p.Seal();
    if (r < static_cast<int>(interleave.size()) && interleave[r] >= 0) {
      const bool done = p.InterleaveAdded(first[interleave[r]]);
      if (interleaved) interleaved->push_back(done);
    }
  }
  p.Finalize();
  return p;
}

// The ranks of ops in id order, as runs: (rank, how many ops in a row).
std::vector<std::pair<int, int>> RankRuns(const Program& p) {
  std::vector<std::pair<int, int>> runs;
  for (OpId id = 0; id < p.OpCount(); ++id) {
    const int r = p.Records()[id].rank();
    if (runs.empty() || runs.back().first != r) runs.emplace_back(r, 0);
    ++runs.back().second;
  }
  return runs;
}

// Per rank, its ops in id order.
std::vector<std::vector<OpId>> RankOps(const Program& p) {
  std::vector<std::vector<OpId>> out(p.Ranks());
  for (OpId id = 0; id < p.OpCount(); ++id) out[p.Records()[id].rank()].push_back(id);
  return out;
}

// old id -> new id, pairing each rank's k-th ops.
std::vector<OpId> Mapping(const Program& before, const Program& after) {
  const auto a = RankOps(before), b = RankOps(after);
  std::vector<OpId> to(before.OpCount(), kNoOp);
  for (size_t r = 0; r < a.size(); ++r) {
    EXPECT_EQ(a[r].size(), b[r].size()) << "rank " << r;
    for (size_t k = 0; k < a[r].size() && k < b[r].size(); ++k) to[a[r][k]] = b[r][k];
  }
  return to;
}

bool SameOp(const Program& pa, OpId a, const Program& pb, OpId b) {
  const Op x = pa.op(a), y = pb.op(b);
  return x.kind == y.kind && x.stream == y.stream && x.tag == y.tag && x.category == y.category &&
         x.rank == y.rank && x.layer == y.layer && x.micro_batch == y.micro_batch &&
         pa.WorkOf(x).flops == pb.WorkOf(y).flops && pa.WorkOf(x).bytes == pb.WorkOf(y).bytes;
}

bool SameComm(const Comm& a, const Comm& b) {
  return a.op == b.op && a.group == b.group && a.bytes == b.bytes && a.parts == b.parts;
}

std::vector<OpId> Mapped(const std::vector<OpId>& to, const OpId* begin, const OpId* end) {
  std::vector<OpId> out;
  for (const OpId* i = begin; i != end; ++i) out.push_back(to[*i]);
  return out;
}

// Every op, queue, dependents list and collective of `before` is `after`'s under `to`.
void ExpectSameProgram(const Program& before, const Program& after, const std::vector<OpId>& to) {
  ASSERT_EQ(before.OpCount(), after.OpCount());
  for (OpId id = 0; id < before.OpCount(); ++id) {
    EXPECT_TRUE(SameOp(before, id, after, to[id])) << "op " << id;
    EXPECT_EQ(Mapped(to, before.DependentsBegin(id), before.DependentsEnd(id)),
              std::vector<OpId>(after.DependentsBegin(to[id]), after.DependentsEnd(to[id])))
        << "dependents of op " << id;
    EXPECT_EQ(before.Records()[id].pending, after.Records()[to[id]].pending) << "op " << id;
  }
  for (int r = 0; r < before.Ranks(); ++r) {
    for (int s = 0; s < kStreamCount; ++s) {
      std::vector<OpId> qa, qb;
      for (OpId id : before.StreamOps(r, static_cast<Stream>(s))) qa.push_back(to[id]);
      for (OpId id : after.StreamOps(r, static_cast<Stream>(s))) qb.push_back(id);
      EXPECT_EQ(qa, qb) << "rank " << r << " stream " << s;
    }
  }
  // Collectives may be renumbered: each part's collective is the same one, with its parts
  // in the same order.
  ASSERT_EQ(before.comms().size(), after.comms().size());
  for (OpId id = 0; id < before.OpCount(); ++id) {
    const Op x = before.op(id), y = after.op(to[id]);
    if (x.kind != OpKind::kComm) continue;
    const Comm &ca = before.comms()[x.comm], &cb = after.comms()[y.comm];
    EXPECT_TRUE(SameComm(ca, cb)) << "collective of op " << id;
    EXPECT_EQ(Mapped(to, before.PartsBegin(ca), before.PartsEnd(ca)),
              std::vector<OpId>(after.PartsBegin(cb), after.PartsEnd(cb)))
        << "parts of the collective of op " << id;
  }
}

// Collectives follow their first parts: the collective of ranks 0 and 1, then 0's send
// and 1's (ranks 2 and 3 come later), then that of ranks 2 and 3.
TEST(ProgramInterleave, RenumbersCollectivesByTheirFirstPart) {
  Program p = FourRanks();
  ASSERT_TRUE(p.InterleaveRanks({{0, 1}, {2, 3}}));
  std::vector<int32_t> order;
  for (OpId id = 0; id < p.OpCount(); ++id) {
    const Op op = p.op(id);
    if (op.kind == OpKind::kComm && (order.empty() || order.back() < op.comm)) {
      order.push_back(op.comm);
    }
  }
  EXPECT_EQ(order, (std::vector<int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(p.comms()[0].bytes, 1e6);
  EXPECT_EQ(p.comms()[1].op, CommOp::kSendRecv);
  EXPECT_EQ(p.comms()[3].bytes, 2e6);
}

// Ranks' ops in the order listed (0 then 1, 2 then 3), one op of each rank in turn.
std::vector<int> Alternating(std::vector<std::pair<std::vector<int>, int>> groups) {
  std::vector<int> ranks;
  for (const auto& [group, ops] : groups) {
    for (int k = 0; k < ops; ++k) ranks.insert(ranks.end(), group.begin(), group.end());
  }
  return ranks;
}

std::vector<int> RanksInIdOrder(const Program& p) {
  std::vector<int> ranks;
  for (OpId id = 0; id < p.OpCount(); ++id) ranks.push_back(p.Records()[id].rank());
  return ranks;
}

TEST(ProgramInterleave, GroupsRanksOpByOp) {
  Program p = FourRanks();
  EXPECT_EQ(RankRuns(p), (std::vector<std::pair<int, int>>{{0, 26}, {1, 26}, {2, 27}, {3, 27}}));
  ASSERT_TRUE(p.InterleaveRanks({{0, 1}, {2, 3}}));
  EXPECT_EQ(RanksInIdOrder(p), Alternating({{{0, 1}, 26}, {{2, 3}, 27}}));
}

TEST(ProgramInterleave, KeepsEveryOrder) {
  const Program before = FourRanks();
  Program after = FourRanks();
  ASSERT_TRUE(after.InterleaveRanks({{0, 1}, {2, 3}}));
  ExpectSameProgram(before, after, Mapping(before, after));
}

// A group listed in another order interleaves in that order; ranks in no group follow.
TEST(ProgramInterleave, GroupOrderAndRanksLeftOut) {
  const Program before = FourRanks();
  Program after = FourRanks();
  ASSERT_TRUE(after.InterleaveRanks({{3, 2}}));
  EXPECT_EQ(RanksInIdOrder(after), Alternating({{{3, 2}, 27}, {{0}, 26}, {{1}, 26}}));
  ExpectSameProgram(before, after, Mapping(before, after));
}

// Nothing to interleave: groups of one rank, ranks of unequal op counts, a rank twice.
TEST(ProgramInterleave, LeavesAProgramItCannotInterleave) {
  Program p = FourRanks();
  EXPECT_FALSE(p.InterleaveRanks({{0}, {1}, {2}, {3}}));
  EXPECT_FALSE(p.InterleaveRanks({{0, 2}}));
  EXPECT_FALSE(p.InterleaveRanks({{0, 0}}));
  ExpectSameProgram(FourRanks(), p, Mapping(FourRanks(), p));
  for (OpId id = 0; id < p.OpCount(); ++id) EXPECT_EQ(Mapping(FourRanks(), p)[id], id);
}

TEST(ProgramInterleave, ReplaysAsBefore) {
  testing::FlopsOnlyComputeModel compute;
  testing::FreeNetwork network;
  const Program before = FourRanks();
  Program after = FourRanks();
  ASSERT_TRUE(after.InterleaveRanks({{0, 1}, {2, 3}}));
  const ReplayResult a = Replay(before, compute, network);
  const ReplayResult b = Replay(after, compute, network);
  ASSERT_TRUE(a.completed && b.completed) << a.stall << b.stall;
  const std::vector<OpId> to = Mapping(before, after);
  for (OpId id = 0; id < before.OpCount(); ++id) {
    EXPECT_EQ(a.start[id], b.start[to[id]]) << "op " << id;
    EXPECT_EQ(a.end[id], b.end[to[id]]) << "op " << id;
  }
  EXPECT_EQ(a.step_time, b.step_time);
  for (int r = 0; r < 4; ++r) EXPECT_EQ(a.memory[r].peak_bytes, b.memory[r].peak_bytes);
}

// `p` added again rank after rank, each rank's ops in id order: the layout StepBuilder
// emits, before InterleaveRanks. Groups, collectives and shapes keep their indices.
Program RankAfterRank(const Program& p) {
  Program q(p.Ranks());
  q.SetExpertRouting(p.expert_routing());
  for (size_t s = 0; s < p.ShapesCount(); ++s) {
    q.AddShapes(*p.ShapesOf(KernelWork{0, 0, 1, static_cast<int32_t>(s)}));
  }
  for (const std::vector<int>& g : p.groups()) q.AddGroup(g);
  for (const Comm& c : p.comms()) q.AddComm(c.op, c.group, c.bytes);
  std::vector<OpId> to(p.OpCount(), kNoOp);
  for (const std::vector<OpId>& ids : RankOps(p)) {
    for (OpId id : ids) {
      const Op op = p.op(id);
      if (op.kind == OpKind::kMemory) {
        to[id] = q.AddMemory(op.rank, op.stream, op.category, p.WorkOf(op).bytes);
      } else if (op.kind == OpKind::kComm) {
        to[id] = q.AddCommPart(op.rank, op.stream, op.comm, op.tag, op.layer, op.micro_batch);
      } else {
        const OpWork& w = p.works()[p.WorkIndexOf(op)];
        to[id] = op.stream == Stream::kHost
                     ? q.AddHost(op.rank, op.tag, w.work.kernels, op.layer, op.micro_batch)
                     : q.AddCompute(op.rank, op.tag, w.work, op.layer, op.micro_batch,
                                    w.recompute_flops);
      }
    }
    for (OpId id : ids) {
      for (const OpId* d = p.DependentsBegin(id); d != p.DependentsEnd(id); ++d) {
        q.AddDep(to[id], to[*d]);
      }
    }
    q.Seal();
  }
  q.Finalize();
  return q;
}

// The two programs are the same bits: every op's record and info, the dependents lists,
// the queues, and every collective (by index) with its parts.
void ExpectSameLayout(const Program& a, const Program& b) {
  ASSERT_EQ(a.OpCount(), b.OpCount());
  for (OpId id = 0; id <= a.OpCount(); ++id) {
    const ReplayRecord &x = a.Records()[id], &y = b.Records()[id];
    EXPECT_EQ(x.dependents, y.dependents) << "op " << id;
    EXPECT_EQ(x.deps(), y.deps()) << "op " << id;
    if (id == a.OpCount()) break;
    if (x.kind() == ReplayRecord::Kind::kShared || x.kind() == ReplayRecord::Kind::kSolo) {
      EXPECT_EQ(x.ref, y.ref) << "op " << id;  // the collective
    } else {  // the work (a program built otherwise may number works otherwise)
      const OpWork &u = a.works()[x.ref], &v = b.works()[y.ref];
      EXPECT_EQ(u.work.flops, v.work.flops) << "op " << id;
      EXPECT_EQ(u.work.bytes, v.work.bytes) << "op " << id;
      EXPECT_EQ(u.work.kernels, v.work.kernels) << "op " << id;
      EXPECT_EQ(u.work.shapes, v.work.shapes) << "op " << id;
      EXPECT_EQ(u.recompute_flops, v.recompute_flops) << "op " << id;
    }
    EXPECT_EQ(x.next_in_queue, y.next_in_queue) << "op " << id;
    EXPECT_EQ(x.queue, y.queue) << "op " << id;
    EXPECT_EQ(x.kind(), y.kind()) << "op " << id;
    EXPECT_EQ(x.category(), y.category()) << "op " << id;
    EXPECT_EQ(x.pending, y.pending) << "op " << id;
    EXPECT_EQ(a.Info(id).tag, b.Info(id).tag) << "op " << id;
    EXPECT_EQ(a.Info(id).layer, b.Info(id).layer) << "op " << id;
    EXPECT_EQ(a.Info(id).micro_batch, b.Info(id).micro_batch) << "op " << id;
  }
  EXPECT_EQ(a.DependentLists(), b.DependentLists());
  for (size_t q = 0; q < static_cast<size_t>(a.Ranks()) * kStreamCount; ++q) {
    EXPECT_EQ(a.StreamHead(q), b.StreamHead(q)) << "queue " << q;
  }
  ASSERT_EQ(a.comms().size(), b.comms().size());
  for (size_t c = 0; c < a.comms().size(); ++c) {
    const Comm &x = a.comms()[c], &y = b.comms()[c];
    EXPECT_TRUE(SameComm(x, y)) << "collective " << c;
    EXPECT_EQ(std::vector<OpId>(a.PartsBegin(x), a.PartsEnd(x)),
              std::vector<OpId>(b.PartsBegin(y), b.PartsEnd(y)))
        << "parts of collective " << c;
  }
}

// Interleaving each group as its last rank is added gives the program InterleaveRanks gives
// after Finalize: the same ids, lists, queues, collective numbers and parts (and the send of
// rank 0, whose collective's second part comes after the move, shared).
TEST(ProgramInterleave, InterleavedAsAddedIsInterleavedAfter) {
  Program after = FourRanks();
  ASSERT_TRUE(after.InterleaveRanks({{0, 1}, {2, 3}}));
  std::vector<bool> done;
  const Program added = FourRanks({-1, 0, -1, 2}, &done);
  EXPECT_EQ(done, (std::vector<bool>{true, true}));
  EXPECT_EQ(RanksInIdOrder(added), Alternating({{{0, 1}, 26}, {{2, 3}, 27}}));
  ExpectSameLayout(after, added);
  const Program before = FourRanks();
  ExpectSameProgram(before, added, Mapping(before, added));
  int shared = 0;
  for (OpId id = 0; id < added.OpCount(); ++id) {
    shared += added.Records()[id].kind() == ReplayRecord::Kind::kShared;
  }
  EXPECT_EQ(shared, 8);  // every part: each collective has two
}

// Not interleaved: one rank, ranks of unequal op counts (1 and 2), a dependency across
// ranks; the program stays as added.
TEST(ProgramInterleave, InterleaveAddedLeavesWhatItCannot) {
  std::vector<bool> done;
  const Program p = FourRanks({0, -1, 1, -1}, &done);
  EXPECT_EQ(done, (std::vector<bool>{false, false}));
  ExpectSameLayout(FourRanks(), p);
  Program q(2);
  for (int r = 0; r < 2; ++r) {
    q.AddCompute(r, Tag::kMlpFwd, KernelWork{1e9, 0, 1});
    q.AddCompute(r, Tag::kMlpBwd, KernelWork{1e9, 0, 1});
  }
  q.AddDep(0, 3);
  q.Seal();
  EXPECT_FALSE(q.InterleaveAdded(0));
  q.Finalize();
  EXPECT_EQ(RanksInIdOrder(q), (std::vector<int>{0, 0, 1, 1}));
}

std::string SummaryText(const Experiment& e, const Mesh& mesh, Program program) {
  testing::FlopsOnlyComputeModel compute;
  testing::FreeNetwork network;
  std::vector<int> ranks(mesh.Size());
  for (int r = 0; r < mesh.Size(); ++r) ranks[r] = r;
  ReplayResult replay = Replay(program, compute, network);
  StepStats stats = AnalyzeStep(program, replay, ranks);
  Simulation sim{
      e, Mesh(e.plan), std::move(program), std::move(replay), std::move(stats), ranks, ranks, 0};
  std::ostringstream out;
  WriteSummaryText(SummarizeStep(sim, SummaryOptions{true}), out);
  return out.str();
}

// The bundled default experiment (tp 2, pp 4, dp 2) in full replay: the step program comes
// interleaved by pipeline stage, and its summary is the one of the rank-after-rank layout.
TEST(ProgramInterleave, AStepProgramSummarizesAsRankAfterRank) {
  Result<Experiment> e = LoadExperimentFile(
      std::string(MESHSIM_SOURCE_DIR) + "/workloads/experiments/default.yaml", {});
  ASSERT_TRUE(e.ok()) << e.error().ToString();
  const Mesh mesh(e.value().plan);
  Program built = BuildStepProgram(e.value().model, e.value().plan, e.value().training, mesh);
  // Ops 0 and 1 are the first ops of two ranks of stage 0.
  const int r0 = built.Records()[0].rank(), r1 = built.Records()[1].rank();
  EXPECT_NE(r0, r1);
  EXPECT_EQ(mesh.CoordsOf(r0).pp, mesh.CoordsOf(r1).pp);
  Program linear = RankAfterRank(built);
  ExpectSameProgram(linear, built, Mapping(linear, built));
  const std::string a = SummaryText(e.value(), mesh, std::move(linear));
  const std::string b = SummaryText(e.value(), mesh, std::move(built));
  EXPECT_GT(a.size(), 1000u);
  EXPECT_EQ(a, b);
}

// BuildStepProgram interleaves each stage as its ranks are added (full replay of the bundled
// default experiment: the pp axis outermost): the program is the one its ops added rank after
// rank and then interleaved by stage give, bit for bit.
TEST(ProgramInterleave, AStepProgramIsInterleavedAsBuilt) {
  Result<Experiment> e = LoadExperimentFile(
      std::string(MESHSIM_SOURCE_DIR) + "/workloads/experiments/default.yaml", {});
  ASSERT_TRUE(e.ok()) << e.error().ToString();
  const Mesh mesh(e.value().plan);
  const Program built = BuildStepProgram(e.value().model, e.value().plan, e.value().training, mesh);
  Program renumbered = RankAfterRank(built);
  std::vector<std::vector<int>> stages(mesh.Degree(Axis::kPp));
  for (int r = 0; r < mesh.Size(); ++r) stages[mesh.CoordsOf(r).pp].push_back(r);
  ASSERT_TRUE(renumbered.InterleaveRanks(stages));
  ExpectSameLayout(renumbered, built);
}

// Each stage's ranks of the default experiment in full replay have the same infos op for
// op: the program keeps them once a stage (Program::Info gives each op its own, as the
// layout check above compares), and marks the optimizer step's kernels in their records.
TEST(ProgramInterleave, AStageKeepsItsRanksInfosOnce) {
  Result<Experiment> e = LoadExperimentFile(
      std::string(MESHSIM_SOURCE_DIR) + "/workloads/experiments/default.yaml", {});
  ASSERT_TRUE(e.ok()) << e.error().ToString();
  const Mesh mesh(e.value().plan);
  const Program built = BuildStepProgram(e.value().model, e.value().plan, e.value().training, mesh);
  const int ranks_per_stage = mesh.Size() / mesh.Degree(Axis::kPp);
  ASSERT_GT(ranks_per_stage, 1);
  EXPECT_EQ(built.InfoCount() * ranks_per_stage, built.OpCount());
  const Program linear = RankAfterRank(built);
  EXPECT_EQ(linear.InfoCount(), linear.OpCount());
  int optimizer = 0;
  for (OpId id = 0; id < built.OpCount(); ++id) {
    const ReplayRecord& r = built.Records()[id];
    const bool step =
        r.kind() == ReplayRecord::Kind::kCompute && built.Info(id).tag == Tag::kOptimizerStep;
    EXPECT_EQ(r.kind() == ReplayRecord::Kind::kCompute && r.optimizer(), step) << "op " << id;
    optimizer += step;
  }
  EXPECT_GE(optimizer, mesh.Size());
}

// The per-rank stats of two analyses, bit for bit.
void ExpectSameStats(const StepStats& a, const StepStats& b) {
  EXPECT_EQ(a.pipeline_end_s, b.pipeline_end_s);
  EXPECT_EQ(a.bubble_fraction, b.bubble_fraction);
  EXPECT_EQ(a.critical_rank, b.critical_rank);
  ASSERT_EQ(a.ranks.size(), b.ranks.size());
  for (size_t r = 0; r < a.ranks.size(); ++r) {
    const RankStats &x = a.ranks[r], &y = b.ranks[r];
    EXPECT_EQ(x.compute_busy_s, y.compute_busy_s) << "rank " << r;
    EXPECT_EQ(x.comm_busy_s, y.comm_busy_s) << "rank " << r;
    EXPECT_EQ(x.pipeline_idle_s, y.pipeline_idle_s) << "rank " << r;
    EXPECT_EQ(x.sent_bytes, y.sent_bytes) << "rank " << r;
    EXPECT_EQ(x.model_flops, y.model_flops) << "rank " << r;
    EXPECT_EQ(x.recompute_flops, y.recompute_flops) << "rank " << r;
    const TimeBreakdown &p = x.breakdown, &q = y.breakdown;
    EXPECT_EQ(p.compute_s, q.compute_s) << "rank " << r;
    EXPECT_EQ(p.interference_s, q.interference_s) << "rank " << r;
    EXPECT_EQ(p.exposed_tp_s, q.exposed_tp_s) << "rank " << r;
    EXPECT_EQ(p.exposed_pp_s, q.exposed_pp_s) << "rank " << r;
    EXPECT_EQ(p.exposed_dp_s, q.exposed_dp_s) << "rank " << r;
    EXPECT_EQ(p.bubble_s, q.bubble_s) << "rank " << r;
    EXPECT_EQ(p.optimizer_s, q.optimizer_s) << "rank " << r;
  }
}

// AnalyzeStep walks the ops in id order, the ranks of a stage side by side once they
// interleave: a subset of the ranks, listed out of order and one of them twice, gives
// each rank the stats of the rank-after-rank layout, and the other ranks none.
TEST(ProgramInterleave, AnalysesASubsetOfRanksAsRankAfterRank) {
  Result<Experiment> e = LoadExperimentFile(
      std::string(MESHSIM_SOURCE_DIR) + "/workloads/experiments/default.yaml", {});
  ASSERT_TRUE(e.ok()) << e.error().ToString();
  const Mesh mesh(e.value().plan);
  const Program built = BuildStepProgram(e.value().model, e.value().plan, e.value().training, mesh);
  ASSERT_NE(built.Records()[0].rank(), built.Records()[1].rank());  // interleaved
  const Program linear = RankAfterRank(built);
  testing::FlopsOnlyComputeModel compute;
  testing::FreeNetwork network;
  const ReplayResult a = Replay(linear, compute, network);
  const ReplayResult b = Replay(built, compute, network);
  ASSERT_TRUE(a.completed && b.completed) << a.stall << b.stall;
  const std::vector<int> some = {mesh.Size() - 1, 2, 0, 5, 2};
  const StepStats x = AnalyzeStep(linear, a, some), y = AnalyzeStep(built, b, some);
  ExpectSameStats(x, y);
  EXPECT_GT(y.ranks[5].compute_busy_s, 0);
  EXPECT_EQ(y.ranks[1].compute_busy_s, 0);  // not analysed
  ExpectSameStats(AnalyzeStep(linear, a), AnalyzeStep(built, b));
}

// The replay gathers each rank's last pass end as its compute ops finish
// (ReplayResult::last_pass_end) and the program keeps each queue's last op: from them the
// analysis gives the stats of a pass over every op's record and end (its fallback for a
// result without them), and the gathered ends are that pass's.
TEST(ProgramInterleave, AnalysisFromTheReplaysPassEndsIsTheScans) {
  Result<Experiment> e = LoadExperimentFile(
      std::string(MESHSIM_SOURCE_DIR) + "/workloads/experiments/default.yaml", {});
  ASSERT_TRUE(e.ok()) << e.error().ToString();
  const Mesh mesh(e.value().plan);
  const Program built = BuildStepProgram(e.value().model, e.value().plan, e.value().training, mesh);
  testing::FlopsOnlyComputeModel compute;
  testing::FreeNetwork network;
  const ReplayResult gathered = Replay(built, compute, network);
  ASSERT_TRUE(gathered.completed) << gathered.stall;
  ASSERT_EQ(gathered.last_pass_end.size(), static_cast<size_t>(built.Ranks()));
  std::vector<int64_t> scanned(built.Ranks(), 0);
  for (OpId id = 0; id < built.OpCount(); ++id) {
    const ReplayRecord& r = built.Records()[id];
    if (r.kind() != ReplayRecord::Kind::kCompute || r.optimizer() ||
        r.queue % kStreamCount != static_cast<uint32_t>(Stream::kCompute)) {
      continue;
    }
    scanned[r.rank()] = std::max(scanned[r.rank()], gathered.end[id].picoseconds());
  }
  EXPECT_EQ(gathered.last_pass_end, scanned);
  EXPECT_GT(*std::max_element(scanned.begin(), scanned.end()), 0);
  ReplayResult without = gathered;
  without.last_pass_end.clear();
  ExpectSameStats(AnalyzeStep(built, gathered), AnalyzeStep(built, without));
}

// An analysed rank without ops (BuildStepProgram emitted one pipeline) is idle throughout.
TEST(ProgramInterleave, AnalysesARankWithoutOpsAsIdle) {
  Result<Experiment> e = LoadExperimentFile(
      std::string(MESHSIM_SOURCE_DIR) + "/workloads/experiments/default.yaml", {});
  ASSERT_TRUE(e.ok()) << e.error().ToString();
  const Mesh mesh(e.value().plan);
  const std::vector<int> pipeline = mesh.Pipeline(0);
  const Program p =
      BuildStepProgram(e.value().model, e.value().plan, e.value().training, mesh, pipeline);
  int idle = 0;
  while (std::find(pipeline.begin(), pipeline.end(), idle) != pipeline.end()) ++idle;
  testing::FlopsOnlyComputeModel compute;
  testing::FreeNetwork network;
  const ReplayResult r = Replay(p, compute, network);
  ASSERT_TRUE(r.completed) << r.stall;
  std::vector<int> analysed = pipeline;
  analysed.push_back(idle);
  const StepStats stats = AnalyzeStep(p, r, analysed);
  const RankStats& s = stats.ranks[idle];
  EXPECT_EQ(s.compute_busy_s, 0);
  EXPECT_DOUBLE_EQ(s.breakdown.bubble_s, r.step_time.seconds());
  EXPECT_EQ(s.pipeline_idle_s, stats.pipeline_end_s);
  EXPECT_GT(stats.ranks[pipeline.front()].compute_busy_s, 0);
}

}  // namespace
}  // namespace meshsim

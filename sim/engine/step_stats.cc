#include "sim/engine/step_stats.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cassert>

#include "sim/core/expert_routing.h"

namespace meshsim {
namespace {

// Activity classes in priority order (lower index wins when several are active).
// kHost: the host thread issues kernels while no GPU stream runs (host-bound time).
enum Activity { kOptimizer, kCompute, kTp, kCp, kEp, kPp, kDp, kHost, kActivityCount };

// The analysis visits every op of every analysed rank several times: it reads the parts
// of an op it needs from the program's ReplayRecord array (the optimizer step's kernels
// are marked there, ReplayRecord::optimizer) rather than build whole Ops (Program::op) or
// read OpInfos.
bool IsCompute(const ReplayRecord& r) { return r.kind() == ReplayRecord::Kind::kCompute; }

// The activity of op `id` on `stream` (a memory op's counts for nothing).
Activity ActivityOf(const Program& p, OpId id, Stream stream) {
  if (stream == Stream::kHost) return kHost;
  if (IsCompute(p.Records()[id])) {
    return p.Records()[id].optimizer() ? kOptimizer : kCompute;
  }
  switch (stream) {
    case Stream::kTp:
    case Stream::kTpBack:
      return kTp;
    case Stream::kCp:
      return kCp;
    case Stream::kEp:
      return kEp;
    case Stream::kDp:
    case Stream::kDpGather:
      return kDp;
    default:
      return kPp;
  }
}

// A rank's activity starting or ending at time t, packed into one integer so that sorting
// edges is sorting integers: t in the high bits, then whether it starts, then the
// activity. Edges at the same instant may come in any order (a zero-length span counts
// for nothing).
using Edge = int64_t;
constexpr int kEdgeTimeShift = 4;
Edge MakeEdge(int64_t t, bool starts, int activity) {
  assert(t >= 0 && t < (int64_t{1} << (63 - kEdgeTimeShift)));
  return (t << kEdgeTimeShift) | (starts ? 8 : 0) | activity;
}
int64_t EdgeTime(Edge e) { return e >> kEdgeTimeShift; }
int EdgeDelta(Edge e) { return (e & 8) ? 1 : -1; }
int EdgeActivity(Edge e) { return static_cast<int>(e & 7); }
static_assert(kActivityCount <= 8);

// One rank's edges, kept per stream. A stream runs one op at a time, so each stream's
// edges come out in time order, and SweepRank merges the streams as it goes.
using StreamEdges = std::array<std::vector<Edge>, kStreamCount>;

// Sweeps one rank's busy intervals over [0, step_end]: the streams' edges in time order,
// taking at each instant the highest-priority activity under way.
RankStats SweepRank(const StreamEdges& streams, int64_t pipeline_end, int64_t step_end) {
  // Compute and TP streams carry most edges; the others are merged into one sorted run
  // (each stream's edges are sorted: one linear merge per stream, not a sort), so the
  // merge below picks among three cursors at most. (Buffers per thread, reused.)
  thread_local std::vector<Edge> others, merged;
  others.clear();
  for (int st = 0; st < kStreamCount; ++st) {
    assert(std::is_sorted(streams[st].begin(), streams[st].end()));
    const Stream stream = static_cast<Stream>(st);
    if (stream == Stream::kCompute || stream == Stream::kTp || streams[st].empty()) continue;
    merged.resize(others.size() + streams[st].size());
    std::merge(others.begin(), others.end(), streams[st].begin(), streams[st].end(),
               merged.begin());
    others.swap(merged);
  }
  const std::array<const std::vector<Edge>*, 3> runs{&streams[static_cast<int>(Stream::kCompute)],
                                                     &streams[static_cast<int>(Stream::kTp)],
                                                     &others};
  // Cursors of the runs that have edges; the next edge is the least at a cursor.
  std::array<const Edge*, 3> next, end;
  int open = 0;
  for (const std::vector<Edge>* s : runs) {
    if (s->empty()) continue;
    next[open] = s->data();
    end[open++] = s->data() + s->size();
  }
  std::array<int, kActivityCount> active{};
  uint32_t busy = 0;  // bit a: activity a under way
  constexpr uint32_t kComputeBits = (1u << kOptimizer) | (1u << kCompute);
  constexpr uint32_t kCommBits = ~(kComputeBits | (1u << kHost));
  std::array<int64_t, kActivityCount + 1> time{};  // last slot: idle
  int64_t idle_before_pipeline_end = 0, comm_busy = 0, compute_busy = 0;
  int64_t prev = 0;
  auto account = [&](int64_t until) {
    if (until <= prev) return;
    const int64_t span = until - prev;
    if (busy == 0) {
      time[kActivityCount] += span;
      idle_before_pipeline_end += std::max<int64_t>(0, std::min(until, pipeline_end) - prev);
    } else {
      time[std::countr_zero(busy)] += span;  // lower index, higher priority
    }
    if (busy & kComputeBits) compute_busy += span;
    if (busy & kCommBits) comm_busy += span;
    prev = until;
  };
  while (open > 0) {
    int k = 0;
    for (int i = 1; i < open; ++i) {
      if (*next[i] < *next[k]) k = i;
    }
    const Edge e = *next[k];
    if (++next[k] == end[k]) {
      --open;
      next[k] = next[open];
      end[k] = end[open];
    }
    account(EdgeTime(e));
    const int a = EdgeActivity(e);
    active[a] += EdgeDelta(e);
    busy = active[a] > 0 ? busy | (1u << a) : busy & ~(1u << a);
  }
  account(step_end);
  auto s = [](int64_t ps) { return static_cast<double>(ps) * 1e-12; };
  RankStats r;
  r.compute_busy_s = s(compute_busy);
  r.comm_busy_s = s(comm_busy);
  r.pipeline_idle_s = s(idle_before_pipeline_end);
  TimeBreakdown& b = r.breakdown;
  b.optimizer_s = s(time[kOptimizer]);
  b.compute_s = s(time[kCompute]);
  b.exposed_tp_s = s(time[kTp]);
  b.exposed_cp_s = s(time[kCp]);
  b.exposed_ep_s = s(time[kEp]);
  b.exposed_pp_s = s(time[kPp]);
  b.exposed_dp_s = s(time[kDp]);
  b.host_s = s(time[kHost]);
  b.bubble_s = s(time[kActivityCount]);
  return r;
}

}  // namespace

std::string_view CommClassName(CommClass c) {
  switch (c) {
    case CommClass::kTp:
      return "tp";
    case CommClass::kCp:
      return "cp";
    case CommClass::kEp:
      return "ep";
    case CommClass::kPp:
      return "pp";
    case CommClass::kDp:
      return "dp";
  }
  return "?";
}

CommClass CommClassOf(Stream s) {
  switch (s) {
    case Stream::kTp:
    case Stream::kTpBack:
      return CommClass::kTp;
    case Stream::kCp:
      return CommClass::kCp;
    case Stream::kEp:
      return CommClass::kEp;
    case Stream::kDp:
    case Stream::kDpGather:
      return CommClass::kDp;
    default:
      return CommClass::kPp;
  }
}

double SentBytes(CommOp op, int n, double bytes, bool is_first_member, double rank_reach) {
  if (n <= 1) return 0;
  const double f = static_cast<double>(n - 1) / n;
  switch (op) {
    case CommOp::kAllReduce:
      return 2 * f * bytes;
    case CommOp::kAllGather:
    case CommOp::kReduceScatter:
    case CommOp::kAllToAll:
      return f * bytes;
    case CommOp::kSendRecv:
      return is_first_member ? bytes : 0;
    case CommOp::kRingShift:
      return bytes;
    case CommOp::kExpertDispatch:
    case CommOp::kExpertCombine:
      return (n - 1) * rank_reach * bytes;
  }
  return 0;
}

namespace {

// Whether host op `id` held a GPU op back: one of the ops it launched started as it
// released them (HostRelease: at its end, or before its trailing launches), or ended
// before its last launch did (the GPU ran out of launched kernels). Other host time (the
// host running ahead, or launching ops that then wait for other ranks) is no host-bound
// time.
bool HeldBack(const Program& program, const ReplayResult& replay, OpId id) {
  const KernelWork& w = program.works()[program.Records()[id].ref].work;
  const SimTime released = replay.start[id] + HostRelease(replay.end[id] - replay.start[id],
                                                          w.kernels, HostTrailingLaunches(w));
  for (const OpId* d = program.DependentsBegin(id); d != program.DependentsEnd(id); ++d) {
    if (replay.start[*d] == released || replay.end[*d] < replay.end[id]) return true;
  }
  return false;
}

// The reach of the expert dispatches' members (RankReach; their groups are the plan's
// expert-parallel groups, all of one size); 0 without expert dispatches.
double ExpertRankReach(const Program& program) {
  for (const Comm& c : program.comms()) {
    if (IsExpertExchange(c.op)) {
      return RankReach(program.expert_routing(),
                       static_cast<int>(program.groups()[c.group].size()));
    }
  }
  return 0;
}

// Per rank: the end of its last forward/backward kernel (ps; 0: none) and its last op
// (kNoOp: none), from what the replay gathered (ReplayResult::last_pass_end) and the
// program's queue tails, or, for a result without them, from one walk over the ops.
struct RankEnds {
  std::vector<int64_t> last_pass_end;
  std::vector<OpId> last_op;
};

RankEnds ScanRankEnds(const Program& program, const ReplayResult& replay) {
  RankEnds ends;
  const auto ranks = static_cast<size_t>(program.Ranks());
  if (replay.completed && replay.last_pass_end.size() == ranks) {
    // What the replay gathered, and each rank's latest queue tail: no pass over the ops.
    ends.last_pass_end = replay.last_pass_end;
    ends.last_op.assign(ranks, kNoOp);
    for (size_t rank = 0; rank < ranks; ++rank) {
      for (size_t q = rank * kStreamCount; q < (rank + 1) * kStreamCount; ++q) {
        const OpId tail = program.StreamTail(q);
        OpId& last = ends.last_op[rank];
        if (tail != kNoOp && (last == kNoOp || tail > last)) last = tail;
      }
    }
    return ends;
  }
  ends.last_pass_end.assign(program.Ranks(), 0);
  ends.last_op.assign(program.Ranks(), kNoOp);
  const ReplayRecord* records = program.Records();
  const size_t n = program.OpCount();
  constexpr auto kComputeQueue = static_cast<uint32_t>(Stream::kCompute);
  for (size_t id = 0; id < n; ++id) {
    const ReplayRecord& r = records[id];
    const int rank = r.rank();
    ends.last_op[rank] = static_cast<OpId>(id);
    if (IsCompute(r) && r.queue % kStreamCount == kComputeQueue && !r.optimizer()) {
      int64_t& last = ends.last_pass_end[rank];
      last = std::max(last, replay.end[id].picoseconds());
    }
  }
  return ends;
}

// What the analysis gathers of one rank while it walks the rank's ops: its busy intervals
// per stream (of the host's, the launches that held a GPU op back) and the sums of its work.
struct RankWalk {
  StreamEdges edges;
  double model_flops = 0;
  double recompute_flops = 0;
  std::array<double, kCommClassCount> sent_bytes{};
  int64_t slowed[2] = {0, 0};  // compute and optimizer kernels' extra time, ps

  void Clear() {
    for (std::vector<Edge>& run : edges) run.clear();
    model_flops = recompute_flops = 0;
    sent_bytes = {};
    slowed[0] = slowed[1] = 0;
  }
};

// What one member of a collective of one signature sends (SentBytes): its group's first
// member, and every other member. Worked out once per signature, so that the walk reads a
// part's signature and this, not the group's members.
struct SignatureSent {
  int first_member = -1;
  double first = 0;
  double other = 0;
};

std::vector<SignatureSent> SentPerSignature(const Program& program, double rank_reach) {
  std::vector<SignatureSent> sent;
  sent.reserve(program.signatures().size());
  for (const CommSignature& s : program.signatures()) {
    const std::vector<int>& group = program.groups()[s.group];
    const int n = static_cast<int>(group.size());
    sent.push_back({group.empty() ? -1 : group.front(),
                    SentBytes(s.op, n, s.bytes, true, rank_reach),
                    SentBytes(s.op, n, s.bytes, false, rank_reach)});
  }
  return sent;
}

// Adds op `id` (of `rank`) to the rank's walk.
void WalkOp(const Program& program, const ReplayResult& replay, OpId id, int rank,
            const std::vector<SignatureSent>& sent, RankWalk& walk) {
  const ReplayRecord& r = program.Records()[id];
  if (r.kind() == ReplayRecord::Kind::kMemory) return;
  const auto stream = static_cast<Stream>(r.queue % kStreamCount);
  const int64_t b = replay.start[id].picoseconds(), e = replay.end[id].picoseconds();
  if (e > b && (stream != Stream::kHost || HeldBack(program, replay, id))) {
    const Activity a = ActivityOf(program, id, stream);
    std::vector<Edge>& run = walk.edges[static_cast<int>(stream)];
    // An op that starts as the one before it on its stream ends, with the same activity,
    // extends that one's span: the end and start at one instant would account for no time.
    if (!run.empty() && run.back() == MakeEdge(b, false, a)) {
      run.back() = MakeEdge(e, false, a);
    } else {
      run.push_back(MakeEdge(b, true, a));
      run.push_back(MakeEdge(e, false, a));
    }
  }
  if (IsCompute(r)) {
    if (stream != Stream::kCompute) return;
    if (replay.interference_on) {
      walk.slowed[r.optimizer()] += replay.Interference(program, id).picoseconds();
    }
    const OpWork& w = program.works()[r.ref];  // a compute op's ref is its work
    walk.model_flops += w.work.flops - w.recompute_flops;
    walk.recompute_flops += w.recompute_flops;
    return;
  }
  // A part's ref is its collective.
  const SignatureSent& s = sent[program.CommRecords()[r.ref].signature];
  walk.sent_bytes[static_cast<int>(CommClassOf(stream))] +=
      s.first_member == rank ? s.first : s.other;
}

// The rank's stats from its walk: the sweep of its intervals, then its work.
RankStats FinishRank(const RankWalk& walk, int64_t pipeline_end, int64_t step_end) {
  RankStats stats = SweepRank(walk.edges, pipeline_end, step_end);
  stats.model_flops = walk.model_flops;
  stats.recompute_flops = walk.recompute_flops;
  for (int c = 0; c < kCommClassCount; ++c) stats.sent_bytes[c] = walk.sent_bytes[c];
  TimeBreakdown& b = stats.breakdown;
  b.compute_s -= static_cast<double>(walk.slowed[0]) * 1e-12;
  b.optimizer_s -= static_cast<double>(walk.slowed[1]) * 1e-12;
  b.interference_s = static_cast<double>(walk.slowed[0] + walk.slowed[1]) * 1e-12;
  return stats;
}

}  // namespace

// Two walks over the ops in id order, which read the program's and the replay's arrays
// front to back: the first finds each rank's last pass end and last op, the second
// gathers each analysed rank's intervals and work and sweeps a rank once its last op has
// passed. A rank's ops in id order are its program's order, in which its sums were always
// taken (floating-point sums depend on their order), and each stream's ops in id order are
// its queue's. Ranks whose ops interleave (a pipeline stage's in full replay,
// Program::InterleaveRanks) are walked together, each with its own RankWalk: as many at a
// time as interleave, from a pool kept per thread and reused (a sweep analyses thousands
// of steps). A walk over one rank's ops at a time instead read one cache line per op once
// the stage's ops interleaved (8-11 % of a GPT-1T full replay).
StepStats AnalyzeStep(const Program& program, const ReplayResult& replay,
                      const std::vector<int>& which) {
  StepStats stats;
  const int ranks = program.Ranks();
  std::vector<int> analysed = which;
  if (analysed.empty()) {
    for (int r = 0; r < ranks; ++r) analysed.push_back(r);
  }
  const RankEnds ends = ScanRankEnds(program, replay);
  const std::vector<int64_t>& last_pass_end = ends.last_pass_end;
  const int64_t pipeline_end = *std::max_element(last_pass_end.begin(), last_pass_end.end());
  stats.critical_rank = static_cast<int>(
      std::max_element(last_pass_end.begin(), last_pass_end.end()) - last_pass_end.begin());
  stats.pipeline_end_s = static_cast<double>(pipeline_end) * 1e-12;
  stats.ranks.resize(ranks);
  const int64_t step_end = replay.step_time.picoseconds();
  const std::vector<SignatureSent> sent = SentPerSignature(program, ExpertRankReach(program));

  // Per rank: its walk's index in the pool while its ops are walked (-1: none yet),
  // kDone after; kSkip: not analysed.
  constexpr int kNone = -1, kDone = -2, kSkip = -3;
  std::vector<int> walk_of(ranks, kSkip);
  for (int r : analysed) walk_of[r] = kNone;
  thread_local std::vector<RankWalk> pool;
  std::vector<int> free_walks;
  size_t used = 0;
  const ReplayRecord* records = program.Records();
  const size_t n = program.OpCount();
  for (size_t id = 0; id < n; ++id) {
    const int rank = records[id].rank();
    int& w = walk_of[rank];
    if (w < 0) {
      if (w != kNone) continue;
      if (!free_walks.empty()) {
        w = free_walks.back();
        free_walks.pop_back();
      } else {
        if (used == pool.size()) pool.emplace_back();
        w = static_cast<int>(used++);
      }
      pool[w].Clear();
    }
    WalkOp(program, replay, static_cast<OpId>(id), rank, sent, pool[w]);
    if (id == ends.last_op[rank]) {
      stats.ranks[rank] = FinishRank(pool[w], pipeline_end, step_end);
      free_walks.push_back(w);
      w = kDone;
    }
  }
  // Analysed ranks without ops: idle throughout.
  for (int r : analysed) {
    if (walk_of[r] != kNone) continue;
    if (used == pool.size()) pool.emplace_back();
    pool[used].Clear();
    stats.ranks[r] = FinishRank(pool[used], pipeline_end, step_end);
    walk_of[r] = kDone;
  }
  double idle_sum = 0;
  for (int r : analysed) idle_sum += stats.ranks[r].pipeline_idle_s;
  if (pipeline_end > 0) {
    stats.bubble_fraction = idle_sum / static_cast<double>(analysed.size()) / stats.pipeline_end_s;
  }
  return stats;
}

}  // namespace meshsim

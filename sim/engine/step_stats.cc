#include "sim/engine/step_stats.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cassert>

namespace meshsim {
namespace {

// Activity classes in priority order (lower index wins when several are active).
enum Activity { kOptimizer, kCompute, kTp, kCp, kEp, kPp, kDp, kActivityCount };

// The analysis visits every op of every analysed rank several times: it reads the parts
// of an op it needs from the program's ReplayRecord and OpInfo arrays rather than build
// whole Ops (Program::op).
bool IsCompute(const ReplayRecord& r) { return r.kind() == ReplayRecord::Kind::kCompute; }
bool IsComm(const ReplayRecord& r) {
  return r.kind() == ReplayRecord::Kind::kShared || r.kind() == ReplayRecord::Kind::kSolo;
}

// The activity of op `id` on `stream` (a memory op's counts for nothing).
Activity ActivityOf(const Program& p, OpId id, Stream stream) {
  if (IsCompute(p.Records()[id])) {
    return p.Info(id).tag == Tag::kOptimizerStep ? kOptimizer : kCompute;
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
  // Compute and TP streams carry most edges; the others are sorted into one run, so the
  // merge below picks among three cursors at most.
  std::vector<Edge> others;
  for (int st = 0; st < kStreamCount; ++st) {
    assert(std::is_sorted(streams[st].begin(), streams[st].end()));
    const Stream stream = static_cast<Stream>(st);
    if (stream == Stream::kCompute || stream == Stream::kTp) continue;
    others.insert(others.end(), streams[st].begin(), streams[st].end());
  }
  std::sort(others.begin(), others.end());
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
    if (busy & ~kComputeBits) comm_busy += span;
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

double SentBytes(CommOp op, int n, double bytes, bool is_first_member) {
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
  }
  return 0;
}

namespace {

// Runs fn(id) on each of `rank`'s ops on the streams where keep(stream), in op id order:
// the program's order, in which per-rank sums were always taken (floating-point sums
// depend on their order). Each stream lists its ops in id order already.
template <typename Keep, typename Fn>
void ForEachInIdOrder(const Program& p, int rank, Keep keep, Fn fn) {
  std::array<StreamRange::Iterator, kStreamCount> next;
  int open = 0;
  for (int st = 0; st < kStreamCount; ++st) {
    const StreamRange q = p.StreamOps(rank, static_cast<Stream>(st));
    if (q.empty() || !keep(static_cast<Stream>(st))) continue;
    next[open++] = q.begin();
  }
  const StreamRange::Iterator end;
  while (open > 0) {
    int k = 0;
    for (int i = 1; i < open; ++i) {
      if (*next[i] < *next[k]) k = i;
    }
    fn(*next[k]);
    if (++next[k] == end) next[k] = next[--open];
  }
}

// End of the last forward/backward kernel of each rank, ps.
std::vector<int64_t> LastPassEnds(const Program& program, const ReplayResult& replay) {
  std::vector<int64_t> last(program.Ranks(), 0);
  for (int r = 0; r < program.Ranks(); ++r) {
    for (OpId id : program.StreamOps(r, Stream::kCompute)) {
      if (IsCompute(program.Records()[id]) && program.Info(id).tag != Tag::kOptimizerStep) {
        last[r] = std::max(last[r], replay.end[id].picoseconds());
      }
    }
  }
  return last;
}

// Fills `edges` with `rank`'s busy intervals, per stream.
void CollectEdges(const Program& program, const ReplayResult& replay, int rank,
                  StreamEdges& edges) {
  for (int st = 0; st < kStreamCount; ++st) {
    std::vector<Edge>& run = edges[st];
    run.clear();
    const auto stream = static_cast<Stream>(st);
    for (OpId id : program.StreamOps(rank, stream)) {
      if (program.Records()[id].kind() == ReplayRecord::Kind::kMemory) continue;
      const int64_t b = replay.start[id].picoseconds(), e = replay.end[id].picoseconds();
      if (e <= b) continue;
      const Activity a = ActivityOf(program, id, stream);
      run.push_back(MakeEdge(b, true, a));
      run.push_back(MakeEdge(e, false, a));
    }
  }
}

// One rank's FLOPs, bytes sent and interference, added to `stats`.
void CountWork(const Program& program, const ReplayResult& replay, int rank, RankStats& stats) {
  int64_t slowed[2] = {0, 0};  // compute and optimizer kernels' extra time, ps
  for (OpId id : program.StreamOps(rank, Stream::kCompute)) {
    const ReplayRecord& r = program.Records()[id];
    if (!IsCompute(r)) continue;
    if (replay.interference_on) {
      slowed[program.Info(id).tag == Tag::kOptimizerStep] +=
          replay.Interference(program, id).picoseconds();
    }
    const OpWork& w = program.works()[r.ref];  // a compute op's ref is its work
    stats.model_flops += w.work.flops - w.recompute_flops;
    stats.recompute_flops += w.recompute_flops;
  }
  for (int c = 0; c < kCommClassCount; ++c) {
    const auto in_class = [c](Stream s) { return static_cast<int>(CommClassOf(s)) == c; };
    ForEachInIdOrder(program, rank, in_class, [&](OpId id) {
      const ReplayRecord& r = program.Records()[id];
      if (!IsComm(r)) return;
      const Comm& comm = program.comms()[r.ref];  // a part's ref is its collective
      const auto& group = program.groups()[comm.group];
      stats.sent_bytes[c] +=
          SentBytes(comm.op, static_cast<int>(group.size()), comm.bytes, group.front() == rank);
    });
  }
  TimeBreakdown& b = stats.breakdown;
  b.compute_s -= static_cast<double>(slowed[0]) * 1e-12;
  b.optimizer_s -= static_cast<double>(slowed[1]) * 1e-12;
  b.interference_s = static_cast<double>(slowed[0] + slowed[1]) * 1e-12;
}

}  // namespace

// Each analysed rank in turn: its edges (in arrays kept per thread and reused, like the
// replay's records: a sweep analyses thousands of steps), their sweep, its work.
StepStats AnalyzeStep(const Program& program, const ReplayResult& replay,
                      const std::vector<int>& which) {
  StepStats stats;
  const int ranks = program.Ranks();
  std::vector<int> analysed = which;
  if (analysed.empty()) {
    for (int r = 0; r < ranks; ++r) analysed.push_back(r);
  }
  const std::vector<int64_t> last_pass_end = LastPassEnds(program, replay);
  const int64_t pipeline_end = *std::max_element(last_pass_end.begin(), last_pass_end.end());
  stats.critical_rank = static_cast<int>(
      std::max_element(last_pass_end.begin(), last_pass_end.end()) - last_pass_end.begin());
  stats.pipeline_end_s = static_cast<double>(pipeline_end) * 1e-12;
  stats.ranks.resize(ranks);
  thread_local StreamEdges edges;
  double idle_sum = 0;
  for (int r : analysed) {
    CollectEdges(program, replay, r, edges);
    stats.ranks[r] = SweepRank(edges, pipeline_end, replay.step_time.picoseconds());
    CountWork(program, replay, r, stats.ranks[r]);
    idle_sum += stats.ranks[r].pipeline_idle_s;
  }
  if (pipeline_end > 0) {
    stats.bubble_fraction = idle_sum / static_cast<double>(analysed.size()) / stats.pipeline_end_s;
  }
  return stats;
}

}  // namespace meshsim

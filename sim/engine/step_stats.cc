#include "sim/engine/step_stats.h"

#include <algorithm>
#include <array>

namespace meshsim {
namespace {

// Activity classes in priority order (lower index wins when several are active).
enum Activity { kOptimizer, kCompute, kTp, kCp, kEp, kPp, kDp, kActivityCount };

Activity ActivityOf(const Op& op) {
  if (op.kind == OpKind::kCompute) return op.tag == Tag::kOptimizerStep ? kOptimizer : kCompute;
  switch (op.stream) {
    case Stream::kTp: return kTp;
    case Stream::kCp: return kCp;
    case Stream::kEp: return kEp;
    case Stream::kDp:
    case Stream::kDpGather: return kDp;
    default: return kPp;
  }
}

struct Edge {
  int64_t t;
  int8_t delta;
  int8_t activity;
  bool operator<(const Edge& o) const { return t < o.t; }
};

// Sweeps one rank's busy intervals over [0, step_end].
RankStats SweepRank(std::vector<Edge>& edges, int64_t pipeline_end, int64_t step_end) {
  std::sort(edges.begin(), edges.end());
  std::array<int, kActivityCount> active{};
  std::array<int64_t, kActivityCount + 1> time{};  // last slot: idle
  int64_t idle_before_pipeline_end = 0, comm_busy = 0, compute_busy = 0;
  int64_t prev = 0;
  auto account = [&](int64_t until) {
    if (until <= prev) return;
    const int64_t span = until - prev;
    int winner = kActivityCount;
    for (int a = 0; a < kActivityCount; ++a) {
      if (active[a] > 0) {
        winner = a;
        break;
      }
    }
    time[winner] += span;
    if (active[kOptimizer] + active[kCompute] > 0) compute_busy += span;
    bool comm = false;
    for (int a = kTp; a < kActivityCount; ++a) comm = comm || active[a] > 0;
    if (comm) comm_busy += span;
    if (winner == kActivityCount) {
      idle_before_pipeline_end += std::max<int64_t>(0, std::min(until, pipeline_end) - prev);
    }
    prev = until;
  };
  for (const Edge& e : edges) {
    account(e.t);
    active[e.activity] += e.delta;
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
    case CommClass::kTp: return "tp";
    case CommClass::kCp: return "cp";
    case CommClass::kEp: return "ep";
    case CommClass::kPp: return "pp";
    case CommClass::kDp: return "dp";
  }
  return "?";
}

CommClass CommClassOf(Stream s) {
  switch (s) {
    case Stream::kTp: return CommClass::kTp;
    case Stream::kCp: return CommClass::kCp;
    case Stream::kEp: return CommClass::kEp;
    case Stream::kDp:
    case Stream::kDpGather: return CommClass::kDp;
    default: return CommClass::kPp;
  }
}

double SentBytes(CommOp op, int n, double bytes, bool is_first_member) {
  if (n <= 1) return 0;
  const double f = static_cast<double>(n - 1) / n;
  switch (op) {
    case CommOp::kAllReduce: return 2 * f * bytes;
    case CommOp::kAllGather:
    case CommOp::kReduceScatter:
    case CommOp::kAllToAll: return f * bytes;
    case CommOp::kSendRecv: return is_first_member ? bytes : 0;
    case CommOp::kRingShift: return bytes;
  }
  return 0;
}

StepStats AnalyzeStep(const Program& program, const ReplayResult& replay,
                      const std::vector<int>& which) {
  StepStats stats;
  const int ranks = program.Ranks();
  std::vector<int> analysed = which;
  if (analysed.empty()) {
    for (int r = 0; r < ranks; ++r) analysed.push_back(r);
  }
  std::vector<int64_t> last_pass_end(ranks, 0);
  std::vector<double> model_flops(ranks, 0.0), recompute_flops(ranks, 0.0);
  std::vector<std::array<double, kCommClassCount>> sent(ranks);
  std::vector<std::vector<Edge>> edges(ranks);
  for (size_t i = 0; i < program.OpCount(); ++i) {
    const Op& op = program.op(static_cast<OpId>(i));
    if (op.kind == OpKind::kMemory) continue;
    const int64_t b = replay.start[i].picoseconds(), e = replay.end[i].picoseconds();
    if (op.kind == OpKind::kCompute) {
      model_flops[op.rank] += op.work.flops - op.recompute_flops;
      recompute_flops[op.rank] += op.recompute_flops;
      if (op.tag != Tag::kOptimizerStep) last_pass_end[op.rank] = std::max(last_pass_end[op.rank], e);
    }
    if (op.kind == OpKind::kComm) {
      const Comm& c = program.comms()[op.comm];
      const auto& group = program.groups()[c.group];
      sent[op.rank][static_cast<int>(CommClassOf(op.stream))] +=
          SentBytes(c.op, static_cast<int>(group.size()), c.bytes, group.front() == op.rank);
    }
    if (e <= b) continue;
    const int8_t a = static_cast<int8_t>(ActivityOf(op));
    edges[op.rank].push_back({b, 1, a});
    edges[op.rank].push_back({e, -1, a});
  }
  const int64_t pipeline_end = *std::max_element(last_pass_end.begin(), last_pass_end.end());
  stats.critical_rank = static_cast<int>(
      std::max_element(last_pass_end.begin(), last_pass_end.end()) - last_pass_end.begin());
  stats.pipeline_end_s = static_cast<double>(pipeline_end) * 1e-12;
  stats.ranks.resize(ranks);
  double idle_sum = 0;
  for (int r : analysed) {
    stats.ranks[r] = SweepRank(edges[r], pipeline_end, replay.step_time.picoseconds());
    stats.ranks[r].model_flops = model_flops[r];
    stats.ranks[r].sent_bytes = sent[r];
    stats.ranks[r].recompute_flops = recompute_flops[r];
    idle_sum += stats.ranks[r].pipeline_idle_s;
  }
  if (pipeline_end > 0) {
    stats.bubble_fraction = idle_sum / static_cast<double>(analysed.size()) / stats.pipeline_end_s;
  }
  return stats;
}

}  // namespace meshsim

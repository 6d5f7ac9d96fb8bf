#include "sim/engine/replay.h"

#include <algorithm>
#include <cassert>

#include "sim/core/simulator.h"

namespace meshsim {
namespace {

class Replayer {
 public:
  Replayer(const Program& p, const ComputeModel& compute, Network& network,
           const ReplayOptions& options)
      : p_(p), compute_(compute), network_(network), options_(options) {
    const size_t n = p.OpCount();
    pending_.resize(n);
    for (size_t i = 0; i < n; ++i) pending_[i] = p.DepCount(static_cast<OpId>(i));
    started_.assign(n, 0);
    result_.start.assign(n, SimTime::Zero());
    result_.end.assign(n, SimTime::Zero());
    head_.assign(static_cast<size_t>(p.Ranks()) * kStreamCount, 0);
    result_.memory.resize(p.Ranks());
    current_.assign(p.Ranks(), {});
    record_curve_.assign(p.Ranks(), 0);
    for (int r : options.memory_curve_ranks) record_curve_[r] = 1;
    BuildCommParts();
    sim_.Reserve(1024);
  }

  ReplayResult Run() {
    if (!options_.nic_nodes.empty()) network_.WatchNics(options_.nic_nodes);
    for (int r = 0; r < p_.Ranks(); ++r) {
      for (int s = 0; s < kStreamCount; ++s) worklist_.push_back(r * kStreamCount + s);
    }
    Drain();
    sim_.Run();
    result_.events = sim_.EventsExecuted();
    CheckCompleted();
    SimTime last = SimTime::Zero();
    for (SimTime t : result_.end) last = std::max(last, t);
    result_.step_time = last;
    result_.intra_node_bytes = network_.IntraNodeBytes();
    result_.inter_node_bytes = network_.InterNodeBytes();
    result_.links = network_.Usage(last.seconds());
    for (const RateSample& s : network_.RateSamples()) {
      result_.nic_samples.push_back({network_.LinkName(s.link), s.t, s.bytes_per_s});
    }
    return std::move(result_);
  }

 private:
  void BuildCommParts() {
    const size_t c = p_.comms().size();
    arrived_.assign(c, 0);
    parts_start_.assign(c + 1, 0);
    for (const Op& op : p_.ops()) {
      if (op.kind == OpKind::kComm) ++parts_start_[op.comm + 1];
    }
    for (size_t i = 0; i < c; ++i) parts_start_[i + 1] += parts_start_[i];
    parts_.resize(parts_start_[c]);
    std::vector<uint32_t> fill(parts_start_.begin(), parts_start_.end() - 1);
    for (size_t i = 0; i < p_.OpCount(); ++i) {
      const Op& op = p_.op(static_cast<OpId>(i));
      if (op.kind == OpKind::kComm) parts_[fill[op.comm]++] = static_cast<OpId>(i);
    }
  }

  void Drain() {
    while (!worklist_.empty()) {
      const uint32_t rs = worklist_.back();
      worklist_.pop_back();
      Advance(rs);
    }
  }

  // Starts ops at the head of one (rank, stream) queue for as long as they can start.
  void Advance(uint32_t rs) {
    const int rank = static_cast<int>(rs / kStreamCount);
    const auto& queue = p_.StreamOps(rank, static_cast<Stream>(rs % kStreamCount));
    while (head_[rs] < queue.size()) {
      const OpId id = queue[head_[rs]];
      if (started_[id] || pending_[id] > 0) return;
      started_[id] = 1;
      const Op& op = p_.op(id);
      switch (op.kind) {
        case OpKind::kMemory:
          result_.start[id] = sim_.Now();
          ApplyMemory(op);
          Finish(id);  // advances head_[rs]
          continue;
        case OpKind::kCompute: {
          result_.start[id] = sim_.Now();
          SimTime d = compute_.Duration(op.work);
          if (!options_.compute_slowdown.empty() && options_.compute_slowdown[rank] != 1.0) {
            d = SimTime::Seconds(d.seconds() * options_.compute_slowdown[rank]);
          }
          sim_.Schedule(d, [this, id] {
            Finish(id);
            Drain();
          });
          return;
        }
        case OpKind::kComm:
          Arrive(op.comm);
          return;
      }
    }
  }

  void Arrive(int32_t comm) {
    const uint32_t begin = parts_start_[comm], end = parts_start_[comm + 1];
    if (++arrived_[comm] < end - begin) return;
    const Comm& c = p_.comms()[comm];
    for (uint32_t i = begin; i < end; ++i) result_.start[parts_[i]] = sim_.Now();
    static const std::vector<std::vector<int>> kNoMirrors;
    const auto& mirrors = options_.mirrors.empty() ? kNoMirrors : options_.mirrors[c.group];
    network_.Start(sim_, c.op, p_.groups()[c.group], c.bytes,
                   [this, comm] {
                     for (uint32_t i = parts_start_[comm]; i < parts_start_[comm + 1]; ++i) {
                       Finish(parts_[i]);
                     }
                     Drain();
                   },
                   mirrors);
  }

  // Marks an op finished: its queue moves on and its dependents may become ready.
  void Finish(OpId id) {
    const Op& op = p_.op(id);
    result_.end[id] = sim_.Now();
    const uint32_t rs = op.rank * kStreamCount + static_cast<uint32_t>(op.stream);
    ++head_[rs];
    worklist_.push_back(rs);
    for (const OpId* d = p_.DependentsBegin(id); d != p_.DependentsEnd(id); ++d) {
      if (--pending_[*d] == 0) {
        const Op& w = p_.op(*d);
        worklist_.push_back(w.rank * kStreamCount + static_cast<uint32_t>(w.stream));
      }
    }
  }

  void ApplyMemory(const Op& op) {
    auto& cur = current_[op.rank];
    DeviceMemory& mem = result_.memory[op.rank];
    cur[static_cast<int>(op.category)] += op.work.bytes;
    double total = 0;
    for (double b : cur) total += b;
    if (total > mem.peak_bytes) {
      mem.peak_bytes = total;
      mem.at_peak = cur;
    }
    if (record_curve_[op.rank]) mem.curve.push_back({sim_.Now(), total});
  }

  void CheckCompleted() {
    for (int r = 0; r < p_.Ranks(); ++r) {
      for (int s = 0; s < kStreamCount; ++s) {
        const auto& queue = p_.StreamOps(r, static_cast<Stream>(s));
        const uint32_t h = head_[r * kStreamCount + s];
        if (h < queue.size()) {
          result_.completed = false;
          result_.stall = "rank " + std::to_string(r) + " stream '" +
                          std::string(StreamName(static_cast<Stream>(s))) + "' stuck at op " +
                          std::to_string(queue[h]) + " (" +
                          std::string(TagName(p_.op(queue[h]).tag)) + ")";
          return;
        }
      }
    }
  }

  const Program& p_;
  const ComputeModel& compute_;
  Network& network_;
  const ReplayOptions& options_;
  Simulator sim_;
  ReplayResult result_;
  std::vector<uint32_t> pending_;
  std::vector<uint8_t> started_;
  std::vector<uint32_t> head_;
  std::vector<uint32_t> arrived_;
  std::vector<uint32_t> parts_start_;
  std::vector<OpId> parts_;
  std::vector<uint32_t> worklist_;
  std::vector<std::array<double, kMemCategoryCount>> current_;
  std::vector<uint8_t> record_curve_;
};

}  // namespace

ReplayResult Replay(const Program& program, const ComputeModel& compute, Network& network,
                    const ReplayOptions& options) {
  return Replayer(program, compute, network, options).Run();
}

}  // namespace meshsim

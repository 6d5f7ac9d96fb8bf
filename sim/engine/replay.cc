#include "sim/engine/replay.h"

#include <algorithm>
#include <cassert>
#include <cmath>

#include "sim/core/huge_pages.h"
#include "sim/core/round.h"
#include "sim/core/simulator.h"

namespace meshsim {
namespace {

class Replayer {
  static constexpr uint32_t kNone = kNoOp;
  // One (rank, stream) queue: the next op to run (kNone: none left), and whether it has
  // started (is computing, or waits in a collective). The ops after it are a list
  // through ReplayRecord::next_in_queue.
  struct Queue {
    uint32_t head = kNone;
    bool started = false;
  };
  // The event loop reads the Program's ReplayRecords (one 20-byte record per op, built as
  // the program was) and nothing else of an op; start and end times go straight to the
  // result's arrays (8 bytes each, dense).
  using Kind = ReplayRecord::Kind;
  using ReplayOp = ReplayRecord;
  // Interference: the compute op running on a rank and its progress.
  struct RunningCompute {
    uint32_t op = kNone;
    SimTime since;        // when its rate last changed
    double left_ps = 0;   // its ComputeModel time still to run, ps
    double slowdown = 0;  // its rate since `since` is 1 / (1 + slowdown)
    EventId event;        // its end
  };

 public:
  Replayer(const Program& p, const ComputeModel& compute, Network& network,
           const ReplayOptions& options)
      : p_(p), ops_(p.RecordsForReplay()), network_(network), options_(options) {
    const size_t n = p.OpCount();
    ReserveHuge(result_.start, n);
    result_.start.resize(n);
    ReserveHuge(result_.end, n);
    result_.end.resize(n);
    // Each distinct work of a compute op is timed here, off the event loop, once.
    work_times_.assign(p.works().size(), SimTime::Picoseconds(-1));  // -1: not timed
    for (uint32_t w : p.ComputeWorks()) work_times_[w] = ComputeTime(p.works()[w].work, compute);
    result_.compute_slowdown = options.compute_slowdown;
    queues_.resize(static_cast<size_t>(p.Ranks()) * kStreamCount);
    for (size_t q = 0; q < queues_.size(); ++q) queues_[q].head = p.StreamHead(q);
    result_.memory.resize(p.Ranks());
    result_.last_pass_end.assign(p.Ranks(), 0);
    for (double s : options.comm_interference) interference_ = interference_ || s != 0;
    assert(options.comm_slowdown.empty() || options.comm_slowdown.size() == sigs_.size());
    for (float s : options.comm_slowdown) interference_ = interference_ || s > 0;
    // Side-stream ops share the GPU with the compute stream: their progress is tracked.
    side_ = options.side_stream_slowdown > 0 && p.HasSideCompute();
    interference_ = interference_ || side_;
    result_.interference_on = interference_;
    if (interference_) {
      running_.assign(p.Ranks(), RunningCompute());
      in_flight_.assign(p.Ranks(), {});
      held_.assign(p.Ranks(), 0);
    }
    if (side_) side_running_.assign(p.Ranks(), RunningCompute());
    memory_.assign(p.Ranks(), {});
    for (int r : options.memory_curve_ranks) memory_[r].record_curve = true;
    sim_.Reserve(1024);
  }

  SimTime ComputeTime(const KernelWork& work, const ComputeModel& compute) const {
    const KernelShapes* shapes = p_.ShapesOf(work);
    return shapes ? compute.ShapedDuration(work, *shapes) : compute.Duration(work);
  }

  // A compute op's time: its work's ComputeModel time, times its rank's slowdown.
  SimTime Duration(const ReplayOp& op) const {
    return SlowedBy(work_times_[op.ref], options_.compute_slowdown, op.queue / kStreamCount);
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
    result_.work_times = std::move(work_times_);
    const SimTime last = result_.step_time;  // the last op's end (Finish)
    result_.intra_node_bytes = network_.IntraNodeBytes();
    result_.inter_node_bytes = network_.InterNodeBytes();
    result_.links = network_.Usage(last.seconds());
    result_.rerouted = network_.Rerouted();
    for (const RateSample& s : network_.RateSamples()) {
      result_.nic_samples.push_back({network_.LinkName(s.link), s.t, s.bytes_per_s});
    }
    return std::move(result_);
  }

 private:
  void Drain() {
    while (!worklist_.empty()) {
      const uint32_t rs = worklist_.back();
      worklist_.pop_back();
      Advance(rs);
    }
  }

  // Starts ops at the head of one (rank, stream) queue for as long as they can start.
  void Advance(uint32_t rs) {
    Queue& q = queues_[rs];
    while (!q.started && q.head != kNone) {
      const OpId id = q.head;
      const ReplayOp& op = ops_[id];
      if (op.pending > 0) return;
      q.started = true;
      result_.start[id] = sim_.Now();
      switch (op.kind()) {
        case Kind::kMemory:
          ApplyMemory(op);
          Finish(id);  // moves the queue on
          continue;
        case Kind::kCompute:
          StartCompute(id, op);
          return;
        case Kind::kShared:
          Arrive(static_cast<int32_t>(op.ref));
          return;
        case Kind::kSolo:
          StartSolo(id, op);
          return;
      }
    }
  }

  // Host ops (Stream::kHost) run on the CPU: communication does not slow them. One with
  // trailing launches releases the ops it issues before its end (HostRelease) and keeps
  // the host busy until its last launch.
  void StartCompute(OpId id, const ReplayOp& op) {
    const uint32_t stream = op.queue % kStreamCount;
    if (stream == static_cast<uint32_t>(Stream::kSideCompute)) {
      if (side_) {
        StartSide(id, op);
        return;
      }
      sim_.Schedule(Duration(op), [this, id] {
        Finish(id);
        Drain();
      });
      return;
    }
    const bool host = stream == static_cast<uint32_t>(Stream::kHost);
    if (host) {
      const SimTime d = Duration(op);
      const KernelWork& w = p_.works()[op.ref].work;
      const SimTime release = HostRelease(d, w.kernels, HostTrailingLaunches(w));
      if (release < d) {
        sim_.Schedule(release, [this, id] {
          Release(id);
          Drain();
        });
        sim_.Schedule(d, [this, id] {
          Finish(id, /*release=*/false);
          Drain();
        });
        return;
      }
    }
    if (!interference_ || host) {
      sim_.Schedule(Duration(op), [this, id] {
        Finish(id);
        Drain();
      });
      return;
    }
    const uint32_t rank = op.queue / kStreamCount;
    RunningCompute& rc = running_[rank];
    rc.op = id;
    rc.since = sim_.Now();
    rc.left_ps = static_cast<double>(Duration(op).picoseconds());
    rc.slowdown = SlowdownOf(rank);
    ScheduleCompute(rank);
    if (side_) RerateSide(rank);
  }

  // A side-stream op starts: it runs at its own rate, shared with the rank's compute op
  // while one runs (ReplayOptions::side_stream_slowdown), which slows by as much.
  void StartSide(OpId id, const ReplayOp& op) {
    const uint32_t rank = op.queue / kStreamCount;
    RunningCompute& sc = side_running_[rank];
    sc.op = id;
    sc.since = sim_.Now();
    sc.left_ps = static_cast<double>(Duration(op).picoseconds());
    sc.slowdown = running_[rank].op != kNone ? options_.side_stream_slowdown : 0;
    ScheduleSide(rank);
    RerateCompute(rank);
  }

  void ScheduleSide(uint32_t rank) {
    RunningCompute& sc = side_running_[rank];
    const OpId id = sc.op;
    const int64_t left = RoundToInt64(sc.left_ps * (1 + sc.slowdown));
    sc.event = sim_.ScheduleAt(sc.since + SimTime::Picoseconds(left), [this, id, rank] {
      side_running_[rank].op = kNone;
      RerateCompute(rank);
      Finish(id);
      Drain();
    });
  }

  // The rank's side op, if any, continues at the rate the compute stream now leaves it.
  void RerateSide(uint32_t rank) {
    RunningCompute& sc = side_running_[rank];
    if (sc.op == kNone) return;
    const double s = running_[rank].op != kNone ? options_.side_stream_slowdown : 0;
    if (s == sc.slowdown) return;
    Progress(sc);
    sc.slowdown = s;
    sim_.Cancel(sc.event);
    ScheduleSide(rank);
  }

  // The rank's compute op, if any, continues at its new rate from now on.
  void RerateCompute(uint32_t rank) {
    RunningCompute& rc = running_[rank];
    if (rc.op == kNone) return;
    const double s = SlowdownOf(rank);
    if (s == rc.slowdown) return;
    Progress(rc);
    rc.slowdown = s;
    sim_.Cancel(rc.event);
    ScheduleCompute(rank);
  }

  // Schedules the end of `rank`'s running compute op at its current rate.
  void ScheduleCompute(uint32_t rank) {
    RunningCompute& rc = running_[rank];
    const OpId id = rc.op;
    const int64_t left = RoundToInt64(rc.left_ps * (1 + rc.slowdown));
    rc.event = sim_.ScheduleAt(rc.since + SimTime::Picoseconds(left), [this, id, rank] {
      running_[rank].op = kNone;
      if (side_) RerateSide(rank);
      Finish(id);
      Drain();
    });
  }

  // Moves a running compute op's progress to now, at the rate it had since `since`.
  void Progress(RunningCompute& rc) const {
    const auto elapsed = static_cast<double>((sim_.Now() - rc.since).picoseconds());
    rc.left_ps = std::max(0.0, rc.left_ps - elapsed / (1 + rc.slowdown));
    rc.since = sim_.Now();
  }

  double SlowdownOf(uint32_t rank) const {
    double s = 0;
    for (int k = 0; k < kCommOpCount; ++k) s += in_flight_[rank][k] * options_.comm_interference[k];
    if (held_[rank] != 0) s += static_cast<double>(held_[rank]) * kHeldUnit;
    if (side_ && side_running_[rank].op != kNone) s += options_.side_stream_slowdown;
    return s;
  }

  // Collective of signature `sig` starts (delta 1) or ends (-1) on `rank`: the compute op
  // running there, if any, continues at the new rate from now on. A slowdown of its own
  // (ReplayOptions::comm_slowdown) is summed in whole kHeldUnits, so that its start and end
  // cancel exactly; else its kind is counted.
  void CommChanges(uint32_t rank, uint32_t sig, int delta) {
    if (!interference_) return;
    const float own = options_.comm_slowdown.empty() ? -1.0f : options_.comm_slowdown[sig];
    if (own >= 0) {
      if (own == 0) return;
      held_[rank] += delta * RoundToInt64(own / kHeldUnit);
    } else {
      const int k = static_cast<int>(sigs_[sig].op);
      if (options_.comm_interference[k] == 0) return;
      in_flight_[rank][k] = static_cast<uint16_t>(in_flight_[rank][k] + delta);
    }
    RerateCompute(rank);
  }

  const std::vector<std::vector<int>>& MirrorsOf(const CommSignature& s) const {
    static const std::vector<std::vector<int>> kNoMirrors;
    return options_.mirrors.empty() ? kNoMirrors : options_.mirrors[s.group];
  }

  // Starts the collective of signature `sig` on the network; `done` runs at its end.
  void StartOnNetwork(uint32_t sig, std::function<void()> done) {
    const CommSignature& s = sigs_[sig];
    network_.StartKnown(sim_, sig, s.op, p_.groups()[s.group], s.bytes, std::move(done),
                        MirrorsOf(s));
  }

  // The callback captures only the op (16 bytes with `this`: std::function keeps it
  // without allocating); the rest is looked up when it runs.
  void StartSolo(OpId id, const ReplayOp& op) {
    const uint32_t sig = comms_[op.ref].signature;
    CommChanges(op.queue / kStreamCount, sig, 1);
    StartOnNetwork(sig, [this, id] {
      const ReplayOp& o = ops_[id];
      CommChanges(o.queue / kStreamCount, comms_[o.ref].signature, -1);
      Finish(id);
      Drain();
    });
  }

  // A part arrives: the collective counts it (one cache miss per part); the last starts it.
  void Arrive(int32_t comm) {
    const CommRecord& c = comms_[comm];
    if (--c.waiting != 0) return;
    const OpId *begin = p_.PartsBegin(c), *end = p_.PartsEnd(c);
    for (const OpId* i = begin; i != end; ++i) result_.start[*i] = sim_.Now();
    if (interference_) {
      for (const OpId* i = begin; i != end; ++i) {
        CommChanges(ops_[*i].queue / kStreamCount, c.signature, 1);
      }
    }
    StartOnNetwork(c.signature, [this, comm] { EndShared(comm); });
  }

  // A collective of several parts ends: each part finishes, in the order they were added.
  // Their records are fetched together first (they are far apart: one per rank).
  void EndShared(int32_t comm) {
    const CommRecord& c = comms_[comm];
    const OpId *begin = p_.PartsBegin(c), *end = p_.PartsEnd(c);
    for (const OpId* i = begin; i != end; ++i) __builtin_prefetch(&ops_[*i]);
    for (const OpId* i = begin; i != end; ++i) {
      if (interference_) CommChanges(ops_[*i].queue / kStreamCount, c.signature, -1);
      Finish(*i);
    }
    Drain();
  }

  // Marks an op finished: its queue moves on and its dependents may become ready. The
  // program does not fit in cache, and the next op of the queue usually starts at once:
  // its record and its start time's slot (most often beside this op's) are fetched first.
  // (Fetching them when this op started was too early: other ranks' ops, thousands of
  // them in a full replay, run in between and push them out again.)
  // A host op of several launches released its dependents earlier (release false).
  void Finish(OpId id, bool release = true) {
    const ReplayOp& op = ops_[id];
    if (op.next_in_queue != kNone) __builtin_prefetch(&ops_[op.next_in_queue]);
    __builtin_prefetch(&result_.start[id] + 1, 1);
    // Simulated time never goes back: the op finishing now ends after every op before it.
    result_.end[id] = sim_.Now();
    result_.step_time = sim_.Now();
    const uint32_t rs = op.queue;
    if (op.kind() == Kind::kCompute &&
        rs % kStreamCount == static_cast<uint32_t>(Stream::kCompute) && !op.optimizer()) {
      result_.last_pass_end[rs / kStreamCount] = sim_.Now().picoseconds();
    }
    Queue& q = queues_[rs];
    assert(q.started && q.head == id);
    q.head = op.next_in_queue;
    q.started = false;
    worklist_.push_back(rs);
    if (release) Release(id);
  }

  // Op `id`'s dependents no longer wait for it: most often one, in its record.
  void Release(OpId id) {
    const ReplayOp& op = ops_[id];
    if (op.deps() == ReplayOp::Deps::kOne) {
      Released(op.dependents);
    } else if (op.deps() == ReplayOp::Deps::kList) {
      for (const OpId *d = p_.DependentsBegin(op), *e = p_.DependentsEnd(op); d != e; ++d) {
        Released(*d);
      }
    }
  }
  void Released(OpId id) {
    const ReplayOp& w = ops_[id];
    if (--w.pending == 0) worklist_.push_back(w.queue);
  }

  void ApplyMemory(const ReplayOp& op) {
    const uint32_t rank = op.queue / kStreamCount;
    RankMemory& m = memory_[rank];
    m.current[static_cast<int>(op.category())] += p_.works()[op.ref].work.bytes;
    double total = 0;
    for (double b : m.current) total += b;
    if (total > m.peak_bytes) {
      m.peak_bytes = total;
      DeviceMemory& mem = result_.memory[rank];
      mem.peak_bytes = total;
      mem.at_peak = m.current;
    }
    if (m.record_curve) result_.memory[rank].curve.push_back({sim_.Now(), total});
  }

  void CheckCompleted() {
    for (int r = 0; r < p_.Ranks(); ++r) {
      for (int s = 0; s < kStreamCount; ++s) {
        const Queue& q = queues_[r * kStreamCount + s];
        const uint32_t h = q.head;
        if (h != kNone) {
          result_.completed = false;
          result_.stall = "rank " + std::to_string(r) + " stream '" +
                          std::string(StreamName(static_cast<Stream>(s))) + "' stuck at op " +
                          std::to_string(h) + " (" + std::string(TagName(p_.op(h).tag)) + ")";
          return;
        }
      }
    }
  }

  const Program& p_;
  const ReplayRecord* ops_;  // the program's records (pending counts change as it runs)
  const CommRecord* comms_ = p_.CommRecords();  // `waiting` counts change as it runs
  const std::vector<CommSignature>& sigs_ = p_.signatures();
  Network& network_;
  const ReplayOptions& options_;
  Simulator sim_;
  ReplayResult result_;
  std::vector<Queue> queues_;  // ranks x kStreamCount
  std::vector<uint32_t> worklist_;
  // Per rank, what a memory op reads: the bytes allocated by category, their peak total
  // and whether the curve is recorded, in one cache line (the result's DeviceMemory, a
  // line further, is written only at a new peak).
  struct alignas(64) RankMemory {
    std::array<double, kMemCategoryCount> current{};
    double peak_bytes = 0;
    bool record_curve = false;
  };
  std::vector<RankMemory> memory_;
  // Interference (ReplayOptions::comm_interference, comm_slowdown): per rank, the compute
  // op running on it (RunningCompute), the communication ops in flight by kind, and the
  // sum of the own slowdowns of those in flight that have one, in kHeldUnits.
  static constexpr double kHeldUnit = 1e-12;
  bool interference_ = false;
  std::vector<RunningCompute> running_;
  std::vector<std::array<uint16_t, kCommOpCount>> in_flight_;
  std::vector<int64_t> held_;
  // Side-stream ops (Stream::kSideCompute; side_ when the program has any and they share
  // the GPU): per rank, the one running and its progress.
  bool side_ = false;
  std::vector<RunningCompute> side_running_;
  // Per entry of the program's works table: its ComputeModel time (-1 ps: not timed);
  // ReplayResult::work_times in the end.
  std::vector<SimTime> work_times_;
};

}  // namespace

SimTime SlowedBy(SimTime t, const std::vector<double>& slowdown, int rank) {
  if (slowdown.empty() || slowdown[rank] == 1.0) return t;
  return SimTime::Seconds(t.seconds() * slowdown[rank]);
}

// Both read the op's ReplayRecord alone (its ref is a compute op's work): the step
// analysis asks them for every compute op.
SimTime ReplayResult::ComputeTime(const Program& p, OpId id) const {
  const ReplayRecord& r = p.Records()[id];
  return SlowedBy(work_times[r.ref], compute_slowdown, r.rank());
}

SimTime ReplayResult::Interference(const Program& p, OpId id) const {
  if (!interference_on || p.Records()[id].kind() != ReplayRecord::Kind::kCompute) {
    return SimTime::Zero();
  }
  return std::max(SimTime::Zero(), end[id] - start[id] - ComputeTime(p, id));
}

ReplayResult Replay(const Program& program, const ComputeModel& compute, Network& network,
                    const ReplayOptions& options) {
  return Replayer(program, compute, network, options).Run();
}

}  // namespace meshsim

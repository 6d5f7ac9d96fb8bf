#include "sim/engine/replay.h"

#include <algorithm>
#include <cassert>
#include <cmath>

#include "sim/core/huge_pages.h"
#include "sim/core/simulator.h"

namespace meshsim {
namespace {

class Replayer {
  static constexpr uint32_t kNone = UINT32_MAX;
  // One (rank, stream) queue: the next op to run (kNone: none left), and whether it has
  // started (is computing, or waits in a collective). The ops after it are a list
  // through ReplayOp::next_in_queue.
  struct Queue {
    uint32_t head = kNone;
    bool started = false;
  };
  // What the event loop needs of an op, in one 24-byte record instead of the Program's
  // op, its work, its collective, its stream's op list and its dependency lists: a
  // program of millions of ops does not fit in cache, and one miss per op beats five.
  // Start and end times go straight to the result's arrays (8 bytes each, dense).
  // kSolo: a collective with one replayed participant (symmetric replay makes most of
  // them so), started without a shared record.
  enum class Kind : uint8_t { kCompute, kMemory, kShared, kSolo };
  struct ReplayOp {
    uint32_t ref = 0;                // kCompute, kMemory: the op's work (Program::works());
                                     // kShared, kSolo: its collective (Program::comms())
    uint32_t next_part = kNone;      // kShared: the next part of the same collective, by op id
    uint32_t next_in_queue = kNone;  // the op after this one on its (rank, stream) queue
    // First index into the Program's dependents of this op; its list ends where the next
    // record's begins (ops_ ends with one record past the last op for that).
    uint32_t dependents = 0;
    uint32_t pending = 0;     // dependencies not yet finished
    uint32_t queue : 27 = 0;  // rank * kStreamCount + stream (kMaxQueues)
    uint32_t kind_bits : 2 = 0;
    uint32_t category_bits : 3 = 0;
    Kind kind() const { return static_cast<Kind>(kind_bits); }
    MemCategory category() const { return static_cast<MemCategory>(category_bits); }  // kMemory
  };
  static constexpr uint32_t kMaxQueues = uint32_t{1} << 27;
  static_assert(sizeof(ReplayOp) == 24);
  // A collective of several replayed parts (the rest is the Program's Comm): its parts
  // as a list through ReplayOp::next_part in op id order, and how many have arrived.
  struct ReplayComm {
    uint32_t first = kNone;
    uint32_t parts = 0, arrived = 0;
  };
  static_assert(sizeof(ReplayComm) == 12);
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
      : p_(p), network_(network), options_(options) {
    const size_t n = p.OpCount();
    // One sequential pass turns the program's ops into compact replay records, a second
    // counts each op's dependencies.
    assert(static_cast<uint64_t>(p.Ranks()) * kStreamCount <= kMaxQueues);
    ops_.clear();
    ReserveHuge(ops_, n + 1);
    ReserveHuge(result_.start, n);
    result_.start.resize(n);
    ReserveHuge(result_.end, n);
    result_.end.resize(n);
    comms_.assign(p.comms().size(), ReplayComm());
    last_part_.assign(p.comms().size(), kNone);
    work_times_.assign(p.works().size(), SimTime::Picoseconds(-1));  // -1: not timed yet
    result_.compute_slowdown = options.compute_slowdown;
    for (size_t i = 0; i < n; ++i) AddRecord(static_cast<OpId>(i), compute);
    ops_.emplace_back().dependents = p.DependentsOffset(static_cast<OpId>(n));
    for (size_t i = 0; i < n; ++i) {
      for (const OpId *d = DependentsBegin(i), *e = DependentsEnd(i); d != e; ++d)
        ++ops_[*d].pending;
    }
    LinkQueues();
    last_part_ = {};
    result_.memory.resize(p.Ranks());
    for (double s : options.comm_interference) interference_ = interference_ || s != 0;
    result_.interference_on = interference_;
    if (interference_) {
      running_.assign(p.Ranks(), RunningCompute());
      in_flight_.assign(p.Ranks(), {});
    }
    current_.assign(p.Ranks(), {});
    record_curve_.assign(p.Ranks(), 0);
    for (int r : options.memory_curve_ranks) record_curve_[r] = 1;
    sim_.Reserve(1024);
  }

  // Appends op `id`'s replay record; a compute op's work is timed here, off the event
  // loop, once per distinct work.
  void AddRecord(OpId id, const ComputeModel& compute) {
    const Op& op = p_.op(id);
    ReplayOp& r = ops_.emplace_back();
    r.queue = op.rank * kStreamCount + static_cast<uint32_t>(op.stream);
    r.dependents = p_.DependentsOffset(id);
    switch (op.kind) {
      case OpKind::kCompute:
        r.ref = op.work;
        r.kind_bits = static_cast<uint32_t>(Kind::kCompute);
        if (work_times_[op.work] < SimTime::Zero()) {
          work_times_[op.work] = ComputeTime(p_.WorkOf(op), compute);
        }
        return;
      case OpKind::kComm:
        r.ref = static_cast<uint32_t>(op.comm);
        r.kind_bits =
            static_cast<uint32_t>(p_.comms()[op.comm].parts == 1 ? Kind::kSolo : Kind::kShared);
        if (r.kind() == Kind::kShared) AddPart(id, op.comm);
        return;
      case OpKind::kMemory:
        r.ref = op.work;
        r.kind_bits = static_cast<uint32_t>(Kind::kMemory);
        r.category_bits = static_cast<uint32_t>(op.category);
        return;
    }
  }

  // Points each (rank, stream) queue at its first op, and each op at the next.
  void LinkQueues() {
    queues_.assign(static_cast<size_t>(p_.Ranks()) * kStreamCount, Queue());
    for (int r = 0; r < p_.Ranks(); ++r) {
      for (int s = 0; s < kStreamCount; ++s) {
        const std::vector<OpId>& ops = p_.StreamOps(r, static_cast<Stream>(s));
        if (ops.empty()) continue;
        queues_[r * kStreamCount + s].head = ops.front();
        for (size_t k = 1; k < ops.size(); ++k) ops_[ops[k - 1]].next_in_queue = ops[k];
      }
    }
  }

  // Links part `id` of a collective of several replayed parts into its list.
  void AddPart(OpId id, int32_t comm) {
    ReplayComm& rc = comms_[comm];
    if (rc.first == kNone) {
      rc.first = id;
    } else {
      ops_[last_part_[comm]].next_part = id;
    }
    last_part_[comm] = id;
    ++rc.parts;
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
    SimTime last = SimTime::Zero();
    for (SimTime t : result_.end) last = std::max(last, t);
    result_.step_time = last;
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
      ReplayOp& op = ops_[id];
      if (op.pending > 0) return;
      q.started = true;
      Prefetch(id, op);
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

  // The program does not fit in cache: while an op starts, fetch the record of the next
  // op of its queue and those of the ops that wait for it (touched when it finishes).
  void Prefetch(OpId id, const ReplayOp& op) const {
    if (op.next_in_queue != kNone) __builtin_prefetch(&ops_[op.next_in_queue]);
    for (const OpId *d = DependentsBegin(id), *e = DependentsEnd(id); d != e; ++d) {
      __builtin_prefetch(&ops_[*d], 1);
    }
  }

  const OpId* DependentsBegin(size_t id) const { return p_.Dependents() + ops_[id].dependents; }
  const OpId* DependentsEnd(size_t id) const { return p_.Dependents() + ops_[id + 1].dependents; }

  void StartCompute(OpId id, const ReplayOp& op) {
    if (!interference_) {
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
  }

  // Schedules the end of `rank`'s running compute op at its current rate.
  void ScheduleCompute(uint32_t rank) {
    RunningCompute& rc = running_[rank];
    const OpId id = rc.op;
    const auto left = static_cast<int64_t>(std::llround(rc.left_ps * (1 + rc.slowdown)));
    rc.event = sim_.ScheduleAt(rc.since + SimTime::Picoseconds(left), [this, id, rank] {
      running_[rank].op = kNone;
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
    return s;
  }

  // A communication op of kind `op` starts (delta 1) or ends (-1) on `rank`: the compute
  // op running there, if any, continues at the new rate from now on.
  void CommChanges(uint32_t rank, CommOp op, int delta) {
    const int k = static_cast<int>(op);
    if (!interference_ || options_.comm_interference[k] == 0) return;
    in_flight_[rank][k] = static_cast<uint16_t>(in_flight_[rank][k] + delta);
    RunningCompute& rc = running_[rank];
    if (rc.op == kNone) return;
    const double s = SlowdownOf(rank);
    if (s == rc.slowdown) return;
    Progress(rc);
    rc.slowdown = s;
    sim_.Cancel(rc.event);
    ScheduleCompute(rank);
  }

  // The callback captures only the op (16 bytes with `this`: std::function keeps it
  // without allocating); the rest is looked up when it runs.
  void StartSolo(OpId id, const ReplayOp& op) {
    const Comm& c = p_.comms()[op.ref];
    static const std::vector<std::vector<int>> kNoMirrors;
    const auto& mirrors = options_.mirrors.empty() ? kNoMirrors : options_.mirrors[c.group];
    CommChanges(op.queue / kStreamCount, c.op, 1);
    network_.Start(
        sim_, c.op, p_.groups()[c.group], c.bytes,
        [this, id] {
          CommChanges(ops_[id].queue / kStreamCount, p_.comms()[ops_[id].ref].op, -1);
          Finish(id);
          Drain();
        },
        mirrors);
  }

  void Arrive(int32_t comm) {
    ReplayComm& rc = comms_[comm];
    if (++rc.arrived < rc.parts) return;
    const Comm& c = p_.comms()[comm];
    for (uint32_t i = rc.first; i != kNone; i = ops_[i].next_part) {
      result_.start[i] = sim_.Now();
      CommChanges(ops_[i].queue / kStreamCount, c.op, 1);
    }
    static const std::vector<std::vector<int>> kNoMirrors;
    const auto& mirrors = options_.mirrors.empty() ? kNoMirrors : options_.mirrors[c.group];
    network_.Start(
        sim_, c.op, p_.groups()[c.group], c.bytes,
        [this, first = rc.first, kind = c.op] {
          for (uint32_t i = first; i != kNone; i = ops_[i].next_part) {
            CommChanges(ops_[i].queue / kStreamCount, kind, -1);
            Finish(i);
          }
          Drain();
        },
        mirrors);
  }

  // Marks an op finished: its queue moves on and its dependents may become ready.
  void Finish(OpId id) {
    ReplayOp& op = ops_[id];
    result_.end[id] = sim_.Now();
    const uint32_t rs = op.queue;
    Queue& q = queues_[rs];
    assert(q.started && q.head == id);
    q.head = op.next_in_queue;
    q.started = false;
    worklist_.push_back(rs);
    for (const OpId *d = DependentsBegin(id), *e = DependentsEnd(id); d != e; ++d) {
      ReplayOp& w = ops_[*d];
      if (--w.pending == 0) worklist_.push_back(w.queue);
    }
  }

  void ApplyMemory(const ReplayOp& op) {
    const uint32_t rank = op.queue / kStreamCount;
    auto& cur = current_[rank];
    DeviceMemory& mem = result_.memory[rank];
    cur[static_cast<int>(op.category())] += p_.works()[op.ref].work.bytes;
    double total = 0;
    for (double b : cur) total += b;
    if (total > mem.peak_bytes) {
      mem.peak_bytes = total;
      mem.at_peak = cur;
    }
    if (record_curve_[rank]) mem.curve.push_back({sim_.Now(), total});
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
  Network& network_;
  const ReplayOptions& options_;
  Simulator sim_;
  ReplayResult result_;
  std::vector<Queue> queues_;  // ranks x kStreamCount
  // Per op and per collective. The arrays of the last replay on this thread are reused:
  // a sweep replays thousands of programs of millions of ops, and fresh pages for them
  // (a page fault and a clear per 4 KiB) cost more than refilling old ones. A replay
  // runs start to end on one thread, never nested.
  static std::vector<ReplayOp>& OpBuffer() {
    thread_local std::vector<ReplayOp> buffer;
    return buffer;
  }
  static std::vector<ReplayComm>& CommBuffer() {
    thread_local std::vector<ReplayComm> buffer;
    return buffer;
  }
  std::vector<ReplayOp>& ops_ = OpBuffer();
  std::vector<ReplayComm>& comms_ = CommBuffer();
  std::vector<uint32_t> last_part_;  // per collective, while the records are built
  std::vector<uint32_t> worklist_;
  std::vector<std::array<double, kMemCategoryCount>> current_;
  // Interference (ReplayOptions::comm_interference): per rank, the compute op running on
  // it (RunningCompute), and the communication ops in flight by kind.
  bool interference_ = false;
  std::vector<RunningCompute> running_;
  std::vector<std::array<uint16_t, kCommOpCount>> in_flight_;
  // Per entry of the program's works table: its ComputeModel time (-1 ps: not timed);
  // ReplayResult::work_times in the end.
  std::vector<SimTime> work_times_;
  std::vector<uint8_t> record_curve_;
};

}  // namespace

SimTime SlowedBy(SimTime t, const std::vector<double>& slowdown, int rank) {
  if (slowdown.empty() || slowdown[rank] == 1.0) return t;
  return SimTime::Seconds(t.seconds() * slowdown[rank]);
}

SimTime ReplayResult::ComputeTime(const Program& p, OpId id) const {
  const Op& op = p.op(id);
  return SlowedBy(work_times[op.work], compute_slowdown, op.rank);
}

SimTime ReplayResult::Interference(const Program& p, OpId id) const {
  if (!interference_on || p.op(id).kind != OpKind::kCompute) return SimTime::Zero();
  return std::max(SimTime::Zero(), end[id] - start[id] - ComputeTime(p, id));
}

ReplayResult Replay(const Program& program, const ComputeModel& compute, Network& network,
                    const ReplayOptions& options) {
  return Replayer(program, compute, network, options).Run();
}

}  // namespace meshsim

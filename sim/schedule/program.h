// A Program: every rank's operations for one training step, ready to replay.
//
// Each rank has one in-order queue per Stream (like CUDA streams). An op starts when it
// is at the head of its queue and every op it depends on has finished. Ops are stored
// in one flat array and referred to by 32-bit index; dependency edges are kept as each
// op's dependents (a lone one in its record, more in a list), built by Seal() for the ops
// added since the last Seal() and by Finalize() for the rest.
//
// Op kinds:
//  - kCompute: a kernel on the compute stream; its time comes from a ComputeModel.
//  - kComm: one rank's part of a collective (a point-to-point transfer is a collective of
//    two). A collective starts when every participant's part is ready and ends for all
//    of them at once.
//  - kMemory: allocate (bytes > 0) or free (bytes < 0) device memory of a category;
//    takes no time.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "sim/core/collective_kinds.h"
#include "sim/core/expert_routing.h"
#include "sim/schedule/comm_record.h"
#include "sim/schedule/op.h"
#include "sim/schedule/replay_record.h"
#include "sim/workload/compute_model.h"

namespace meshsim {

// A rank to be copied from another (Program::InterleaveCopies): its rank, the rank it
// copies, and the collective its k-th comm part joins (as Program::CloneRank's `comms`).
struct RankCopy {
  int rank = 0;
  int from = 0;
  std::vector<int32_t> comms;
};

class Program {
 public:
  explicit Program(int ranks);
  ~Program();
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  Program(Program&&) = default;
  Program& operator=(Program&&) = default;

  int Ranks() const { return ranks_; }

  // Appends a compute kernel to `rank`'s compute stream.
  OpId AddCompute(int rank, Tag tag, KernelWork work, int layer = -1, int micro_batch = -1,
                  double recompute_flops = 0);
  // Appends a compute kernel to `rank`'s side compute stream (Stream::kSideCompute).
  OpId AddSideCompute(int rank, Tag tag, KernelWork work, int layer = -1, int micro_batch = -1);
  // Appends to `rank`'s host stream (Stream::kHost) an op that takes `launches` kernel
  // launches of host time (IsHostLaunch work; 0 launches: a synchronisation point), the
  // last `trailing` of them not waited for by the ops that depend on it (HostRelease), and
  // `expert_units` local experts' host work of `grouped_calls` GroupedLinear calls among
  // the launches (HostExpertUnits, HostGroupedCalls).
  OpId AddHost(int rank, Tag tag, int32_t launches, int layer = -1, int micro_batch = -1,
               int32_t trailing = 0, int32_t expert_units = 0, int32_t grouped_calls = 0);
  // Appends an allocation (bytes > 0) or free (bytes < 0) to a stream of `rank`.
  OpId AddMemory(int rank, Stream stream, MemCategory category, double bytes);
  // Registers a group of ranks (in ring order); identical groups share an index.
  int32_t AddGroup(const std::vector<int>& ranks);
  // Creates a collective over `group`; each participant then calls AddCommPart.
  int32_t AddComm(CommOp op, int32_t group, double bytes);
  // Appends `rank`'s part of collective `comm` to one of its streams.
  OpId AddCommPart(int rank, Stream stream, int32_t comm, Tag tag, int layer = -1,
                   int micro_batch = -1);
  // With `on`, every later collective part except the pipeline's sends and receives, and
  // every later op on the compute stream, waits for the rank's previous one of them: the
  // collectives run in program order between the kernels, one at a time, and overlap
  // nothing (XLA without async collectives). Their streams stay as given, so that the
  // time breakdown and the trace still tell them apart. Call before the first Add*.
  void SerializeCollectives(bool on);
  // `after` may not start before `before` has finished. Neither may be sealed (Seal()).
  void AddDep(OpId before, OpId after);
  // Adds kernel shapes to the program's table; KernelWork::shapes holds the index returned.
  int32_t AddShapes(KernelShapes shapes);
  // The shapes of a compute op's work, or nullptr when it has none.
  const KernelShapes* ShapesOf(const KernelWork& w) const {
    return w.shapes < 0 ? nullptr : &shapes_[w.shapes];
  }
  size_t ShapesCount() const { return shapes_.size(); }
  // An op's work (OpWork), and the table of distinct works ops refer to by Op::work.
  uint32_t WorkIndexOf(const Op& op) const {
    return op.kind == OpKind::kComm ? signatures_[comms_[op.comm].signature].work : op.work;
  }
  const KernelWork& WorkOf(const Op& op) const { return works_[WorkIndexOf(op)].work; }
  double RecomputeFlopsOf(const Op& op) const { return works_[WorkIndexOf(op)].recompute_flops; }
  const std::vector<OpWork>& works() const { return works_; }

  // Makes room for about `ops` ops (and their records) and `deps` dependencies in total.
  void Reserve(size_t ops, size_t deps);
  // Builds the dependents lists of the ops added since the last Seal(): no later AddDep
  // may name one of them. A builder that emits one rank at a time, whose dependencies stay
  // within a rank, seals after each rank: the edges waiting for their lists then stay as
  // few as one rank has, in a buffer reused, instead of a list of the program's every edge
  // (~50 MB at 3,072 GPUs of GPT-1T). O(ops and edges since the last Seal()).
  void Seal();
  // Ops added so far whose dependents lists are built (Seal()).
  size_t SealedOps() const { return sealed_ops_; }
  // Dependencies added so far.
  size_t DepCount() const { return sealed_deps_ + edges_.size(); }
  // Seals the last ops and ends the lists. Call once, after the last Add*; no Add*
  // afterwards.
  void Finalize();
  // After Finalize(), before a replay: renumbers the ops so that the ranks of each group,
  // which run alike at about the same time (a pipeline stage's ranks in full replay),
  // interleave: the first op of each rank of the group (in the order listed), then the
  // second of each, and so on, group after group, then the ops of ranks in no group; and
  // the collectives in the order of their first parts. The replay then finds the ops it
  // runs together side by side in memory instead of one rank's program apart. Each rank's
  // ops keep their order, and so do each queue, each dependents list and each collective's
  // parts; the replay gives the same results. Requires each rank's ops to be added one
  // rank after another (as StepBuilder does) and the ranks of a group to have as many ops
  // each; otherwise (or when no group has two ranks) the program stays as it is. Returns
  // whether it renumbered. O(ops and edges); buffers of one group's ops (where groups keep
  // the span of ids they had, as a StepBuilder's stages do; else a second dependents array
  // and a walk of permutation cycles).
  bool InterleaveRanks(const std::vector<std::vector<int>>& groups);
  // While ops are added: interleaves the ops added since op `begin` as InterleaveRanks
  // interleaves a group of the ranks that added them, in the order they were added, and
  // gives the program after Finalize() the ids, lists and collective numbers InterleaveRanks
  // would give it. A builder calls it once a group's last rank is added and sealed, while
  // the group's ops are still in cache, instead of InterleaveRanks after Finalize(), which
  // reads the program from memory again (GPT-1T full replay at 3,072 GPUs: 8 M ops).
  // Requires: ops since `begin` sealed (Seal()), added one rank after another, every rank
  // with as many, all its ops and no dependency outside its own ops. A collective's parts
  // are then listed in id order (the order added where, as in a StepBuilder's stage, each
  // rank adds the same collective as its k-th op alike). Returns whether it interleaved
  // (not: the program as it was). O(the ops since `begin`).
  bool InterleaveAdded(OpId begin);
  // While ops are added: appends rank `rank`'s copy of the ops [begin, end), one other
  // rank's whole program, sealed (Seal()) and with no dependency outside its own ops, whose
  // lists of dependents are dependents_[deps_begin, deps_end) (DependentLists()): records
  // and infos as theirs, ids, queues and lists moved to the copy, the k-th comm part
  // joining collective comms[k] instead. Equals adding the same ops with the same calls
  // (AddCompute, AddCommPart, AddDep, ...) for `rank` and sealing them; a builder copies a
  // rank whose program differs from one added only in its collectives' groups
  // (StepBuilder::CloneRank). Requires: `rank` has no ops yet, collectives not serialized
  // (SerializeCollectives). O(end - begin).
  void CloneRank(OpId begin, OpId end, size_t deps_begin, size_t deps_end, int rank,
                 const std::vector<int32_t>& comms);
  // How many ops CloneRank and InterleaveCopies added.
  size_t ClonedOps() const { return cloned_ops_; }
  // While ops are added: CloneRank for each of `copies` in turn, then InterleaveAdded(begin),
  // in one pass that reads each rank's records once from a buffer of the ranks added since
  // `begin` (the copies' originals among them) and writes the stage once, in new id order.
  // Returns false, having changed nothing, where InterleaveAdded would not interleave the
  // ranks and their copies; the caller then copies and interleaves apart.
  bool InterleaveCopies(OpId begin, const std::vector<RankCopy>& copies);

  size_t OpCount() const { return records_.size() - (finalized_ ? 1 : 0); }
  Op op(OpId id) const;
  // Every op, in id order: `for (const Op& op : program.ops())`, ops()[id], ops().size().
  class OpRange {
   public:
    class Iterator {
     public:
      using iterator_category = std::forward_iterator_tag;
      using value_type = Op;
      using difference_type = std::ptrdiff_t;
      using pointer = const Op*;
      using reference = Op;
      Iterator(const Program* p, OpId id) : p_(p), id_(id) {}
      Op operator*() const { return p_->op(id_); }
      Iterator& operator++() {
        ++id_;
        return *this;
      }
      bool operator==(const Iterator& o) const { return id_ == o.id_; }

     private:
      const Program* p_;
      OpId id_;
    };
    explicit OpRange(const Program* p) : p_(p) {}
    Iterator begin() const { return Iterator(p_, 0); }
    Iterator end() const { return Iterator(p_, static_cast<OpId>(p_->OpCount())); }
    size_t size() const { return p_->OpCount(); }
    Op operator[](OpId id) const { return p_->op(id); }

   private:
    const Program* p_;
  };
  OpRange ops() const { return OpRange(this); }
  // Op `id`'s info. O(log of the runs of interleaved stages whose infos are kept once).
  const OpInfo& Info(OpId id) const;
  // How many OpInfos the program keeps: OpCount(), less where the ranks of a stage
  // interleaved by InterleaveAdded share theirs.
  size_t InfoCount() const { return infos_.size(); }
  // Collective `c` (index into comms(), as Op::comm names it).
  Comm comm(size_t c) const {
    const CommRecord& r = comms_[c];
    const CommSignature& s = signatures_[r.signature];
    return Comm{s.op, s.group, s.bytes, r.parts, s.work, r.first_part, r.signature};
  }
  // Every collective, by value: `for (const Comm& c : program.comms())`, comms()[c],
  // comms().size().
  class CommRange {
   public:
    class Iterator {
     public:
      using iterator_category = std::forward_iterator_tag;
      using value_type = Comm;
      using difference_type = std::ptrdiff_t;
      using pointer = const Comm*;
      using reference = Comm;
      Iterator(const Program* p, size_t c) : p_(p), c_(c) {}
      Comm operator*() const { return p_->comm(c_); }
      Iterator& operator++() {
        ++c_;
        return *this;
      }
      bool operator==(const Iterator& o) const { return c_ == o.c_; }

     private:
      const Program* p_;
      size_t c_;
    };
    explicit CommRange(const Program* p) : p_(p) {}
    Iterator begin() const { return Iterator(p_, 0); }
    Iterator end() const { return Iterator(p_, size()); }
    size_t size() const { return p_->comms_.size(); }
    bool empty() const { return p_->comms_.empty(); }
    Comm operator[](size_t c) const { return p_->comm(c); }

   private:
    const Program* p_;
  };
  CommRange comms() const { return CommRange(this); }
  // The collectives as the replay reads them (comms().size() of them), and their
  // signatures: collectives of one kind, group and bytes share one (the first collective
  // added with them made it).
  const CommRecord* CommRecords() const { return comms_.data(); }
  const std::vector<CommSignature>& signatures() const { return signatures_; }
  const std::vector<std::vector<int>>& groups() const { return groups_; }
  // The MoE routing whose fan-out the kExpertDispatch collectives take (a dense model's:
  // none).
  void SetExpertRouting(const ExpertRouting& r) { expert_routing_ = r; }
  const ExpertRouting& expert_routing() const { return expert_routing_; }
  StreamRange StreamOps(int rank, Stream s) const {
    return StreamRange(records_.data(), StreamHead(rank * kStreamCount + static_cast<int>(s)));
  }
  // The first op of queue rank * kStreamCount + stream (kNoOp: none).
  OpId StreamHead(size_t queue) const { return stream_heads_[queue]; }
  // Its last op (kNoOp: none): a queue's ops are in id order, so a rank's last op in id
  // order is the latest of its queues' last ops.
  OpId StreamTail(size_t queue) const { return stream_tails_[queue]; }
  // Per op, and one past the last (ReplayRecord).
  const ReplayRecord* Records() const { return records_.data(); }
  // Records() for a replay, which counts their `pending` down (and the collectives'
  // Comm::waiting): every count is the op's number of dependencies (the collective's
  // parts), counted again where an earlier replay spent them. After Finalize().
  const ReplayRecord* RecordsForReplay() const;
  // After Finalize(): the parts of collective `c`, c.parts ops in the order they were
  // added (AddCommPart), which is their ids' order unless InterleaveRanks renumbered them.
  const OpId* PartsBegin(const Comm& c) const { return parts_.data() + c.first_part; }
  const OpId* PartsEnd(const Comm& c) const { return PartsBegin(c) + c.parts; }
  const OpId* PartsBegin(const CommRecord& c) const { return parts_.data() + c.first_part; }
  const OpId* PartsEnd(const CommRecord& c) const { return PartsBegin(c) + c.parts; }
  // Ops that compute, by work: the works (indices into works()) that compute ops have, in
  // the order their first op was added.
  const std::vector<uint32_t>& ComputeWorks() const { return compute_works_; }
  // Whether any op is on a side compute stream (Stream::kSideCompute).
  bool HasSideCompute() const { return has_side_compute_; }
  // After Seal(): the ops that wait for `id`, in the order their AddDep came (a lone one
  // in its record, ReplayRecord::Deps).
  const OpId* DependentsBegin(OpId id) const { return DependentsBegin(records_[id]); }
  const OpId* DependentsEnd(OpId id) const { return DependentsEnd(records_[id]); }
  const OpId* DependentsBegin(const ReplayRecord& r) const {
    switch (r.deps()) {
      case ReplayRecord::Deps::kNone:
        return nullptr;
      case ReplayRecord::Deps::kOne:
        return &r.dependents;
      case ReplayRecord::Deps::kList:
        break;
    }
    return dependents_.data() + r.dependents + 1;
  }
  const OpId* DependentsEnd(const ReplayRecord& r) const {
    switch (r.deps()) {
      case ReplayRecord::Deps::kNone:
        return nullptr;
      case ReplayRecord::Deps::kOne:
        return &r.dependents + 1;
      case ReplayRecord::Deps::kList:
        break;
    }
    return dependents_.data() + r.dependents + 1 + dependents_[r.dependents];
  }
  // The lists of the ops with more than one dependent (Deps::kList), each its length then
  // its ops.
  const std::vector<OpId>& DependentLists() const { return dependents_; }

 private:
  OpId Push(const Op& op, ReplayRecord::Kind kind, uint32_t ref);
  OpId PushCompute(Op op, const OpWork& w);  // a compute op (op.work set from w)
  void AddPart(OpId id, int32_t comm);
  void ListParts();
  // Finalize(), after InterleaveAdded: collectives renumbered as InterleaveRanks does.
  void RenumberCommsByFirstPart();
  void Serialize(OpId id);
  // The index of `w` in works_, added if new. Works are equal when their bits are: the
  // replay then times equal works once and gives them the same time.
  uint32_t InternWork(const OpWork& w);
  void GrowWorkIndex();
  // The index of (op, group, bytes) in signatures_, added if new (bytes equal by bits).
  uint32_t InternSignature(CommOp op, int32_t group, double bytes);
  void GrowSignatureIndex();

  int ranks_;
  bool has_side_compute_ = false;
  ExpertRouting expert_routing_;
  bool serialize_collectives_ = false;
  bool finalized_ = false;
  mutable bool pending_spent_ = false;  // a replay has counted the records' `pending` down
  bool interleaved_added_ = false;      // InterleaveAdded renumbered some ops
  // With serialize_collectives_: per rank, the last op of the serial order (none: -1).
  std::vector<int64_t> last_serial_;
  // A run of ops whose infos are infos_[offset + (id - first) / ranks] (ranks 1: one an
  // op; more: a stage interleaved by InterleaveAdded whose ranks' infos are alike, kept
  // once), up to the next run's first op.
  struct InfoRun {
    OpId first = 0;
    uint32_t ranks = 1;
    uint32_t offset = 0;
  };
  // Writes the infos of the `ranks` x `count` ops from `begin` (interleaved, op k of rank
  // j at begin + k * ranks + j) from `old`, their ranks' infos one rank after another: once
  // where every rank's are alike, else op by op. Their slots in infos_ begin at the run
  // that holds `begin`'s, which ends there. O(ranks x count).
  void PutInterleavedInfos(OpId begin, uint32_t ranks, uint32_t count,
                           const std::vector<OpInfo>& old);
  // Gives every op its own info again (one run of ranks 1), for InterleaveRanks.
  void ExpandInfos();
  std::vector<OpInfo> infos_;       // per op, or per rank's op of a run (info_runs_)
  std::vector<InfoRun> info_runs_;  // by first op; the first begins at op 0
  std::vector<CommRecord> comms_;
  std::vector<CommSignature> signatures_;
  std::vector<KernelShapes> shapes_;
  std::vector<OpWork> works_;
  // Open addressing over works_ (kNoWork: empty slot); size a power of two, at most half full.
  static constexpr uint32_t kNoWork = UINT32_MAX;
  std::vector<uint32_t> work_index_;
  // The same over signatures_.
  std::vector<uint32_t> signature_index_;
  std::vector<std::vector<int>> groups_;
  struct GroupHash {
    size_t operator()(const std::vector<int>& g) const;
  };
  std::unordered_map<std::vector<int>, int32_t, GroupHash> group_index_;
  std::vector<ReplayRecord> records_;  // per op; after Finalize(), one more
  // Per (rank, stream) queue: its first op, and while ops are added its last.
  std::vector<OpId> stream_heads_, stream_tails_;
  std::vector<uint32_t> compute_works_;
  std::vector<uint8_t> is_compute_work_;  // per work: whether it is in compute_works_
  // Dependencies added since the last Seal() (before, after), in the order added.
  std::vector<std::pair<OpId, OpId>> edges_;
  size_t sealed_ops_ = 0;   // ops [0, sealed_ops_) have their dependents (Seal())
  size_t sealed_deps_ = 0;  // their number
  size_t cloned_ops_ = 0;   // added by CloneRank and InterleaveCopies
  // The lists of ops with more than one dependent: each its length, then its ops.
  std::vector<OpId> dependents_;
  // After Finalize(): every collective's parts, collective by collective (Comm::first_part).
  std::vector<OpId> parts_;
};

}  // namespace meshsim

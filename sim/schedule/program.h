// A Program: every rank's operations for one training step, ready to replay.
//
// Each rank has one in-order queue per Stream (like CUDA streams). An op starts when it
// is at the head of its queue and every op it depends on has finished. Ops are stored
// in one flat array and referred to by 32-bit index; dependency edges are kept as a
// compressed adjacency list built by Finalize().
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
#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "sim/core/collective_kinds.h"
#include "sim/workload/compute_model.h"

namespace meshsim {

enum class Stream : uint8_t {
  kCompute,
  kTp,        // tensor-parallel collectives
  kCp,        // context-parallel exchanges
  kEp,        // expert-parallel all-to-all
  kDp,        // gradient reduction
  kDpGather,  // ZeRO parameter all-gathers
  kSendNext,  // pipeline: to the next stage
  kSendPrev,  // pipeline: to the previous stage
  kRecvPrev,  // pipeline: from the previous stage
  kRecvNext,  // pipeline: from the next stage
  kTpBack,    // tensor-parallel ring shifts the other way round (bidirectional collective matmul)
};
constexpr int kStreamCount = 11;
std::string_view StreamName(Stream s);
bool IsPipelineStream(Stream s);

enum class OpKind : uint8_t { kCompute, kComm, kMemory };

// Device memory by purpose. kActivations: tensors stored by forward for backward.
// kBuffers: short-lived working memory: ZeRO-3's gathered parameters and activations
// recomputed during one layer's backward.
enum class MemCategory : uint8_t { kWeights, kGradients, kOptimizer, kActivations, kBuffers };
constexpr int kMemCategoryCount = 5;
std::string_view MemCategoryName(MemCategory c);

// What an op is, for traces and time accounting.
enum class Tag : uint8_t {
  kEmbeddingFwd,
  kAttentionFwd,
  kMlpFwd,
  kLogitsFwd,
  kLogitsBwd,
  kAttentionBwd,  // input gradients (dgrad)
  kMlpBwd,
  kAttentionWgrad,  // weight gradients
  kMlpWgrad,
  kEmbeddingBwd,
  kAttentionRecompute,
  kMlpRecompute,
  kMoeRouterFwd,
  kMoeExpertsFwd,
  kMoeExpertsBwd,  // input gradients
  kMoeExpertsWgrad,
  kMoeRouterBwd,
  kOptimizerStep,
  kParamCopy,  // FSDP2's copy-out of gathered parameters / copy-in of gradients
  kTpComm,
  kCpComm,
  kEpComm,
  kDpGradReduce,
  kZeroGather,
  kPpActivation,
  kPpGradient,
  kMemory,
  kOther,
};
std::string_view TagName(Tag t);

// What an op does, beyond its kind: a compute op's KernelWork and the part of its FLOPs that
// re-runs forward work; a memory op's delta in work.bytes; a collective part's collective
// bytes in work.bytes. Ops of one step mostly repeat each other's work (every rank, layer
// and micro-batch), so the Program keeps each distinct OpWork once and ops refer to it.
struct OpWork {
  KernelWork work;
  double recompute_flops = 0;  // kCompute: part of work.flops that re-runs forward work
};

// One op of a Program: 24 bytes, as a full replay of a large cluster holds millions
// (issue 14 asks at most 64). Its OpWork is Program::WorkOf(op).
struct Op {
  OpKind kind = OpKind::kCompute;
  Stream stream = Stream::kCompute;
  Tag tag = Tag::kOther;
  MemCategory category = MemCategory::kBuffers;  // kMemory only
  int32_t rank = 0;
  int32_t layer = -1;        // -1: not tied to a layer
  int32_t micro_batch = -1;  // -1: not tied to a micro-batch
  union {
    int32_t comm = -1;  // kComm: index into Program::comms() (its work is the collective's)
    uint32_t work;      // kCompute, kMemory: index into Program::works()
  };
  // After Finalize(): where its dependents begin in Program::Dependents() (they end where
  // the next op's begin).
  uint32_t dependents = 0;
};
static_assert(sizeof(Op) <= 32, "an op record stays small: millions are replayed at once");

// One collective (or transfer) shared by the ops of its participants.
struct Comm {
  CommOp op = CommOp::kAllReduce;
  int32_t group = 0;  // index into Program::groups()
  double bytes = 0;   // nccl-tests convention, see CollectiveModel
  int32_t parts = 0;  // participants' ops added so far (AddCommPart)
  uint32_t work = 0;  // its parts' OpWork: `bytes` (index into Program::works())
};

using OpId = uint32_t;

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
  // `after` may not start before `before` has finished.
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
    return op.kind == OpKind::kComm ? comms_[op.comm].work : op.work;
  }
  const KernelWork& WorkOf(const Op& op) const { return works_[WorkIndexOf(op)].work; }
  double RecomputeFlopsOf(const Op& op) const { return works_[WorkIndexOf(op)].recompute_flops; }
  const std::vector<OpWork>& works() const { return works_; }

  // Makes room for about `ops` ops (and their dependencies) in total, and on each stream
  // of `ranks` for as many ops as `like` has on it.
  void Reserve(size_t ops, int like, const std::vector<int>& ranks);
  // Builds the adjacency lists. Call once, after the last Add*; no Add* afterwards.
  void Finalize();

  size_t OpCount() const { return ops_.size(); }
  const Op& op(OpId id) const { return ops_[id]; }
  const std::vector<Op>& ops() const { return ops_; }
  const std::vector<Comm>& comms() const { return comms_; }
  const std::vector<std::vector<int>>& groups() const { return groups_; }
  const std::vector<OpId>& StreamOps(int rank, Stream s) const {
    return streams_[rank * kStreamCount + static_cast<int>(s)];
  }
  // After Finalize(): the ops that wait for `id`.
  const OpId* DependentsBegin(OpId id) const { return Dependents() + DependentsOffset(id); }
  const OpId* DependentsEnd(OpId id) const { return Dependents() + DependentsOffset(id + 1); }
  // The same lists as one array: op `id`'s dependents are
  // Dependents()[DependentsOffset(id) .. DependentsOffset(id + 1)).
  const OpId* Dependents() const { return dependents_.data(); }
  uint32_t DependentsOffset(OpId id) const {
    return id < ops_.size() ? ops_[id].dependents : static_cast<uint32_t>(dependents_.size());
  }

 private:
  OpId Push(const Op& op);
  void Serialize(OpId id);
  // The index of `w` in works_, added if new. Works are equal when their bits are: the
  // replay then times equal works once and gives them the same time.
  uint32_t InternWork(const OpWork& w);
  void GrowWorkIndex();

  int ranks_;
  bool serialize_collectives_ = false;
  bool finalized_ = false;
  // With serialize_collectives_: per rank, the last op of the serial order (none: -1).
  std::vector<int64_t> last_serial_;
  std::vector<Op> ops_;
  std::vector<Comm> comms_;
  std::vector<KernelShapes> shapes_;
  std::vector<OpWork> works_;
  // Open addressing over works_ (kNoWork: empty slot); size a power of two, at most half full.
  static constexpr uint32_t kNoWork = UINT32_MAX;
  std::vector<uint32_t> work_index_;
  std::vector<std::vector<int>> groups_;
  struct GroupHash {
    size_t operator()(const std::vector<int>& g) const;
  };
  std::unordered_map<std::vector<int>, int32_t, GroupHash> group_index_;
  std::vector<std::vector<OpId>> streams_;  // ranks x kStreamCount
  std::vector<std::pair<OpId, OpId>> edges_;
  std::vector<OpId> dependents_;
};

}  // namespace meshsim

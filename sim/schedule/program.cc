#include "sim/schedule/program.h"

#include <algorithm>
#include <bit>
#include <cassert>

#include "sim/core/hash.h"
#include "sim/core/huge_pages.h"
#include "sim/workload/model_spec.h"

namespace meshsim {

namespace {
// The op and record arrays of the last program destroyed on this thread, kept for the
// next one: a sweep builds thousands of programs of millions of ops, and fresh pages for
// them (a page fault and a clear per 4 KiB) cost more than reusing old ones.
std::vector<OpInfo>& SpareOps() {
  thread_local std::vector<OpInfo> spare;
  return spare;
}
std::vector<ReplayRecord>& SpareRecords() {
  thread_local std::vector<ReplayRecord> spare;
  return spare;
}
}  // namespace

Program::Program(int ranks)
    : ranks_(ranks),
      stream_heads_(static_cast<size_t>(ranks) * kStreamCount, kNoOp),
      stream_tails_(static_cast<size_t>(ranks) * kStreamCount, kNoOp) {
  assert(static_cast<uint64_t>(ranks) * kStreamCount <= kMaxQueues);
  infos_.swap(SpareOps());
  infos_.clear();
  info_runs_.push_back(InfoRun{});
  records_.swap(SpareRecords());
  records_.clear();
}

Program::~Program() {
  std::vector<OpInfo>& spare = SpareOps();
  if (infos_.capacity() > spare.capacity()) spare.swap(infos_);
  std::vector<ReplayRecord>& spare_records = SpareRecords();
  if (records_.capacity() > spare_records.capacity()) spare_records.swap(records_);
}

const OpInfo& Program::Info(OpId id) const {
  if (info_runs_.size() == 1) return infos_[id];  // one info an op
  const auto run =
      std::prev(std::upper_bound(info_runs_.begin(), info_runs_.end(), id,
                                 [](OpId v, const InfoRun& r) { return v < r.first; }));
  return infos_[run->offset + (id - run->first) / run->ranks];
}

void Program::PutInterleavedInfos(OpId begin, uint32_t ranks, uint32_t count,
                                  const std::vector<OpInfo>& old) {
  assert(old.size() == size_t{ranks} * count);
  InfoRun& open = info_runs_.back();
  assert(open.ranks == 1 && open.first <= begin);
  const uint32_t at = open.offset + (begin - open.first);
  bool alike = true;
  for (uint32_t j = 1; j < ranks && alike; ++j) {
    alike = std::equal(old.begin(), old.begin() + count, old.begin() + size_t{j} * count);
  }
  if (!alike) {
    for (uint32_t k = 0; k < count; ++k) {
      for (uint32_t j = 0; j < ranks; ++j) infos_[at + k * ranks + j] = old[size_t{j} * count + k];
    }
    return;
  }
  std::copy(old.begin(), old.begin() + count, infos_.begin() + at);
  // The slots past the run's stay, already touched, for the ops added next.
  infos_.resize(at + count);
  if (open.first == begin) {
    open.ranks = ranks;
  } else {
    info_runs_.push_back(InfoRun{begin, ranks, at});
  }
  info_runs_.push_back(InfoRun{begin + ranks * count, 1, at + count});
}

void Program::ExpandInfos() {
  if (info_runs_.size() == 1) return;
  std::vector<OpInfo> all;
  all.reserve(OpCount());
  for (OpId id = 0; id < OpCount(); ++id) all.push_back(Info(id));
  infos_.swap(all);
  info_runs_.assign(1, InfoRun{});
}

Op Program::op(OpId id) const {
  const ReplayRecord& r = records_[id];
  const OpInfo& info = Info(id);
  Op op;
  switch (r.kind()) {
    case ReplayRecord::Kind::kCompute:
      op.kind = OpKind::kCompute;
      op.work = r.ref;
      break;
    case ReplayRecord::Kind::kMemory:
      op.kind = OpKind::kMemory;
      op.work = r.ref;
      break;
    case ReplayRecord::Kind::kShared:
    case ReplayRecord::Kind::kSolo:
      op.kind = OpKind::kComm;
      op.comm = static_cast<int32_t>(r.ref);
      break;
  }
  op.stream = static_cast<Stream>(r.queue % kStreamCount);
  op.tag = info.tag;
  if (r.kind() == ReplayRecord::Kind::kMemory) op.category = r.category();
  op.rank = r.rank();
  op.layer = info.layer;
  op.micro_batch = info.micro_batch;
  return op;
}

// Appends the op and its replay record, linked behind the last op of its queue.
OpId Program::Push(const Op& op, ReplayRecord::Kind kind, uint32_t ref) {
  assert(!finalized_ && "Program is finalized");
  assert(op.rank >= 0 && op.rank < ranks_);
  static_assert(kMaxModelLayers <= kMaxOpLayer, "a model's layer index fits an OpInfo");
  assert(op.layer >= -1 && op.layer <= kMaxOpLayer);
  const OpId id = static_cast<OpId>(records_.size());
  assert(info_runs_.back().ranks == 1 &&
         info_runs_.back().offset + (id - info_runs_.back().first) == infos_.size());
  infos_.push_back(OpInfo{op.tag, static_cast<int16_t>(op.layer), op.micro_batch});
  const uint32_t queue =
      static_cast<uint32_t>(op.rank) * kStreamCount + static_cast<uint32_t>(op.stream);
  ReplayRecord& r = records_.emplace_back();
  r.ref = ref;
  r.queue = queue;
  r.kind_bits = static_cast<uint32_t>(kind);
  if (kind == ReplayRecord::Kind::kMemory) {
    r.category_bits = static_cast<uint32_t>(op.category);
  } else if (kind == ReplayRecord::Kind::kCompute && op.tag == Tag::kOptimizerStep) {
    r.category_bits = ReplayRecord::kOptimizerBits;
  }
  OpId& tail = stream_tails_[queue];
  if (tail == kNoOp) {
    stream_heads_[queue] = id;
  } else {
    records_[tail].next_in_queue = id;
  }
  tail = id;
  if (serialize_collectives_) Serialize(id);
  return id;
}

void Program::SerializeCollectives(bool on) {
  assert(records_.empty());
  serialize_collectives_ = on;
  last_serial_.assign(on ? ranks_ : 0, -1);
}

// Chains op `id` after its rank's last serial op where they are not already ordered by
// being on the compute stream both.
void Program::Serialize(OpId id) {
  const Op op = this->op(id);
  const bool collective = op.kind == OpKind::kComm && !IsPipelineStream(op.stream);
  if (!collective && op.stream != Stream::kCompute) return;
  int64_t& last = last_serial_[op.rank];
  if (last >= 0 && (collective || this->op(static_cast<OpId>(last)).stream != Stream::kCompute)) {
    AddDep(static_cast<OpId>(last), id);
  }
  last = id;
}

OpId Program::AddCompute(int rank, Tag tag, KernelWork work, int layer, int micro_batch,
                         double recompute_flops) {
  Op op;
  op.kind = OpKind::kCompute;
  op.stream = Stream::kCompute;
  op.tag = tag;
  op.rank = rank;
  op.layer = layer;
  op.micro_batch = micro_batch;
  return PushCompute(op, OpWork{work, recompute_flops});
}

OpId Program::AddSideCompute(int rank, Tag tag, KernelWork work, int layer, int micro_batch) {
  Op op;
  op.kind = OpKind::kCompute;
  op.stream = Stream::kSideCompute;
  op.tag = tag;
  op.rank = rank;
  op.layer = layer;
  op.micro_batch = micro_batch;
  has_side_compute_ = true;
  return PushCompute(op, OpWork{work, 0});
}

OpId Program::AddHost(int rank, Tag tag, int32_t launches, int layer, int micro_batch,
                      int32_t trailing, int32_t expert_units, int32_t grouped_calls) {
  Op op;
  op.kind = OpKind::kCompute;
  op.stream = Stream::kHost;
  op.tag = tag;
  op.rank = rank;
  op.layer = layer;
  op.micro_batch = micro_batch;
  return PushCompute(op,
                     OpWork{HostLaunchWork(launches, trailing, expert_units, grouped_calls), 0});
}

OpId Program::PushCompute(Op op, const OpWork& w) {
  op.work = InternWork(w);
  if (op.work >= is_compute_work_.size()) is_compute_work_.resize(works_.size(), 0);
  if (!is_compute_work_[op.work]) {
    is_compute_work_[op.work] = 1;
    compute_works_.push_back(op.work);
  }
  return Push(op, ReplayRecord::Kind::kCompute, op.work);
}

namespace {
// A hash of a work's bits: the fields rotated apart and folded, then mixed once by
// MurmurHash3's finalizer (sim/core/hash.h). Every op added is hashed: one finalizer, not
// one per field.
uint64_t HashOf(const OpWork& w) {
  const uint64_t shape = (uint64_t{static_cast<uint32_t>(w.work.kernels)} << 32) |
                         static_cast<uint32_t>(w.work.shapes);
  return Fmix64(std::bit_cast<uint64_t>(w.work.flops) ^
                std::rotl(std::bit_cast<uint64_t>(w.work.bytes), 17) ^ std::rotl(shape, 31) ^
                std::rotl(std::bit_cast<uint64_t>(w.recompute_flops), 47));
}

bool SameBits(const OpWork& a, const OpWork& b) {
  return std::bit_cast<uint64_t>(a.work.flops) == std::bit_cast<uint64_t>(b.work.flops) &&
         std::bit_cast<uint64_t>(a.work.bytes) == std::bit_cast<uint64_t>(b.work.bytes) &&
         a.work.kernels == b.work.kernels && a.work.shapes == b.work.shapes &&
         std::bit_cast<uint64_t>(a.recompute_flops) == std::bit_cast<uint64_t>(b.recompute_flops);
}
}  // namespace

uint32_t Program::InternWork(const OpWork& w) {
  if (2 * (works_.size() + 1) > work_index_.size()) GrowWorkIndex();
  const size_t mask = work_index_.size() - 1;
  for (size_t i = HashOf(w) & mask;; i = (i + 1) & mask) {
    uint32_t& slot = work_index_[i];
    if (slot == kNoWork) {
      slot = static_cast<uint32_t>(works_.size());
      works_.push_back(w);
      return slot;
    }
    if (SameBits(works_[slot], w)) return slot;
  }
}

void Program::GrowWorkIndex() {
  work_index_.assign(std::max<size_t>(1024, 2 * work_index_.size()), kNoWork);
  const size_t mask = work_index_.size() - 1;
  for (uint32_t k = 0; k < works_.size(); ++k) {
    size_t i = HashOf(works_[k]) & mask;
    while (work_index_[i] != kNoWork) i = (i + 1) & mask;
    work_index_[i] = k;
  }
}

int32_t Program::AddShapes(KernelShapes shapes) {
  shapes_.push_back(std::move(shapes));
  return static_cast<int32_t>(shapes_.size() - 1);
}

OpId Program::AddMemory(int rank, Stream stream, MemCategory category, double bytes) {
  Op op;
  op.kind = OpKind::kMemory;
  op.stream = stream;
  op.tag = Tag::kMemory;
  op.category = category;
  op.rank = rank;
  op.work = InternWork(OpWork{KernelWork{0, bytes}, 0});
  return Push(op, ReplayRecord::Kind::kMemory, op.work);
}

size_t Program::GroupHash::operator()(const std::vector<int>& g) const {
  uint64_t h = 14695981039346656037ull;  // FNV-1a over the ranks
  for (int r : g) h = (h ^ static_cast<uint32_t>(r)) * 1099511628211ull;
  return static_cast<size_t>(h);
}

int32_t Program::AddGroup(const std::vector<int>& ranks) {
  auto [it, inserted] = group_index_.try_emplace(ranks, static_cast<int32_t>(groups_.size()));
  if (inserted) groups_.push_back(ranks);
  return it->second;
}

int32_t Program::AddComm(CommOp op, int32_t group, double bytes) {
  comms_.push_back(CommRecord{InternSignature(op, group, bytes), 0, kNoOp, 0});
  return static_cast<int32_t>(comms_.size() - 1);
}

namespace {
uint64_t HashOf(CommOp op, int32_t group, double bytes) {
  return Fmix64(
      std::bit_cast<uint64_t>(bytes) ^
      std::rotl((uint64_t{static_cast<uint32_t>(group)} << 8) | static_cast<uint8_t>(op), 29));
}
}  // namespace

// A signature's work is interned with it: the first collective of some bytes makes a new
// signature, so that works are added in the order they were before signatures.
uint32_t Program::InternSignature(CommOp op, int32_t group, double bytes) {
  if (2 * (signatures_.size() + 1) > signature_index_.size()) GrowSignatureIndex();
  const size_t mask = signature_index_.size() - 1;
  for (size_t i = HashOf(op, group, bytes) & mask;; i = (i + 1) & mask) {
    uint32_t& slot = signature_index_[i];
    if (slot == kNoWork) {
      slot = static_cast<uint32_t>(signatures_.size());
      signatures_.push_back(
          CommSignature{op, group, bytes, InternWork(OpWork{KernelWork{0, bytes}, 0})});
      return slot;
    }
    const CommSignature& s = signatures_[slot];
    if (s.op == op && s.group == group &&
        std::bit_cast<uint64_t>(s.bytes) == std::bit_cast<uint64_t>(bytes)) {
      return slot;
    }
  }
}

void Program::GrowSignatureIndex() {
  signature_index_.assign(std::max<size_t>(1024, 2 * signature_index_.size()), kNoWork);
  const size_t mask = signature_index_.size() - 1;
  for (uint32_t k = 0; k < signatures_.size(); ++k) {
    const CommSignature& s = signatures_[k];
    size_t i = HashOf(s.op, s.group, s.bytes) & mask;
    while (signature_index_[i] != kNoWork) i = (i + 1) & mask;
    signature_index_[i] = k;
  }
}

OpId Program::AddCommPart(int rank, Stream stream, int32_t comm, Tag tag, int layer,
                          int micro_batch) {
  Op op;
  op.kind = OpKind::kComm;
  op.stream = stream;
  op.tag = tag;
  op.rank = rank;
  op.layer = layer;
  op.micro_batch = micro_batch;
  op.comm = comm;
  const OpId id = Push(op, ReplayRecord::Kind::kSolo, static_cast<uint32_t>(comm));
  AddPart(id, comm);
  return id;
}

// Counts part `id` in. (Whether it is a collective's only part, kSolo, or one of several,
// kShared, ListParts tells: a part's id may change before, InterleaveAdded.)
void Program::AddPart(OpId id, int32_t comm) {
  (void)id;
  ++comms_[comm].parts;
}

// Lists every collective's parts, collective by collective and each in id order: the
// lists' starts from the counts, then one pass over the records in id order with
// CommRecord::waiting as each list's cursor; a part of a collective of several parts becomes
// kShared there (its collective's line is read for the cursor anyway). O(ops).
void Program::ListParts() {
  uint32_t begin = 0;
  for (CommRecord& c : comms_) {
    c.first_part = begin;
    c.waiting = begin;
    begin += static_cast<uint32_t>(c.parts);
  }
  ReserveHuge(parts_, begin);
  parts_.resize(begin);
  const size_t n = records_.size();
  constexpr auto kShared = static_cast<uint32_t>(ReplayRecord::Kind::kShared);
  for (size_t id = 0; id < n; ++id) {
    ReplayRecord& r = records_[id];
    if (r.kind() == ReplayRecord::Kind::kShared || r.kind() == ReplayRecord::Kind::kSolo) {
      CommRecord& c = comms_[r.ref];
      parts_[c.waiting++] = static_cast<OpId>(id);
      if (c.parts > 1) r.kind_bits = kShared;
    }
  }
  for (CommRecord& c : comms_) c.waiting = static_cast<uint32_t>(c.parts);
}

void Program::AddDep(OpId before, OpId after) {
  assert(before < OpCount() && after < OpCount() && before != after);
  assert(before >= sealed_ops_ && "AddDep from a sealed op");
  edges_.emplace_back(before, after);
  ++records_[after].pending;
}

void Program::Reserve(size_t ops, size_t deps) {
  // Collectives have one part op or more: room for one per two ops (address space only:
  // pages are taken as they are written) saves copying millions of them as the array grows.
  ReserveHuge(comms_, ops / 2);
  ReserveHuge(infos_, ops);
  ReserveHuge(records_, ops + 1);
  ReserveHuge(dependents_, deps);
}

// Counts each new op's dependents into ReplayRecord::dependents; gives each op of more
// than one a list (its length, then room for them) with `dependents` at the list's end;
// then puts each edge, last to first, in its op's record (a lone dependent) or its list
// from the back, which leaves the lists in the order the edges were added, and each
// `dependents` at its list's start.
void Program::Seal() {
  assert(!finalized_);
  for (const auto& [before, after] : edges_) ++records_[before].dependents;
  using Deps = ReplayRecord::Deps;
  for (size_t id = sealed_ops_; id < records_.size(); ++id) {
    ReplayRecord& r = records_[id];
    const uint32_t count = r.dependents;
    r.deps_bits = static_cast<uint32_t>(count == 0   ? Deps::kNone
                                        : count == 1 ? Deps::kOne
                                                     : Deps::kList);
    if (count > 1) {
      dependents_.push_back(count);
      dependents_.resize(dependents_.size() + count);
      r.dependents = static_cast<uint32_t>(dependents_.size());
    }
  }
  for (auto e = edges_.rbegin(); e != edges_.rend(); ++e) {
    ReplayRecord& r = records_[e->first];
    if (r.deps() == Deps::kOne) {
      r.dependents = e->second;
    } else {
      dependents_[--r.dependents] = e->second;
    }
  }
  for (size_t id = sealed_ops_; id < records_.size(); ++id) {
    ReplayRecord& r = records_[id];
    if (r.deps() == Deps::kList) --r.dependents;  // from its first op to its length
  }
  sealed_deps_ += edges_.size();
  edges_.clear();
  sealed_ops_ = records_.size();
}

// A record past the last op, without dependents.
void Program::Finalize() {
  Seal();
  if (interleaved_added_) RenumberCommsByFirstPart();
  ListParts();
  records_.emplace_back();
  edges_ = {};
  is_compute_work_ = {};
  finalized_ = true;
}

const ReplayRecord* Program::RecordsForReplay() const {
  assert(finalized_);
  if (pending_spent_) {
    const size_t n = OpCount();
    for (size_t i = 0; i < n; ++i) records_[i].pending = 0;
    for (size_t i = 0; i < n; ++i) {
      const ReplayRecord& r = records_[i];
      for (const OpId* d = DependentsBegin(r); d != DependentsEnd(r); ++d) ++records_[*d].pending;
    }
    for (const CommRecord& c : comms_) c.waiting = static_cast<uint32_t>(c.parts);
  }
  pending_spent_ = true;
  return records_.data();
}

}  // namespace meshsim

// Program::CloneRank: a rank's program copied from another's.
//
// In a full replay the data-parallel replicas of a pipeline stage run the same program:
// the same ops, in the same order, with the same dependencies, their collectives over
// groups moved along the data-parallel axis. Emitting each one op by op through the
// StepBuilder costs ~50 ns an op (GPT-1T at 3,072 GPUs: 8.3 M ops); copying the records
// costs a few.

#include <cassert>
#include <cstdint>
#include <vector>

#include "sim/schedule/program.h"

namespace meshsim {

void Program::CloneRank(OpId begin, OpId end, size_t deps_begin, size_t deps_end, int rank,
                        const std::vector<int32_t>& comms) {
  assert(!finalized_ && !serialize_collectives_ && edges_.empty() && sealed_ops_ == OpCount());
  assert(begin < end && end <= OpCount() && deps_end <= dependents_.size());
  const InfoRun& open = info_runs_.back();
  assert(open.ranks == 1 && open.first <= begin);
  const auto base = static_cast<OpId>(records_.size());
  const OpId moved = base - begin;
  const auto lists_moved = static_cast<uint32_t>(dependents_.size() - deps_begin);
  const int from = records_[begin].rank();
  const int64_t queue_moved = (int64_t{rank} - from) * kStreamCount;
  // The lists of dependents: each its length, then its ops.
  size_t edges = 0;
  for (size_t i = deps_begin; i < deps_end;) {
    const OpId n = dependents_[i];
    dependents_.push_back(n);
    for (OpId k = 1; k <= n; ++k) {
      const OpId d = dependents_[i + k] + moved;
      dependents_.push_back(d);
    }
    i += size_t{n} + 1;
  }
  size_t part = 0;
  for (OpId id = begin; id < end; ++id) {
    ReplayRecord r = records_[id];
    assert(r.rank() == from);
    r.queue = static_cast<uint32_t>(r.queue + queue_moved);
    if (r.next_in_queue != kNoOp) r.next_in_queue += moved;
    switch (r.deps()) {
      case ReplayRecord::Deps::kNone:
        break;
      case ReplayRecord::Deps::kOne:
        r.dependents += moved;
        ++edges;
        break;
      case ReplayRecord::Deps::kList:
        edges += dependents_[r.dependents];
        r.dependents += lists_moved;
        break;
    }
    if (r.kind() == ReplayRecord::Kind::kSolo || r.kind() == ReplayRecord::Kind::kShared) {
      assert(part < comms.size());
      r.ref = static_cast<uint32_t>(comms[part++]);
      ++comms_[r.ref].parts;
    }
    records_.push_back(r);
    const OpInfo info = infos_[open.offset + (id - open.first)];
    infos_.push_back(info);
  }
  assert(part == comms.size());
  for (int s = 0; s < kStreamCount; ++s) {
    const size_t q = static_cast<size_t>(from) * kStreamCount + s;
    const size_t to = static_cast<size_t>(rank) * kStreamCount + s;
    assert(stream_heads_[to] == kNoOp);
    if (stream_heads_[q] == kNoOp) continue;
    assert(stream_heads_[q] >= begin && stream_tails_[q] < end);
    stream_heads_[to] = stream_heads_[q] + moved;
    stream_tails_[to] = stream_tails_[q] + moved;
  }
  sealed_deps_ += edges;
  sealed_ops_ = records_.size();
  cloned_ops_ += end - begin;
}

}  // namespace meshsim

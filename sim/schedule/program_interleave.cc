// Program::InterleaveRanks: op ids laid out in about the order a full replay runs them.
//
// A StepBuilder emits one rank's whole program after another, so that in full replay the
// ops a replay runs together (those of a pipeline stage's ranks, which run alike at about
// the same time) lie a rank's program apart (~50 KB at 3,072 GPUs of GPT-1T): every op's
// record, dependents list and time slots are a cache miss. Interleaving the ranks of a
// group puts op k of each of them side by side.
#include <algorithm>
#include <cassert>
#include <vector>

#include "sim/core/huge_pages.h"
#include "sim/schedule/program.h"

namespace meshsim {
namespace {

// Where a rank's ops lie: old ids [begin, begin + count); new id new_base + k * stride for
// its k-th op. dependents_end: where the dependents list of its last op ends.
struct RankSpan {
  uint32_t begin = 0;
  uint32_t count = 0;
  uint32_t new_base = 0;
  uint32_t stride = 1;
  uint32_t dependents_end = 0;
  bool placed = false;
};

// The renumbering, as blocks of ranks in new id order: a block's ranks have as many ops
// each and interleave (a block of one rank keeps its ops consecutive).
class Layout {
 public:
  // False when some rank's ops are not consecutive ids.
  bool Measure(const ReplayRecord* records, size_t ops, int ranks) {
    spans_.assign(ranks, RankSpan());
    int prev = -1;
    for (size_t id = 0; id < ops; ++id) {
      const int r = records[id].rank();
      if (r != prev) {
        if (spans_[r].count > 0) return false;
        spans_[r].begin = static_cast<uint32_t>(id);
        if (prev >= 0) spans_[prev].dependents_end = records[id].dependents;
        prev = r;
      }
      ++spans_[r].count;
    }
    if (prev >= 0) spans_[prev].dependents_end = records[ops].dependents;
    return true;
  }

  // Places the groups' ranks (a group whose ranks differ in op count, a rank already
  // placed or without ops, is left out), then the other ranks in their old order. Returns
  // whether some block has two ranks or more.
  bool Place(const std::vector<std::vector<int>>& groups) {
    bool interleaves = false;
    for (const std::vector<int>& g : groups) interleaves |= PlaceGroup(g);
    std::vector<int> rest;
    for (int r = 0; r < static_cast<int>(spans_.size()); ++r) {
      if (!spans_[r].placed && spans_[r].count > 0) rest.push_back(r);
    }
    std::sort(rest.begin(), rest.end(),
              [&](int a, int b) { return spans_[a].begin < spans_[b].begin; });
    for (int r : rest) PlaceBlock({r});
    return interleaves;
  }

  OpId NewId(OpId old, int rank) const {
    const RankSpan& s = spans_[rank];
    return s.new_base + (old - s.begin) * s.stride;
  }
  uint32_t DependentsEnd(int rank) const { return spans_[rank].dependents_end; }
  bool LastOfRank(OpId old, int rank) const {
    return old + 1 == spans_[rank].begin + spans_[rank].count;
  }

  // fn(old id) for every op, in new id order.
  template <typename Fn>
  void ForEachInNewOrder(Fn fn) const {
    for (const std::vector<int>& block : blocks_) {
      const uint32_t count = spans_[block.front()].count;
      for (uint32_t k = 0; k < count; ++k) {
        for (int r : block) fn(spans_[r].begin + k);
      }
    }
  }

 private:
  bool PlaceGroup(const std::vector<int>& group) {
    std::vector<int> block;
    for (int r : group) {
      if (r < 0 || r >= static_cast<int>(spans_.size())) return false;
      if (spans_[r].placed || spans_[r].count == 0) return false;
      if (spans_[r].count != spans_[group.front()].count) return false;
      if (std::find(block.begin(), block.end(), r) != block.end()) return false;
      block.push_back(r);
    }
    if (block.size() < 2) return false;
    PlaceBlock(block);
    return true;
  }

  void PlaceBlock(const std::vector<int>& block) {
    const auto stride = static_cast<uint32_t>(block.size());
    for (uint32_t j = 0; j < stride; ++j) {
      RankSpan& s = spans_[block[j]];
      s.new_base = next_ + j;
      s.stride = stride;
      s.placed = true;
    }
    next_ += stride * spans_[block.front()].count;
    blocks_.push_back(block);
  }

  std::vector<RankSpan> spans_;  // per rank
  std::vector<std::vector<int>> blocks_;
  uint32_t next_ = 0;
};

// The dependents lists laid out again in new id order, their entries renumbered; each
// record's `dependents` is set to its list's new start (records still at their old ids).
std::vector<OpId> RelayDependents(const Layout& layout, ReplayRecord* records,
                                  const std::vector<OpId>& dependents) {
  std::vector<OpId> out;
  ReserveHuge(out, dependents.size());
  out.resize(dependents.size());
  uint32_t at = 0;
  layout.ForEachInNewOrder([&](OpId old) {
    const int rank = records[old].rank();
    const uint32_t begin = records[old].dependents;
    // The next op's start is still its old one: it comes later in the new order, unless
    // it is another rank's.
    const uint32_t end =
        layout.LastOfRank(old, rank) ? layout.DependentsEnd(rank) : records[old + 1].dependents;
    records[old].dependents = at;
    for (uint32_t i = begin; i < end; ++i) {
      out[at++] = layout.NewId(dependents[i], records[dependents[i]].rank());
    }
  });
  assert(at == dependents.size());
  return out;
}

// Moves records and infos from old ids to new ids, one permutation cycle at a time.
void Permute(const Layout& layout, std::vector<ReplayRecord>& records,
             std::vector<OpInfo>& infos) {
  const size_t n = infos.size();
  std::vector<bool> done(n, false);
  for (size_t start = 0; start < n; ++start) {
    if (done[start]) continue;
    ReplayRecord r = records[start];
    OpInfo info = infos[start];
    OpId old = static_cast<OpId>(start);
    for (;;) {
      const OpId dst = layout.NewId(old, r.rank());
      done[dst] = true;
      if (dst == start) {
        records[start] = r;
        infos[start] = info;
        break;
      }
      std::swap(r, records[dst]);
      std::swap(info, infos[dst]);
      old = dst;
    }
  }
}

}  // namespace

bool Program::InterleaveRanks(const std::vector<std::vector<int>>& groups) {
  assert(finalized_ && !pending_spent_);
  const size_t n = OpCount();
  Layout layout;
  if (!layout.Measure(records_.data(), n, ranks_) || !layout.Place(groups)) return false;
  const auto new_id = [&](OpId old) { return layout.NewId(old, records_[old].rank()); };
  std::vector<OpId> dependents = RelayDependents(layout, records_.data(), dependents_);
  dependents_.swap(dependents);
  dependents = {};
  for (OpId& part : parts_) part = new_id(part);
  for (OpId& head : stream_heads_) {
    if (head != kNoOp) head = new_id(head);
  }
  for (size_t id = 0; id < n; ++id) {
    ReplayRecord& r = records_[id];
    if (r.next_in_queue != kNoOp) r.next_in_queue = new_id(r.next_in_queue);
  }
  Permute(layout, records_, infos_);
  records_[n].dependents = static_cast<uint32_t>(dependents_.size());
  return true;
}

}  // namespace meshsim

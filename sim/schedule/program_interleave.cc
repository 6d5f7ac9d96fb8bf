// Program::InterleaveRanks: op ids laid out in about the order a full replay runs them.
//
// A StepBuilder emits one rank's whole program after another, so that in full replay the
// ops a replay runs together (those of a pipeline stage's ranks, which run alike at about
// the same time) lie a rank's program apart (~50 KB at 3,072 GPUs of GPT-1T): every op's
// record, dependents list and time slots are a cache miss. Interleaving the ranks of a
// group puts op k of each of them side by side. (Runs of 16 ops of a rank instead, which
// a walk over one rank's ops, as the step analysis does, reads in fewer cache lines, were
// slower on GPT-1T at 3,072 GPUs: the replay then finds a collective's parts apart.)
#include <algorithm>
#include <cassert>
#include <vector>

#include "sim/core/huge_pages.h"
#include "sim/schedule/program.h"

namespace meshsim {
namespace {

// Where a rank's ops lie: old ids [begin, begin + count); after, the `index`-th of a block
// of `ranks` ranks whose ops begin at new id `block_base`: its k-th op is block_base +
// k * ranks + index. dependents_end: where the dependents list of its last op ends.
struct RankSpan {
  uint32_t begin = 0;
  uint32_t count = 0;
  uint32_t block_base = 0;
  uint32_t index = 0;
  uint32_t ranks = 1;
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
    return s.block_base + (old - s.begin) * s.ranks + s.index;
  }
  uint32_t DependentsEnd(int rank) const { return spans_[rank].dependents_end; }
  bool Holds(int rank, OpId old) const {
    return old - spans_[rank].begin < spans_[rank].count;  // unsigned: false below begin
  }
  bool LastOfRank(OpId old, int rank) const {
    return old + 1 == spans_[rank].begin + spans_[rank].count;
  }

  // Whether every block's ranks held, before, the ids the block holds after: then the
  // renumbering moves ops within blocks only.
  bool BlocksInPlace() const {
    for (size_t b = 0; b < blocks_.size(); ++b) {
      if (OldBegin(b) != spans_[blocks_[b].front()].block_base) return false;
    }
    return true;
  }
  size_t BlockCount() const { return blocks_.size(); }
  const std::vector<int>& Block(size_t b) const { return blocks_[b]; }
  const RankSpan& Span(int rank) const { return spans_[rank]; }

  // fn(old id) for every op of block b, in new id order.
  template <typename Fn>
  void ForEachOfBlock(size_t b, Fn fn) const {
    const std::vector<int>& block = blocks_[b];
    const uint32_t count = spans_[block.front()].count;
    for (uint32_t k = 0; k < count; ++k) {
      for (int r : block) fn(spans_[r].begin + k);
    }
  }
  // fn(old id) for every op, in new id order.
  template <typename Fn>
  void ForEachInNewOrder(Fn fn) const {
    for (size_t b = 0; b < blocks_.size(); ++b) ForEachOfBlock(b, fn);
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

  // Where block b's ranks' ops began, when they were consecutive ids; else UINT32_MAX.
  uint32_t OldBegin(size_t b) const {
    uint32_t begin = UINT32_MAX, end = 0;
    for (int r : blocks_[b]) {
      begin = std::min(begin, spans_[r].begin);
      end = std::max(end, spans_[r].begin + spans_[r].count);
    }
    const size_t count = blocks_[b].size() * spans_[blocks_[b].front()].count;
    return end - begin == count ? begin : UINT32_MAX;
  }

  void PlaceBlock(const std::vector<int>& block) {
    const auto ranks = static_cast<uint32_t>(block.size());
    for (uint32_t j = 0; j < ranks; ++j) {
      RankSpan& s = spans_[block[j]];
      s.block_base = next_;
      s.index = j;
      s.ranks = ranks;
      s.placed = true;
    }
    next_ += ranks * spans_[block.front()].count;
    blocks_.push_back(block);
  }

  std::vector<RankSpan> spans_;  // per rank
  std::vector<std::vector<int>> blocks_;
  uint32_t next_ = 0;
};

// Writes the dependents lists of the ops that `walk` visits (in new id order) to out[at..],
// renumbered, and sets each op's record `dependents` to its list's new start (the records
// still at their old ids). Old list entry i is lists[i - lists_base]. Returns where the
// lists written end.
template <typename Walk>
uint32_t RelayLists(const Layout& layout, ReplayRecord* records, const OpId* lists,
                    uint32_t lists_base, OpId* out, uint32_t at, Walk walk) {
  walk([&](OpId old) {
    const int rank = records[old].rank();
    const uint32_t begin = records[old].dependents;
    // The next op's start is still its old one: it comes later in the new order, unless
    // it is another rank's.
    const uint32_t end =
        layout.LastOfRank(old, rank) ? layout.DependentsEnd(rank) : records[old + 1].dependents;
    records[old].dependents = at;
    for (uint32_t i = begin; i < end; ++i) {
      const OpId d = lists[i - lists_base];
      // Most dependents are the rank's own: no need to read their records.
      out[at++] = layout.NewId(d, layout.Holds(rank, d) ? rank : records[d].rank());
    }
  });
  return at;
}

// The dependents lists laid out again in new id order, renumbered. Blocks that keep their
// ids (Layout::BlocksInPlace) keep their lists' span too: each block's lists are rewritten
// where they are, through a buffer, instead of into a new array (fresh pages cost more
// than the copy on this VM).
void RelayDependents(const Layout& layout, ReplayRecord* records, std::vector<OpId>& dependents) {
  std::vector<OpId> old;
  if (!layout.BlocksInPlace()) {
    old.swap(dependents);
    ReserveHuge(dependents, old.size());
    dependents.resize(old.size());
    const uint32_t end = RelayLists(layout, records, old.data(), 0, dependents.data(), 0,
                                    [&](auto fn) { layout.ForEachInNewOrder(fn); });
    assert(end == dependents.size());
    (void)end;
    return;
  }
  for (size_t b = 0; b < layout.BlockCount(); ++b) {
    const RankSpan& first = layout.Span(layout.Block(b).front());
    const uint32_t base = first.block_base;
    const uint32_t begin = records[base].dependents;
    const uint32_t end = records[base + layout.Block(b).size() * first.count].dependents;
    old.assign(dependents.begin() + begin, dependents.begin() + end);
    const uint32_t written = RelayLists(layout, records, old.data(), begin, dependents.data(),
                                        begin, [&](auto fn) { layout.ForEachOfBlock(b, fn); });
    assert(written == end);
    (void)written;
  }
}

// Moves records and infos from old ids to new ids, block by block through a buffer:
// for blocks that keep their ids (Layout::BlocksInPlace), which the step builder's
// pipeline stages do. Reads a block's ranks side by side, writes in order.
void PermuteBlocks(const Layout& layout, std::vector<ReplayRecord>& records,
                   std::vector<OpInfo>& infos) {
  std::vector<ReplayRecord> old_records;
  std::vector<OpInfo> old_infos;
  for (size_t b = 0; b < layout.BlockCount(); ++b) {
    const std::vector<int>& block = layout.Block(b);
    if (block.size() < 2) continue;
    const uint32_t base = layout.Span(block.front()).block_base;
    const size_t size = block.size() * layout.Span(block.front()).count;
    old_records.assign(records.begin() + base, records.begin() + base + size);
    old_infos.assign(infos.begin() + base, infos.begin() + base + size);
    uint32_t dst = base;
    layout.ForEachOfBlock(b, [&](OpId old) {
      records[dst] = old_records[old - base];
      infos[dst++] = old_infos[old - base];
    });
  }
}

// Moves records and infos from old ids to new ids, one permutation cycle at a time.
void Permute(const Layout& layout, std::vector<ReplayRecord>& records, std::vector<OpInfo>& infos) {
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

// Renumbers the collectives in the order of their first part in the (new) records, those
// without parts last; each keeps its parts list. Its parts then find it beside the
// collectives they run with.
void RenumberComms(std::vector<ReplayRecord>& records, size_t ops, std::vector<Comm>& comms) {
  std::vector<uint32_t> to(comms.size(), kNoOp);
  uint32_t next = 0;
  for (size_t id = 0; id < ops; ++id) {
    ReplayRecord& r = records[id];
    if (r.kind() != ReplayRecord::Kind::kShared && r.kind() != ReplayRecord::Kind::kSolo) continue;
    if (to[r.ref] == kNoOp) to[r.ref] = next++;
    r.ref = to[r.ref];
  }
  for (uint32_t& t : to) {
    if (t == kNoOp) t = next++;
  }
  for (size_t start = 0; start < comms.size(); ++start) {
    while (to[start] != start) {
      const uint32_t dst = to[start];
      std::swap(comms[start], comms[dst]);
      std::swap(to[start], to[dst]);
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
  RelayDependents(layout, records_.data(), dependents_);
  for (OpId& part : parts_) part = new_id(part);
  for (OpId& head : stream_heads_) {
    if (head != kNoOp) head = new_id(head);
  }
  for (size_t id = 0; id < n; ++id) {
    ReplayRecord& r = records_[id];
    // The next op of a queue is the same rank's.
    if (r.next_in_queue != kNoOp) r.next_in_queue = layout.NewId(r.next_in_queue, r.rank());
  }
  if (layout.BlocksInPlace()) {
    PermuteBlocks(layout, records_, infos_);
  } else {
    Permute(layout, records_, infos_);
  }
  RenumberComms(records_, n, comms_);
  records_[n].dependents = static_cast<uint32_t>(dependents_.size());
  return true;
}

}  // namespace meshsim

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
#include <iterator>
#include <utility>
#include <vector>

#include "sim/core/huge_pages.h"
#include "sim/schedule/program.h"

namespace meshsim {
namespace {

// Where a rank's ops lie: old ids [begin, begin + count); after, the `index`-th of a block
// of `ranks` ranks whose ops begin at new id `block_base`: its k-th op is block_base +
// k * ranks + index.
struct RankSpan {
  uint32_t begin = 0;
  uint32_t count = 0;
  uint32_t block_base = 0;
  uint32_t index = 0;
  uint32_t ranks = 1;
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
        prev = r;
      }
      ++spans_[r].count;
    }
    for (int r = 0; r < ranks; ++r) {
      if (spans_[r].count > 0) by_begin_.emplace_back(spans_[r].begin, r);
    }
    std::sort(by_begin_.begin(), by_begin_.end());
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
  bool Holds(int rank, OpId old) const {
    return old - spans_[rank].begin < spans_[rank].count;  // unsigned: false below begin
  }

  // The rank whose ops held old id `old` (which some rank held). O(log ranks).
  int RankOfOld(OpId old) const {
    auto it =
        std::upper_bound(by_begin_.begin(), by_begin_.end(), old,
                         [](OpId id, const std::pair<uint32_t, int>& s) { return id < s.first; });
    return std::prev(it)->second;
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

  std::vector<RankSpan> spans_;                     // per rank
  std::vector<std::pair<uint32_t, int>> by_begin_;  // (old first id, rank), ranks with ops
  std::vector<std::vector<int>> blocks_;
  uint32_t next_ = 0;
};

// Renumbers, in place, the dependents of the op whose record is `r` (its lone one, or its
// list in `lists`) by `to(old id)`. Each list is one op's: renumbered once.
template <typename To>
void RenumberDependents(ReplayRecord& r, std::vector<OpId>& lists, To to) {
  if (r.deps() == ReplayRecord::Deps::kOne) {
    r.dependents = to(r.dependents);
  } else if (r.deps() == ReplayRecord::Deps::kList) {
    OpId* d = lists.data() + r.dependents + 1;
    for (OpId* e = d + lists[r.dependents]; d != e; ++d) *d = to(*d);
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

// New collective ids in the order of first parts in new id order: `to` per old id
// (kNoOp: no part seen yet).
class CommOrder {
 public:
  explicit CommOrder(size_t comms) : to_(comms, kNoOp) {}
  uint32_t Of(uint32_t old) {
    uint32_t& t = to_[old];
    if (t == kNoOp) t = next_++;
    return t;
  }
  // Moves each collective to its new id, those without parts last, one permutation cycle
  // at a time (in place: a new array would be fresh pages); each keeps its parts list.
  void Apply(std::vector<CommRecord>& comms) {
    for (uint32_t& t : to_) {
      if (t == kNoOp) t = next_++;
    }
    for (size_t start = 0; start < comms.size(); ++start) {
      while (to_[start] != start) {
        const uint32_t dst = to_[start];
        std::swap(comms[start], comms[dst]);
        std::swap(to_[start], to_[dst]);
      }
    }
  }

 private:
  std::vector<uint32_t> to_;
  uint32_t next_ = 0;
};

bool IsPart(const ReplayRecord& r) {
  return r.kind() == ReplayRecord::Kind::kShared || r.kind() == ReplayRecord::Kind::kSolo;
}

// Renumbers the collectives in the order of their first part in the (new) records, those
// without parts last; each keeps its parts list. Its parts then find it beside the
// collectives they run with.
void RenumberComms(std::vector<ReplayRecord>& records, size_t ops, std::vector<CommRecord>& comms) {
  CommOrder order(comms.size());
  for (size_t id = 0; id < ops; ++id) {
    ReplayRecord& r = records[id];
    if (IsPart(r)) r.ref = order.Of(r.ref);
  }
  order.Apply(comms);
}

// The renumbering of a layout whose blocks keep their ids (Layout::BlocksInPlace), which
// the step builder's pipeline stages do, in one walk per block in new id order: each op's
// record (its dependents list's start, next op in queue and collective renumbered) and
// info move to their new id, and its dependents list, renumbered, to the list's new place.
// A block's records, infos and lists are copied to buffers first and read from there. The
// walk reads a block's ranks side by side and writes in order; one walk instead of one for
// the lists, one for the queues, one for the moves and one for the collectives.
void MoveBlocks(const Layout& layout, std::vector<ReplayRecord>& records,
                std::vector<OpInfo>& infos, std::vector<OpId>& dependents, CommOrder& comms) {
  std::vector<ReplayRecord> old_records;
  std::vector<OpInfo> old_infos;
  for (size_t b = 0; b < layout.BlockCount(); ++b) {
    const std::vector<int>& block = layout.Block(b);
    const RankSpan& first = layout.Span(block.front());
    const uint32_t base = first.block_base;
    const uint32_t size = static_cast<uint32_t>(block.size()) * first.count;
    old_records.assign(records.begin() + base, records.begin() + base + size);
    old_infos.assign(infos.begin() + base, infos.begin() + base + size);
    uint32_t dst = base;
    layout.ForEachOfBlock(b, [&](OpId old) {
      ReplayRecord r = old_records[old - base];
      const int rank = r.rank();
      // (Lists stay where they are: the record names its list.)
      RenumberDependents(r, dependents, [&](OpId d) {
        // Most dependents are the rank's own: no need to find their rank.
        int of = rank;
        if (!layout.Holds(rank, d)) {
          if (d - base < size) {
            of = old_records[d - base].rank();
          } else {
            of = d >= base + size ? records[d].rank() : layout.RankOfOld(d);
          }
        }
        return layout.NewId(d, of);
      });
      // The next op of a queue is the same rank's.
      if (r.next_in_queue != kNoOp) r.next_in_queue = layout.NewId(r.next_in_queue, rank);
      if (IsPart(r)) r.ref = comms.Of(r.ref);
      records[dst] = r;
      infos[dst++] = old_infos[old - base];
    });
  }
}

// One rank's ops among those InterleaveAdded interleaves: old ids [begin, begin + count).
struct AddedRun {
  int rank = 0;
  uint32_t begin = 0;
};

// InterleaveAdded's buffers, kept from one group to the next (no fresh pages per group)
// and freed by Finalize (RenumberCommsByFirstPart): ~25 MB at 16,384 GPUs of GPT-1T.
struct AddedBuffers {
  std::vector<AddedRun> runs;
  std::vector<ReplayRecord> records;
  std::vector<OpInfo> infos;
};
// Whether the runs, from op `begin`, are of distinct ranks, `count` ops each, each holding
// all its rank's ops (its queues begin there) and the ops its ops' dependents name.
bool RunsInterleave(const std::vector<AddedRun>& runs, uint32_t begin, uint32_t count,
                    const Program& p, const std::vector<OpId>& stream_heads) {
  std::vector<int> seen;
  for (size_t j = 0; j < runs.size(); ++j) {
    const AddedRun& run = runs[j];
    if (run.begin != begin + j * count) return false;  // ranks of unequal op counts
    seen.push_back(run.rank);
    for (int s = 0; s < kStreamCount; ++s) {
      const OpId head = stream_heads[static_cast<size_t>(run.rank) * kStreamCount + s];
      if (head != kNoOp && head < begin) return false;
    }
    for (OpId id = run.begin; id < run.begin + count; ++id) {
      for (const OpId* d = p.DependentsBegin(id); d != p.DependentsEnd(id); ++d) {
        if (*d - run.begin >= count) return false;
      }
    }
  }
  std::sort(seen.begin(), seen.end());
  return std::adjacent_find(seen.begin(), seen.end()) == seen.end();
}

AddedBuffers& Buffers() {
  thread_local AddedBuffers buffers;
  return buffers;
}

}  // namespace

void Program::RenumberCommsByFirstPart() {
  Buffers() = AddedBuffers();
  RenumberComms(records_, OpCount(), comms_);
}

bool Program::InterleaveAdded(OpId begin) {
  assert(!finalized_);
  const size_t n = OpCount();
  if (begin >= n || !edges_.empty() || sealed_ops_ != n) return false;
  // The ranks in the order added, one run of ops each.
  std::vector<AddedRun>& runs = Buffers().runs;
  runs.clear();
  for (size_t id = begin; id < n; ++id) {
    const int r = records_[id].rank();
    if (runs.empty() || runs.back().rank != r) runs.push_back({r, static_cast<uint32_t>(id)});
  }
  const auto ranks = static_cast<uint32_t>(runs.size());
  if (ranks < 2 || (n - begin) % ranks != 0) return false;
  const auto count = static_cast<uint32_t>((n - begin) / ranks);
  if (!RunsInterleave(runs, begin, count, *this, stream_heads_)) {
    return false;
  }

  // Op k of rank j (in the order added) moves to begin + k * ranks + j. The ops' records
  // and infos are copied to buffers (Buffers()) and written back in new id order,
  // renumbered; their lists stay where they are, renumbered in place.
  std::vector<ReplayRecord>& old_records = Buffers().records;
  std::vector<OpInfo>& old_infos = Buffers().infos;
  old_records.assign(records_.begin() + begin, records_.end());
  // (The ops from `begin` have an info each: the open run's, InfoRun.)
  old_infos.assign(infos_.end() - (n - begin), infos_.end());
  const auto new_id = [&](uint32_t j, OpId old) {
    return begin + (old - runs[j].begin) * ranks + j;
  };
  OpId dst = begin;
  for (uint32_t k = 0; k < count; ++k) {
    for (uint32_t j = 0; j < ranks; ++j, ++dst) {
      ReplayRecord r = old_records[runs[j].begin + k - begin];
      RenumberDependents(r, dependents_, [&](OpId d) { return new_id(j, d); });
      if (r.next_in_queue != kNoOp) r.next_in_queue = new_id(j, r.next_in_queue);
      records_[dst] = r;
    }
  }
  PutInterleavedInfos(begin, ranks, count, old_infos);
  for (uint32_t j = 0; j < ranks; ++j) {
    const size_t q = static_cast<size_t>(runs[j].rank) * kStreamCount;
    for (int s = 0; s < kStreamCount; ++s) {
      if (stream_heads_[q + s] != kNoOp) stream_heads_[q + s] = new_id(j, stream_heads_[q + s]);
      if (stream_tails_[q + s] != kNoOp) stream_tails_[q + s] = new_id(j, stream_tails_[q + s]);
    }
    if (serialize_collectives_) {
      int64_t& last = last_serial_[runs[j].rank];
      if (last >= 0) last = new_id(j, static_cast<OpId>(last));
    }
  }
  interleaved_added_ = true;
  return true;
}

namespace {

// Where InterleaveCopies puts op k of rank j (the runs', then the copies'): at
// begin + k * ranks + j, a copy's ops built from those of the run it copies.
struct CopyLayout {
  OpId begin = 0;
  uint32_t emitted = 0, ranks = 0, count = 0;
  const std::vector<AddedRun>* runs = nullptr;
  std::vector<uint32_t> from;  // per copy, the run it copies
  uint32_t RunOf(uint32_t j) const { return j < emitted ? j : from[j - emitted]; }
  OpId NewId(uint32_t t, uint32_t j, OpId old) const {
    return begin + (old - (*runs)[t].begin) * ranks + j;
  }
};

// Appends each copy's lists of dependents, in order, renumbered from its run's (not yet
// renumbered themselves); returns per copy how far its lists lie from its run's, and adds
// the copies' dependencies to `edges`.
std::vector<uint32_t> AppendCopiedLists(const CopyLayout& l, const std::vector<ReplayRecord>& old,
                                        std::vector<OpId>& lists, size_t& edges) {
  std::vector<uint32_t> runs_lists(l.emitted, UINT32_MAX);  // where each run's lists begin
  for (size_t i = 0; i < old.size(); ++i) {
    if (old[i].deps() != ReplayRecord::Deps::kList) continue;
    uint32_t& first = runs_lists[i / l.count];
    first = std::min(first, old[i].dependents);
  }
  std::vector<uint32_t> moved(l.from.size(), 0);
  for (size_t c = 0; c < l.from.size(); ++c) {
    const uint32_t t = l.from[c], j = l.emitted + static_cast<uint32_t>(c);
    moved[c] = static_cast<uint32_t>(lists.size()) - runs_lists[t];
    for (uint32_t k = 0; k < l.count; ++k) {
      const ReplayRecord& r = old[size_t{t} * l.count + k];
      if (r.deps() == ReplayRecord::Deps::kOne) ++edges;
      if (r.deps() != ReplayRecord::Deps::kList) continue;
      assert(r.dependents + moved[c] == lists.size());
      const OpId length = lists[r.dependents];
      lists.push_back(length);
      for (OpId i = 1; i <= length; ++i) {
        const OpId d = l.NewId(t, j, lists[r.dependents + i]);
        lists.push_back(d);
      }
      edges += length;
    }
  }
  return moved;
}

// The copies' queues from their runs' (before those move), then the runs'.
void PlaceQueues(const CopyLayout& l, const std::vector<RankCopy>& copies, std::vector<OpId>& heads,
                 std::vector<OpId>& tails) {
  const auto place = [&](uint32_t t, uint32_t j, int rank) {
    const size_t q = static_cast<size_t>((*l.runs)[t].rank) * kStreamCount;
    const size_t to = static_cast<size_t>(rank) * kStreamCount;
    for (int s = 0; s < kStreamCount; ++s) {
      if (heads[q + s] == kNoOp) continue;
      heads[to + s] = l.NewId(t, j, heads[q + s]);
      tails[to + s] = l.NewId(t, j, tails[q + s]);
    }
  };
  for (size_t c = 0; c < copies.size(); ++c) {
    place(l.from[c], l.emitted + static_cast<uint32_t>(c), copies[c].rank);
  }
  for (uint32_t t = 0; t < l.emitted; ++t) place(t, t, (*l.runs)[t].rank);
}

}  // namespace

// The ranks added since `begin` (runs, as InterleaveAdded finds them) and the copies laid
// out as CopyLayout says, each record read once from the runs' buffer.
bool Program::InterleaveCopies(OpId begin, const std::vector<RankCopy>& copies) {
  assert(!finalized_ && !serialize_collectives_);
  const size_t n = OpCount();
  if (copies.empty() || begin >= n || !edges_.empty() || sealed_ops_ != n) return false;
  std::vector<AddedRun>& runs = Buffers().runs;
  runs.clear();
  for (size_t id = begin; id < n; ++id) {
    const int r = records_[id].rank();
    if (runs.empty() || runs.back().rank != r) runs.push_back({r, static_cast<uint32_t>(id)});
  }
  CopyLayout l{begin,
               static_cast<uint32_t>(runs.size()),
               static_cast<uint32_t>(runs.size() + copies.size()),
               0,
               &runs,
               {}};
  if ((n - begin) % l.emitted != 0) return false;
  l.count = static_cast<uint32_t>((n - begin) / l.emitted);
  if (!RunsInterleave(runs, begin, l.count, *this, stream_heads_)) return false;
  for (const RankCopy& c : copies) {
    const auto run =
        std::find_if(runs.begin(), runs.end(), [&](const AddedRun& a) { return a.rank == c.from; });
    assert(run != runs.end());
    l.from.push_back(static_cast<uint32_t>(run - runs.begin()));
  }
  std::vector<ReplayRecord>& old_records = Buffers().records;
  old_records.assign(records_.begin() + begin, records_.end());
  std::vector<int32_t> ordinal(old_records.size(), -1);  // per op, its comm part's in its rank
  for (uint32_t t = 0; t < l.emitted; ++t) {
    int32_t parts = 0;
    for (size_t i = size_t{t} * l.count; i < size_t{t + 1} * l.count; ++i) {
      if (IsPart(old_records[i])) ordinal[i] = parts++;
    }
  }
  size_t edges = 0;
  const std::vector<uint32_t> lists_moved = AppendCopiedLists(l, old_records, dependents_, edges);
  records_.resize(begin);
  for (uint32_t k = 0; k < l.count; ++k) {
    for (uint32_t j = 0; j < l.ranks; ++j) {
      const uint32_t t = l.RunOf(j);
      const size_t i = size_t{t} * l.count + k;
      ReplayRecord r = old_records[i];
      const auto to = [&](OpId d) { return l.NewId(t, j, d); };
      if (r.next_in_queue != kNoOp) r.next_in_queue = to(r.next_in_queue);
      if (j < l.emitted) {
        RenumberDependents(r, dependents_, to);
      } else {
        const RankCopy& copy = copies[j - l.emitted];
        if (r.deps() == ReplayRecord::Deps::kOne) r.dependents = to(r.dependents);
        if (r.deps() == ReplayRecord::Deps::kList) r.dependents += lists_moved[j - l.emitted];
        r.queue = static_cast<uint32_t>(copy.rank) * kStreamCount + r.queue % kStreamCount;
        if (IsPart(r)) {
          r.ref = static_cast<uint32_t>(copy.comms[ordinal[i]]);
          ++comms_[r.ref].parts;
        }
      }
      records_.push_back(r);
    }
  }
  std::vector<OpInfo>& old_infos = Buffers().infos;  // each copy's are its run's
  old_infos.resize(size_t{l.ranks} * l.count);
  std::copy(infos_.end() - (n - begin), infos_.end(), old_infos.begin());
  for (uint32_t j = l.emitted; j < l.ranks; ++j) {
    std::copy_n(old_infos.begin() + size_t{l.RunOf(j)} * l.count, l.count,
                old_infos.begin() + size_t{j} * l.count);
  }
  infos_.resize(infos_.size() + copies.size() * l.count);
  PutInterleavedInfos(begin, l.ranks, l.count, old_infos);
  PlaceQueues(l, copies, stream_heads_, stream_tails_);
  sealed_deps_ += edges;
  sealed_ops_ = records_.size();
  cloned_ops_ += copies.size() * l.count;
  interleaved_added_ = true;
  return true;
}

bool Program::InterleaveRanks(const std::vector<std::vector<int>>& groups) {
  assert(finalized_ && !pending_spent_);
  const size_t n = OpCount();
  ExpandInfos();
  Layout layout;
  if (!layout.Measure(records_.data(), n, ranks_) || !layout.Place(groups)) return false;
  const auto new_id = [&](OpId old) { return layout.NewId(old, records_[old].rank()); };
  for (OpId& part : parts_) part = new_id(part);
  for (OpId& head : stream_heads_) {
    if (head != kNoOp) head = new_id(head);
  }
  if (layout.BlocksInPlace()) {
    CommOrder comms(comms_.size());
    MoveBlocks(layout, records_, infos_, dependents_, comms);
    comms.Apply(comms_);
  } else {
    for (size_t id = 0; id < n; ++id) {
      ReplayRecord& r = records_[id];
      const int rank = r.rank();
      // (Records of the other ranks are still at their old ids: their `queue` tells.)
      RenumberDependents(r, dependents_, [&](OpId d) {
        return layout.NewId(d, layout.Holds(rank, d) ? rank : records_[d].rank());
      });
      // The next op of a queue is the same rank's.
      if (r.next_in_queue != kNoOp) r.next_in_queue = layout.NewId(r.next_in_queue, r.rank());
    }
    Permute(layout, records_, infos_);
    RenumberComms(records_, n, comms_);
  }
  return true;
}

}  // namespace meshsim

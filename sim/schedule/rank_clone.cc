// StepBuilder::CloneRank: a data-parallel replica's program copied, not emitted.
//
// Ranks of one pipeline stage that differ only in their data-parallel index run the same
// program: nothing the builder emits depends on that index but the groups of their
// collectives (MoE models excepted: a rank's experts and routed load follow its place, and
// so are not copied). A group of members at the rank's own data-parallel index (its tensor-
// or context-parallel group, its pipeline neighbours) moves with it; a group holding every
// data-parallel index of its members (the gradient group) is the same for all of them.
// A collective is then the one the rank would have joined: the same (group, channel) key
// and the same place among that key's collectives (StepBuilder::NextComm), created in the
// order EmitRank would have created it. tests/unit/rank_clone_test.cc builds programs both
// ways and compares them field by field.

#include <algorithm>
#include <cassert>
#include <utility>
#include <vector>

#include "sim/schedule/step_builder_impl.h"

namespace meshsim::schedule_internal {

bool StepBuilder::GroupMoves(int32_t g, int from_dp) const {
  const std::vector<int>& group = prog_.groups()[g];
  if (std::all_of(group.begin(), group.end(),
                  [&](int r) { return mesh_.CoordsOf(r).dp == from_dp; })) {
    return true;
  }
  // Each member's line along dp (its other coordinates, every dp index) lies in the group:
  // checked once per line (a gradient group of dp x cp members has cp lines).
  std::vector<int> sorted = group;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int> lines;  // a line's member at dp 0, per line checked
  const int dp = mesh_.Degree(Axis::kDp);
  for (int r : group) {
    const Coords& c = mesh_.CoordsOf(r);
    const int line = mesh_.RankOf(c.tp, c.cp, 0, c.pp);
    if (std::find(lines.begin(), lines.end(), line) != lines.end()) continue;
    lines.push_back(line);
    for (int d = 0; d < dp; ++d) {
      if (!std::binary_search(sorted.begin(), sorted.end(), mesh_.RankOf(c.tp, c.cp, d, c.pp))) {
        return false;
      }
    }
  }
  return true;
}

int32_t StepBuilder::MoveGroup(int32_t g, int from_dp, int to_dp) {
  const std::vector<int>& group = prog_.groups()[g];
  std::vector<int> moved(group.size());
  for (size_t k = 0; k < group.size(); ++k) {
    const Coords& c = mesh_.CoordsOf(group[k]);
    if (c.dp != from_dp) return g;
    moved[k] = mesh_.RankOf(c.tp, c.cp, to_dp, c.pp);
  }
  return prog_.AddGroup(moved);
}

StepBuilder::EmittedRank StepBuilder::EmitToCopy(int rank, bool copied) {
  EmittedRank e;
  e.rank = rank;
  e.begin = static_cast<OpId>(prog_.OpCount());
  e.deps_begin = prog_.DependentLists().size();
  slots_ = copied ? &e.slots : nullptr;
  EmitRank(rank);
  slots_ = nullptr;
  // A rank's dependencies stay within the rank (RankState is the rank's own).
  prog_.Seal();
  e.end = static_cast<OpId>(prog_.OpCount());
  e.deps_end = prog_.DependentLists().size();
  return e;
}

bool StepBuilder::GroupsMove(const EmittedRank& e) const {
  const int dp = mesh_.CoordsOf(e.rank).dp;
  std::vector<int32_t> checked;
  return std::all_of(e.slots.begin(), e.slots.end(), [&](const auto& slot) {
    const auto g = static_cast<int32_t>(slot.first / kChannelCount);
    if (std::find(checked.begin(), checked.end(), g) != checked.end()) return true;
    checked.push_back(g);
    return GroupMoves(g, dp);
  });
}

bool StepBuilder::CloneRank(std::vector<EmittedRank>& stage, int rank,
                            std::vector<RankCopy>& copies) {
  const Coords& to = mesh_.CoordsOf(rank);
  const auto same_place = [&](const EmittedRank& e) {
    const Coords& c = mesh_.CoordsOf(e.rank);
    return c.pp == to.pp && c.tp == to.tp && c.cp == to.cp && c.ep == to.ep;
  };
  const auto from = std::find_if(stage.begin(), stage.end(), same_place);
  if (from == stage.end()) return false;
  if (!from->groups_move) from->groups_move = GroupsMove(*from);
  if (!*from->groups_move) return false;
  const int from_dp = mesh_.CoordsOf(from->rank).dp;
  std::vector<std::pair<int32_t, int32_t>> moved;  // a group of `from`'s, its counterpart
  RankCopy& copy = copies.emplace_back();
  copy.rank = rank;
  copy.from = from->rank;
  copy.comms.reserve(from->slots.size());
  for (const auto& [key, i] : from->slots) {
    const auto g = static_cast<int32_t>(key / kChannelCount);
    auto m = std::find_if(moved.begin(), moved.end(), [g](const auto& e) { return e.first == g; });
    if (m == moved.end()) m = moved.insert(moved.end(), {g, MoveGroup(g, from_dp, to.dp)});
    const uint32_t to_key = ChannelKey(m->second, static_cast<Channel>(key % kChannelCount));
    if (to_key >= instances_.size()) instances_.resize(to_key + 1);
    std::vector<int32_t>& list = instances_[to_key];
    if (i == static_cast<int>(list.size())) {
      const CommSignature& s =
          prog_.signatures()[prog_.CommRecords()[instances_[key][i]].signature];
      list.push_back(prog_.AddComm(s.op, m->second, s.bytes));
    }
    assert(i < static_cast<int>(list.size()));
    copy.comms.push_back(list[i]);
  }
  return true;
}

const StepBuilder::EmittedRank& StepBuilder::EmittedOf(const std::vector<EmittedRank>& stage,
                                                       int rank) {
  const auto e = std::find_if(stage.begin(), stage.end(),
                              [rank](const EmittedRank& r) { return r.rank == rank; });
  assert(e != stage.end());
  return *e;
}

void StepBuilder::AddCopies(const std::vector<EmittedRank>& stage, std::vector<RankCopy>& copies) {
  for (const RankCopy& c : copies) {
    const EmittedRank& from = EmittedOf(stage, c.from);
    prog_.CloneRank(from.begin, from.end, from.deps_begin, from.deps_end, c.rank, c.comms);
  }
  copies.clear();
}

}  // namespace meshsim::schedule_internal

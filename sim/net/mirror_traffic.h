// Mirror traffic `near` (cluster.mirror_traffic, the default): which of the mirrors'
// coflows (Network::Start's `mirrors`) FlowCollectiveNetwork simulates, and what the
// others put on the links.
//
// A directed link is near once a replayed coflow or a simulated mirror coflow has crossed
// it (or it is a watched NIC); a mirror coflow runs as a flow only if it crosses a near
// link, decided for all of a collective's mirrors at once and closed transitively (a
// mirror that meets a near link makes its own links near, which may keep more). The
// others are counted, not simulated: their bytes on every link they cross (bytes per link
// do not depend on rates), and as busy time on those links the duration of the replayed
// phase they mirror (its symmetric image); a link's busy time is the longer of its flows'
// and its counted mirrors' (overlapping counted mirrors add up), at most the step.
// Max-min sharing couples flows through chains of shared links and over time (a mirror
// counted before its links became near is not added back), so `near` is an
// approximation: step times within 0.5 % of `full` on every bundled experiment (README,
// "Mirror traffic"). Deciding costs nothing per collective once the near links stop
// growing (a split remembers the number of near links it saw).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "sim/net/flow_plan.h"

namespace meshsim {

class NearMirrors {
 public:
  // Per phase index, the coflows of all of a collective's mirrors in that phase.
  using Plans = std::span<const std::vector<Coflow>>;
  // Per phase index of a collective's mirrors: the coflows simulated and those counted
  // under the near links the split last saw, and the counted ones' runs not yet added to
  // the links: `runs` times each one's bytes, `busy_s` the summed durations of the
  // replayed phases they mirror.
  struct Phase {
    std::vector<const Coflow*> simulated, counted;
    int runs = 0;
    double busy_s = 0;
  };
  struct Split {
    size_t near_count = SIZE_MAX;  // SIZE_MAX: not split yet
    bool remembered = false;       // Remember: its coflows outlive this object
    std::vector<Phase> phases;
  };

  explicit NearMirrors(size_t links);
  NearMirrors(const NearMirrors&) = delete;
  NearMirrors& operator=(const NearMirrors&) = delete;

  // Marks a link (a watched NIC) or a replayed coflow's links near.
  void MarkNear(int link);
  void MarkNear(const Coflow& f);
  // Phase `index` of the mirrors `plans` (split in `split`) starts: brings the split up to
  // today's near links and counts one run of its counted coflows. Returns the coflows to
  // simulate (valid until the split is next updated).
  std::span<const Coflow* const> Run(const Plans& plans, Split* split, size_t index);
  // The replayed phase `index` that the mirrors of `split` mirror took `data_s`.
  void Finished(Split* split, size_t index, double data_s);
  // Adds a split's counted runs to the links and resets them (a split that is not
  // remembered: Remember).
  void Flush(Split* split);
  // A split that lives as long as this object, whose counted runs Counted adds up.
  void Remember(Split* split) {
    ++changes_;
    split->remembered = true;
    splits_.push_back(split);
  }
  // Per directed link: bytes and busy time of the counted mirrors, those not yet added
  // included (computed once per change of this object; valid until the next).
  const std::vector<double>& CountedBytes() const;
  const std::vector<double>& CountedBusy() const;

 private:
  bool CrossesNear(const Coflow& f) const { return f.marked_near || f.crosses_near; }
  bool ScanNear(const Coflow& f) const;  // the same, from the links
  // From now on keeps f.crosses_near up to date (MarkNear sets it). Precondition: f
  // outlives this object.
  void Meet(const Coflow& f);
  // Brings a split up to today's near links, closed transitively.
  void Update(const Plans& mirrors, Split* split);
  void AddCounted(const Coflow& f, int runs, double busy_s);
  void Total() const;  // brings the totals up to date

  uint64_t changes_ = 0;  // counted runs or busy time changed (the totals are stale)
  mutable uint64_t totaled_ = UINT64_MAX;
  mutable std::vector<double> total_bytes_, total_busy_s_;

  std::vector<uint8_t> near_;  // per directed link
  // Per directed link that is not near: the coflows met that cross it (MarkNear sets
  // their crosses_near and forgets them), a list through waiters_ from waiting_[link]
  // (-1: none). Entries that MarkNear frees are reused (free_waiter_ heads them).
  struct Waiter {
    const Coflow* coflow;
    int next;
  };
  std::vector<int> waiting_;
  // Waiter w is blocks_[w / kBlock][w % kBlock]: it grows a block at a time, never moving
  // what it holds.
  static constexpr int kBlock = 1 << 16;
  std::vector<std::unique_ptr<Waiter[]>> blocks_;
  int waiters_ = 0;  // handed out so far
  Waiter& WaiterAt(int w) { return blocks_[w / kBlock][w % kBlock]; }
  int free_waiter_ = -1;
  size_t near_count_ = 0;
  std::vector<double> counted_bytes_, counted_busy_s_;  // added so far, per directed link
  std::vector<const Split*> splits_;                    // in order of creation
  std::vector<const Coflow*> moved_;                    // Update's, reused
};

}  // namespace meshsim

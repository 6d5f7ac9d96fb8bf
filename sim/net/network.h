// The network as the replay sees it: collectives started now, finished later.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "sim/core/simulator.h"
#include "sim/net/collective.h"
#include "sim/net/group_memo.h"

namespace meshsim {

// Traffic carried by one link (or link class) over a replay.
struct LinkUsage {
  std::string name;
  double bytes = 0;
  double busy_s = 0;    // time with at least one transfer on it
  double capacity = 0;  // bytes/s of the link (class: of all its links together)
  int links = 1;        // physical directed links aggregated here
};

// Traffic that what-if link failures moved off the path it takes in the healthy fabric.
struct Reroutes {
  struct Detour {
    std::string name;  // physical link (both directions), as in cluster.what_if.links
    double bytes = 0;  // rerouted bytes it carried
  };
  // Bytes of transfers (replayed and mirrored) whose route differs from the route the
  // same transfer takes with no link failed.
  double bytes = 0;
  // The links of those routes that the healthy routes do not use, busiest first (ties by
  // name). A rerouted transfer counts on every such link it crosses.
  std::vector<Detour> links;
};

// A link's total throughput from time `t` on.
struct RateSample {
  int link = 0;
  SimTime t;
  double bytes_per_s = 0;
};

class Network {
 public:
  virtual ~Network() = default;
  // Records the outgoing throughput of the NICs of these nodes over time (if the model
  // has NICs; see RateSamples).
  virtual void WatchNics(const std::vector<int>& nodes) { (void)nodes; }
  virtual const std::vector<RateSample>& RateSamples() const {
    static const std::vector<RateSample> kNone;
    return kNone;
  }
  // Name of a link of RateSample.
  virtual std::string LinkName(int link) const { return std::to_string(link); }
  // Starts a collective over `gpus` (ring order; sendrecv: {source, destination}) at
  // sim.Now() and calls `done` from a simulator event when it completes. `mirrors` are
  // groups that run the same collective at the same time without being replayed (their
  // ranks are symmetric to replayed ones): their traffic loads the network, their
  // completion is not reported. A network may remember `mirrors` by where the groups are
  // stored: while it lives, groups passed again at the same addresses and sizes must have
  // the same members (the replay's are fixed for the whole replay).
  virtual void Start(Simulator& sim, CommOp op, std::span<const int> gpus, double bytes,
                     std::function<void()> done, std::span<const std::vector<int>> mirrors) = 0;
  // Start, for a collective that the caller starts again and again and knows by `key`, a
  // small dense index (a Program's CommSignature): every call with the same key passes the
  // same op, the same group (members, at the same address) and the same bytes, while the
  // network lives. A network may remember what it works out per key in an array indexed
  // by it instead of looking it up by the group. By default, Start.
  virtual void StartKnown(Simulator& sim, uint32_t key, CommOp op, std::span<const int> gpus,
                          double bytes, std::function<void()> done,
                          std::span<const std::vector<int>> mirrors) {
    (void)key;
    Start(sim, op, gpus, bytes, std::move(done), mirrors);
  }
  // Per link class, then the busiest individual links; busy_s up to `until`.
  virtual std::vector<LinkUsage> Usage(double step_s) const = 0;
  // Traffic rerouted around failed links so far. Models without routes reroute nothing.
  virtual Reroutes Rerouted() const { return {}; }
  // Bytes put on intra-node and inter-node links so far (all ranks, mirrors included).
  virtual double IntraNodeBytes() const = 0;
  virtual double InterNodeBytes() const = 0;
};

// A Network from a CollectiveModel: each collective takes the model's time, alone.
class CostModelNetwork final : public Network {
 public:
  // Capacities (bytes/s) of all intra-node and all inter-node links, for busy fractions.
  CostModelNetwork(std::unique_ptr<CollectiveModel> model, double intra_capacity,
                   double inter_capacity)
      : model_(std::move(model)),
        intra_capacity_(intra_capacity),
        inter_capacity_(inter_capacity) {}
  void Start(Simulator& sim, CommOp op, std::span<const int> gpus, double bytes,
             std::function<void()> done, std::span<const std::vector<int>> mirrors) override;
  // The cost of key's collective is worked out at its first start and kept in an array
  // indexed by the key (24 bytes a key): no lookup by the group, whose table and members
  // a full replay finds out of cache (5 % of GPT-1T's full replay at 3,072 GPUs).
  void StartKnown(Simulator& sim, uint32_t key, CommOp op, std::span<const int> gpus, double bytes,
                  std::function<void()> done, std::span<const std::vector<int>> mirrors) override;
  std::vector<LinkUsage> Usage(double step_s) const override;
  double IntraNodeBytes() const override { return intra_bytes_; }
  double InterNodeBytes() const override { return inter_bytes_; }

 private:
  // The model's cost of a collective, remembered: a step repeats the same collectives
  // (every layer's TP collectives, every micro-batch's pipeline transfers) many times, and
  // a full replay of thousands of GPUs has thousands of groups.
  const CollectiveCost& Cost(CommOp op, std::span<const int> gpus, double bytes);
  // Adds a started collective's traffic and schedules its end.
  void Run(Simulator& sim, const CollectiveCost& cost, std::function<void()> done, size_t mirrors);

  std::unique_ptr<CollectiveModel> model_;
  double intra_capacity_, inter_capacity_;
  double intra_bytes_ = 0, inter_bytes_ = 0;
  GroupMemo<CollectiveCost> costs_;
  // StartKnown: per key, its cost (a negative duration: not yet worked out).
  std::vector<CollectiveCost> known_;
};

}  // namespace meshsim

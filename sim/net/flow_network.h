// Flow-level bandwidth sharing over a Topology (the SimGrid-style fluid model).
//
// A transfer is a flow along its route. Concurrent flows share every link max-min
// fairly, computed by progressive filling. Rates change only when a flow starts or
// ends: the changes are batched into one "settle", which recomputes the rates of the
// flows connected (through shared links, transitively) to the links that changed —
// max-min allocations decompose over such components, so other flows keep their rates —
// and reschedules a single event for the earliest completion. Flows started one by one
// settle in a zero-delay event (all starts of that instant before it join it); flows
// started between Hold and Release (a collective's phase) settle in Release; the flows
// left beside the ones a completion ends settle at once. The rates are the max-min
// allocation of the flows present whichever way they were batched. A link that a
// completion leaves empty needs no settle (unless watched).
// A flow's progress is kept lazily (bytes left at the time its rate last changed).
// Packet-level effects are not modelled.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "sim/core/simulator.h"
#include "sim/hw/topology.h"
#include "sim/net/route_crossings.h"

namespace meshsim {

class FlowNetwork {
 public:
  // class_efficiency[link class]: fraction of each class's nominal bandwidth reached.
  FlowNetwork(std::shared_ptr<const Topology> topology,
              const std::vector<double>& class_efficiency);
  FlowNetwork(const FlowNetwork&) = delete;
  FlowNetwork& operator=(const FlowNetwork&) = delete;

  // Starts `bytes` from GPU src to GPU dst (src != dst) now; `on_done` runs when the last
  // byte has arrived (latency is the caller's). `flow_key` picks among equal-cost paths.
  void StartFlow(Simulator& sim, int src, int dst, double bytes, uint64_t flow_key,
                 std::function<void()> on_done);
  // The same over an explicit route (link ids; they must outlive the flow). A link may
  // appear several times: the flow then takes its rate that many times on it (a coflow of
  // several transfers moving in lockstep).
  // `gathered` (optional, the route owner's): the route's crossings, gathered at the first
  // start and reused at the next ones (the route must not change while it is kept).
  void StartFlowOnRoute(Simulator& sim, std::span<const int> route, double bytes,
                        std::function<void()> on_done, GatheredRoute* gathered = nullptr);
  void StartFlowOnRoute(Simulator& sim, const std::vector<int>* route, double bytes,
                        std::function<void()> on_done) {
    StartFlowOnRoute(sim, std::span<const int>(*route), bytes, std::move(on_done));
  }

  // Flows started between Hold() and Release(sim) settle in Release, at once, instead of
  // in a zero-delay event (unless one is already due): for a caller that runs as an event
  // of its own and starts all it will start at this instant before it returns.
  void Hold() { ++held_; }
  void Release(Simulator& sim);

  const Topology& topology() const { return *topology_; }
  // Per directed link: bytes carried (up to each flow's last rate change) and time busy
  // (at least one flow; a link busy now counts up to when it last became busy).
  double LinkBytes(int link) const { return links_[link].bytes; }
  double LinkBusySeconds(int link) const { return links_[link].busy_s; }
  double LinkCapacity(int link) const { return links_[link].capacity; }
  // Current total rate of a link, bytes/s.
  double LinkRate(int link) const;
  size_t ActiveFlows() const { return live_; }
  uint64_t RateUpdates() const { return rate_updates_; }
  // Calls `observer` whenever the total rate of one of `links` changes.
  void WatchLinks(const std::vector<int>& links,
                  std::function<void(int link, SimTime t, double rate)> observer);

 private:
  // A long route's distinct links in the order they first appear, each with how many
  // times the route crosses it (a coflow of several transfers crosses a link once per
  // transfer through it: an expert all-to-all over 256 GPUs, 65,280 transfers, crosses
  // each NIC link ~220 times). The loops over such a flow's links visit each once and
  // repeat what a crossing does `count` times in place: each link sees this flow's updates
  // as with one visit per crossing, so the max-min rates are the same; a link lists the
  // flow once (LinkFlow), so the order in which its byte count adds its flows can differ
  // from one entry per crossing (the last bit of a sum).
  struct Flow {
    std::span<const int> route;
    // Its route's distinct links (Crossing) when the route is long and crosses some link
    // more than once; empty: every crossing of `route` once (ForEachCrossing).
    std::vector<Crossing> links;
    double remaining = 0;  // bytes left at `since`
    double rate = 0;       // bytes/s since `since`
    SimTime since;
    std::function<void()> on_done;
    uint32_t version = 0;  // bumps when the completion time changes
    bool alive = false;
  };
  // One live flow on a link, and how many times its route crosses the link.
  struct LinkFlow {
    int flow;
    uint32_t crossings;
  };
  // A link's live flows, one entry each: up to kInline of them in place (most links carry
  // a few at a time), more on the heap. No allocation for a link that never holds more
  // than kInline, and none to free when the network goes.
  class FlowList {
   public:
    FlowList() {}
    FlowList(FlowList&& other) noexcept;
    FlowList(const FlowList&) = delete;
    FlowList& operator=(const FlowList&) = delete;
    ~FlowList() {
      if (cap_ > kInline) delete[] heap_;
    }
    bool empty() const { return size_ == 0; }
    size_t size() const { return size_; }
    const LinkFlow* begin() const { return data(); }
    const LinkFlow* end() const { return data() + size_; }
    LinkFlow* begin() { return data(); }
    LinkFlow* end() { return data() + size_; }
    LinkFlow& back() { return data()[size_ - 1]; }
    void pop_back() { --size_; }
    void push_back(LinkFlow f) {
      if (size_ == cap_) Grow();
      data()[size_++] = f;
    }

   private:
    static constexpr uint32_t kInline = 2;
    const LinkFlow* data() const { return cap_ > kInline ? heap_ : inline_; }
    LinkFlow* data() { return cap_ > kInline ? heap_ : inline_; }
    void Grow();  // doubles the room
    uint32_t size_ = 0, cap_ = kInline;
    union {
      LinkFlow inline_[kInline];
      LinkFlow* heap_;
    };
  };
  // What the hot paths read of a link, in one cache line (a flow's start, settle and
  // completion visit every link of its route).
  struct alignas(64) LinkState {
    FlowList flows;       // live flows
    double capacity = 0;  // bytes/s after efficiency
    double bytes = 0;     // LinkBytes
    double busy_s = 0;    // LinkBusySeconds
    SimTime busy_since;   // while it carries flows
    bool mark = false;    // dirty or in the current component
    bool watched = false;
    uint32_t crossings = 0;  // of the live flows' routes: their LinkFlow::crossings summed
  };
  static_assert(sizeof(LinkState) == 64, "one cache line a link");
  struct Completion {
    SimTime at;
    int flow;
    uint32_t version;
  };

  // Sets f.route, and f.links where the route is long and repeats a link (Crossing),
  // from `gathered` once it holds them (else gathered here, and kept there if given).
  void SetRoute(Flow& f, std::span<const int> route, GatheredRoute* gathered);
  // Calls fn(link, crossings) for each link of the flow's route, in the order of their
  // first crossing (a short route: each crossing, once, in route order).
  template <typename Fn>
  static void ForEachCrossing(const Flow& f, Fn&& fn) {
    if (f.links.empty()) {
      for (int l : f.route) fn(l, uint32_t{1});
    } else {
      for (const Crossing& c : f.links) fn(c.link, c.count);
    }
  }
  void Touch(int link);
  void EnsureSettle(Simulator& sim);
  void Settle(Simulator& sim);
  void CollectComponent();
  void FillRates();
  void Freeze(int flow, double share, int at);
  void PushShare(double share, int link);  // a heap entry for the link
  size_t SortNext(size_t from, size_t count);
  void ScheduleCompletion(Simulator& sim);
  void OnCompletion(Simulator& sim);
  SimTime FinishTime(const Flow& f) const;

  std::shared_ptr<const Topology> topology_;
  std::vector<LinkState> links_;
  std::vector<Flow> flows_;  // slots
  std::vector<int> free_slots_;
  std::vector<int> crossing_slot_;  // per link: its index in the flow being set, or -1
  size_t live_ = 0;
  uint64_t rate_updates_ = 0;

  std::vector<int> dirty_links_;
  bool settle_pending_ = false;
  int held_ = 0;

  std::vector<Completion> completions_;  // min-heap by (at, flow), lazily invalidated
  EventId completion_event_;
  SimTime completion_at_ = SimTime::Max();

  // Scratch for one settle.
  std::vector<int> comp_links_, comp_flows_;
  std::vector<uint8_t> flow_mark_;
  std::vector<double> residual_;
  std::vector<int> unfrozen_;
  std::vector<double> heap_key_;  // per link: the share of its newest heap entry
  struct ShareEntry {
    double share;
    int link;
  };
  // Ordered by share, then link id (Before); After is its reverse, for a min-heap.
  struct Before {
    bool operator()(const ShareEntry& a, const ShareEntry& b) const {
      return a.share != b.share ? a.share < b.share : a.link < b.link;
    }
  };
  struct After {
    bool operator()(const ShareEntry& a, const ShareEntry& b) const { return Before()(b, a); }
  };
  std::vector<ShareEntry> sorted_, heap_;

  std::vector<std::function<void()>> finished_scratch_;  // OnCompletion's, reused

  std::vector<int> watched_;
  std::vector<double> watched_rate_;
  std::function<void(int, SimTime, double)> observer_;
};

}  // namespace meshsim

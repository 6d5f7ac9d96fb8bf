// A collective's phases routed over a Topology: what FlowCollectiveNetwork runs and what
// the mirror traffic (mirror_traffic.h) splits into simulated and counted coflows.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sim/net/route_crossings.h"

namespace meshsim {

// The transfers of a phase that carry equal bytes run as one coflow: they move in
// lockstep (a ring advances at the pace of its slowest edge), so they are one flow over
// the union of their routes, a link counted once per transfer crossing it, carrying
// each transfer's bytes. A phase with transfers of several sizes (a tree's chain and
// its cross-node edges) runs one coflow per size at once and ends with the last.
struct Coflow {
  // Its route: the concatenated routes of its transfers (directed link ids), links
  // [first, first + count) of the storage of the plan that holds it.
  const std::vector<int>* links = nullptr;
  uint32_t first = 0, count = 0;
  double bytes = 0;         // per transfer
  int rerouted = 0;         // transfers whose route differs from the healthy fabric's
  std::vector<int> detour;  // their links that the healthy routes do not use
  // Mirror traffic near (mirror_traffic.h): its links are near (set once, when it first
  // runs replayed or simulated); it crosses a near link (set once that is so, for coflows
  // the mirrors have met). Plans are shared and const otherwise; near links stay near.
  mutable bool marked_near = false;
  mutable bool crosses_near = false;
  mutable bool met = false;  // seen by the mirrors: crosses_near is kept up to date
  // Its route's crossings, gathered by the flow network at its first flow (FlowNetwork::
  // StartFlowOnRoute) and reused at the next: the route does not change once routed.
  mutable GatheredRoute gathered;

  std::span<const int> route() const { return {links->data() + first, count}; }
};

struct RoutedPhase {
  double latency_s = 0;
  double min_s = 0;
  double stretch = 1;
  std::vector<Coflow> coflows;  // empty: no transfer
};

// Not copied once built: its coflows point to its `links`.
struct RoutedPlan {
  double launch_s = 0;  // before the first phase
  std::vector<RoutedPhase> phases;
  std::vector<int> links;  // the coflows' routes
};

}  // namespace meshsim

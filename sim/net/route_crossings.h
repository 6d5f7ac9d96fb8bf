// A route's links with how many times it crosses each: what the flow network walks for a
// long route that repeats links (a coflow of many transfers), and its memo for a route
// that starts flows many times.
#pragma once

#include <cstdint>
#include <vector>

namespace meshsim {

// One link of a route and how many times the route crosses it.
struct Crossing {
  int link;
  uint32_t count;
};

// A route's crossings as the flow network gathers them (FlowNetwork::StartFlowOnRoute),
// kept by the route's owner so that they are gathered once, not at every flow started on
// it: a routed plan's coflow (an expert all-to-all over 256 GPUs concatenates 65,280
// transfers' routes) starts a flow at every run of its collective.
struct GatheredRoute {
  bool gathered = false;
  // The route's distinct links in the order they first appear, each with its count;
  // empty once gathered where the route is short or repeats no link (walked as it is).
  std::vector<Crossing> links;
};

}  // namespace meshsim

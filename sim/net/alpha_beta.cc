#include "sim/net/alpha_beta.h"

#include <algorithm>
#include <cassert>
#include <map>

namespace meshsim {

CollectiveCost AlphaBetaCollectiveModel::Cost(CommOp op, std::span<const int> gpus,
                                              double bytes) const {
  const int n = static_cast<int>(gpus.size());
  assert(n >= 1);
  CollectiveCost cost;
  if (n == 1 || bytes <= 0) return cost;
  const int per_node = cluster_.gpus_per_node;
  const double eff = cluster_.efficiency.network;
  const double nvlink_bps = cluster_.intra_node.gbps_per_gpu * 1e9 * eff;
  const double nic_bps = cluster_.inter_node.gbps_per_nic * 1e9 * eff;

  // Ranks of the group per node; the ring crosses nodes when more than one node is used.
  int max_per_node = 0;
  int nodes_used = 0;
  {
    std::map<int, int> count;
    for (int g : gpus) ++count[g / per_node];
    nodes_used = static_cast<int>(count.size());
    for (const auto& [node, c] : count) max_per_node = std::max(max_per_node, c);
  }
  const bool crosses = nodes_used > 1;
  const double alpha_s = (crosses ? cluster_.inter_node.latency_us : cluster_.intra_node.latency_us) * 1e-6;

  if (op == CommOp::kSendRecv) {
    assert(n == 2);
    const bool remote = gpus[0] / per_node != gpus[1] / per_node;
    const double bw = remote ? nic_bps : nvlink_bps;
    const double lat = (remote ? cluster_.inter_node.latency_us : cluster_.intra_node.latency_us) * 1e-6;
    cost.duration = SimTime::Seconds(lat + bytes / bw);
    (remote ? cost.inter_node_bytes : cost.intra_node_bytes) = bytes;
    return cost;
  }

  double bw = max_per_node > 1 ? nvlink_bps : 1e30;
  if (crosses) {
    const int nics = std::min(cluster_.inter_node.nics_per_node, max_per_node);
    bw = std::min(bw, nic_bps * nics / max_per_node);
  }
  const double fraction = static_cast<double>(n - 1) / n;
  const double factor = op == CommOp::kAllReduce ? 2 * fraction : fraction;
  const int steps = op == CommOp::kAllReduce ? 2 * (n - 1) : n - 1;
  cost.duration = SimTime::Seconds(steps * alpha_s + factor * bytes / bw);
  // Each rank sends factor*bytes; a ring crosses each node boundary once per node.
  const double sent = factor * bytes * n;
  if (crosses) {
    const double crossing = sent * nodes_used / n;
    cost.inter_node_bytes = crossing;
    cost.intra_node_bytes = sent - crossing;
  } else {
    cost.intra_node_bytes = sent;
  }
  return cost;
}

}  // namespace meshsim

#include "sim/net/alpha_beta.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <vector>

namespace meshsim {
namespace {

// Fraction of the buffer each rank sends, and the number of latency-bound steps.
double RingFactor(CommOp op, int n) {
  const double f = static_cast<double>(n - 1) / n;
  return op == CommOp::kAllReduce ? 2 * f : f;
}
int RingSteps(CommOp op, int n) { return op == CommOp::kAllReduce ? 2 * (n - 1) : n - 1; }

}  // namespace

double AlphaBetaCollectiveModel::NvlinkBps() const {
  return cluster_.intra_node.gbps_per_gpu * 1e9 * cluster_.efficiency.network;
}

double AlphaBetaCollectiveModel::NicBpsPerGpu(int per_node) const {
  const int nics = std::min(cluster_.inter_node.nics_per_node, per_node);
  return cluster_.inter_node.gbps_per_nic * 1e9 * cluster_.NicEfficiency() * nics / per_node;
}

AlphaBetaCollectiveModel::Shape AlphaBetaCollectiveModel::ShapeOf(std::span<const int> gpus) const {
  // Called for every collective of a replay. Small groups (TP, CP, pipeline pairs) count
  // members per node in a table on the stack; large ones sort their nodes.
  Shape s;
  s.ranks = static_cast<int>(gpus.size());
  const int per = cluster_.gpus_per_node;
  if (gpus.size() <= 16) {
    std::array<int, 16> node, count;
    for (int g : gpus) {
      int j = 0;
      while (j < s.nodes && node[j] != g / per) ++j;
      if (j == s.nodes) {
        node[s.nodes] = g / per;
        count[s.nodes++] = 0;
      }
      s.per_node = std::max(s.per_node, ++count[j]);
    }
    return s;
  }
  std::vector<int> nodes(gpus.size());
  for (size_t i = 0; i < gpus.size(); ++i) nodes[i] = gpus[i] / per;
  std::sort(nodes.begin(), nodes.end());
  for (size_t i = 0; i < nodes.size();) {
    size_t j = i;
    while (j < nodes.size() && nodes[j] == nodes[i]) ++j;
    ++s.nodes;
    s.per_node = std::max(s.per_node, static_cast<int>(j - i));
    i = j;
  }
  return s;
}

CollectiveCost AlphaBetaCollectiveModel::SendRecv(std::span<const int> gpus, double bytes) const {
  assert(gpus.size() == 2);
  const bool remote = gpus[0] / cluster_.gpus_per_node != gpus[1] / cluster_.gpus_per_node;
  CollectiveCost cost;
  if (remote) {
    cost.duration =
        SimTime::Seconds(cluster_.inter_node.latency_us * 1e-6 + bytes / NicBpsPerGpu(1));
    cost.inter_node_bytes = bytes;
  } else {
    cost.duration = SimTime::Seconds(cluster_.intra_node.latency_us * 1e-6 + bytes / NvlinkBps());
    cost.intra_node_bytes = bytes;
  }
  return cost;
}

CollectiveCost AlphaBetaCollectiveModel::Ring(CommOp op, const Shape& s, double bytes) const {
  const bool crosses = s.nodes > 1;
  double bw = s.per_node > 1 ? NvlinkBps() : 1e300;
  if (crosses) bw = std::min(bw, NicBpsPerGpu(s.per_node));
  const double alpha =
      (crosses ? cluster_.inter_node.latency_us : cluster_.intra_node.latency_us) * 1e-6;
  const double factor = RingFactor(op, s.ranks);
  CollectiveCost cost;
  cost.duration = SimTime::Seconds(RingSteps(op, s.ranks) * alpha + factor * bytes / bw);
  // Each rank sends factor * bytes; a ring crosses each node boundary once per node.
  const double sent = factor * bytes * s.ranks;
  cost.inter_node_bytes = crosses ? sent * s.nodes / s.ranks : 0;
  cost.intra_node_bytes = sent - cost.inter_node_bytes;
  return cost;
}

CollectiveCost AlphaBetaCollectiveModel::HierarchicalAllReduce(const Shape& s, double bytes) const {
  const int g = s.per_node, k = s.nodes;
  const Shape local{g, 1, g};
  const CollectiveCost rs = Ring(CommOp::kReduceScatter, local, bytes);
  const CollectiveCost ag = Ring(CommOp::kAllGather, local, bytes);
  // k-rank rings across nodes, one per local rank, each on its share of the NICs.
  const double shard = bytes / g;
  const double inter_s = RingSteps(CommOp::kAllReduce, k) * cluster_.inter_node.latency_us * 1e-6 +
                         RingFactor(CommOp::kAllReduce, k) * shard / NicBpsPerGpu(g);
  CollectiveCost cost;
  cost.duration = rs.duration + ag.duration + SimTime::Seconds(inter_s);
  cost.intra_node_bytes = (rs.intra_node_bytes + ag.intra_node_bytes) * k;
  cost.inter_node_bytes = RingFactor(CommOp::kAllReduce, k) * shard * s.ranks;
  return cost;
}

CollectiveCost AlphaBetaCollectiveModel::Cost(CommOp op, std::span<const int> gpus,
                                              double bytes) const {
  assert(!gpus.empty());
  if (gpus.size() == 1 || bytes <= 0) return {};
  if (op == CommOp::kSendRecv) return SendRecv(gpus, bytes);
  if (op == CommOp::kRingShift) {
    // One ring step: every member sends `bytes` to its successor, all at once.
    const Shape s = ShapeOf(gpus);
    const bool crosses = s.nodes > 1;
    const double bw = crosses ? NicBpsPerGpu(s.per_node) : NvlinkBps();
    CollectiveCost cost;
    cost.duration = SimTime::Seconds(
        (crosses ? cluster_.inter_node.latency_us : cluster_.intra_node.latency_us) * 1e-6 +
        bytes / bw);
    const double sent = bytes * s.ranks;
    cost.inter_node_bytes = crosses ? bytes * s.nodes : 0;
    cost.intra_node_bytes = sent - cost.inter_node_bytes;
    return cost;
  }
  const Shape s = ShapeOf(gpus);
  if (op == CommOp::kAllReduce && s.nodes > 1 && s.per_node > 1 &&
      s.ranks == s.nodes * s.per_node) {
    return HierarchicalAllReduce(s, bytes);
  }
  return Ring(op, s, bytes);
}

}  // namespace meshsim

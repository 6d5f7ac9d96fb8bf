#include "sim/net/alpha_beta.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <vector>

#include "sim/hw/nics.h"
#include "sim/net/expert_dispatch.h"
#include "sim/net/torus_collectives.h"

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
  const int nics = NicsOfRanks(cluster_.inter_node, per_node, cluster_.gpus_per_node);
  return cluster_.inter_node.gbps_per_nic * 1e9 * cluster_.NicEfficiency() * nics / per_node;
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

CollectiveCost AlphaBetaCollectiveModel::RingShift(std::span<const int> gpus, double bytes) const {
  // One ring step: every member sends `bytes` to its successor, all at once.
  const GroupShape s = GroupShapeOf(cluster_.gpus_per_node, gpus);
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

CollectiveCost AlphaBetaCollectiveModel::RingData(CommOp op, const GroupShape& s, double bytes,
                                                  double wire) const {
  const bool crosses = s.nodes > 1;
  double bw = s.per_node > 1 ? NvlinkBps() : 1e300;
  if (crosses) bw = std::min(bw, NicBpsPerGpu(s.per_node));
  const double factor = RingFactor(op, s.ranks) * wire;
  CollectiveCost cost;
  cost.duration = SimTime::Seconds(factor * bytes / bw);
  // Each rank sends factor * bytes; a ring crosses each node boundary once per node.
  const double sent = factor * bytes * s.ranks;
  cost.inter_node_bytes = crosses ? sent * s.nodes / s.ranks : 0;
  cost.intra_node_bytes = sent - cost.inter_node_bytes;
  return cost;
}

CollectiveCost AlphaBetaCollectiveModel::AllToAll(const GroupShape& s, double bytes) const {
  CollectiveCost cost = RingData(CommOp::kAllToAll, s, bytes, 1.0);
  const double alpha =
      (s.nodes > 1 ? cluster_.inter_node.latency_us : cluster_.intra_node.latency_us) * 1e-6;
  cost.duration += SimTime::Seconds(RingSteps(CommOp::kAllToAll, s.ranks) * alpha);
  return cost;
}

CollectiveCost AlphaBetaCollectiveModel::ExpertDispatch(CommOp op, std::span<const int> gpus,
                                                        double bytes) const {
  const ExpertFanout f = FanoutOf(routing_, gpus, cluster_.gpus_per_node);
  const double rdma = bytes * f.RdmaCopies(), nvlink = bytes * f.NvlinkCopies();
  const bool crosses = f.domains > 1;
  const double rdma_s =
      ExpertRdmaSeconds(cluster_, f, bytes, DomainRateFactor(backend_, op, f.domains));
  const double latency_s =
      ((crosses ? cluster_.inter_node.latency_us : 0) + cluster_.intra_node.latency_us) * 1e-6;
  CollectiveCost cost;
  cost.duration = SimTime::Seconds(latency_s + std::max(rdma_s, nvlink / NvlinkBps()));
  cost.inter_node_bytes = rdma * f.ranks;
  cost.intra_node_bytes = nvlink * f.ranks;
  return cost;
}

CollectiveCost AlphaBetaCollectiveModel::HierarchicalAllReduce(const GroupShape& s, double bytes,
                                                               const NcclChoice& choice) const {
  const int g = s.per_node, k = s.nodes;
  const double wire = NcclTuner::WireFactor(choice.protocol);
  auto hops = [&](CommOp op, GroupShape shape, double b) {
    return tuner_.Evaluate(op, shape, b, AllReduceAlgorithm::kRing, choice.protocol).hops_s;
  };
  const GroupShape local{g, 1, g};
  const CollectiveCost rs = RingData(CommOp::kReduceScatter, local, bytes, wire);
  // k-rank rings across nodes, one per local rank, each on its share of the NICs.
  const double shard = bytes / g;
  const double across_s = RingFactor(CommOp::kAllReduce, k) * shard * wire / NicBpsPerGpu(g);
  CollectiveCost cost;
  cost.duration = SimTime::Seconds(choice.launch_s + 2 * rs.duration.seconds() +
                                   2 * hops(CommOp::kReduceScatter, local, bytes) + across_s +
                                   hops(CommOp::kAllReduce, {k, k, 1}, shard));
  cost.intra_node_bytes = 2 * rs.intra_node_bytes * k;
  cost.inter_node_bytes = RingFactor(CommOp::kAllReduce, k) * shard * wire * s.ranks;
  return cost;
}

CollectiveCost AlphaBetaCollectiveModel::Nvls(CommOp op, const GroupShape& s, double bytes,
                                              const NcclChoice& c) const {
  // Each GPU sends and receives 1 + 1/heads of the buffer through the switch for an
  // all-reduce (the heads' own shards, once more), (g-1)/g for all-gather and
  // reduce-scatter; across nodes each head's NIC
  // carries a double binary tree of 1/heads of it (both trees: once each way on 2 nodes,
  // twice on more, where a head is inside one tree).
  const int g = s.per_node, heads = c.heads;
  const double through_switch =
      op == CommOp::kAllReduce ? bytes * (1 + 1.0 / heads) : bytes * (g - 1) / g;
  CollectiveCost cost;
  double link_s = through_switch / NvlinkBps();
  cost.intra_node_bytes = through_switch * s.ranks;
  if (s.nodes > 1) {
    const double per_nic = bytes / c.heads * (s.nodes <= 2 ? 1 : 2);
    link_s = std::max(link_s, per_nic / NicBpsPerGpu(1));
    cost.inter_node_bytes = 2.0 * (s.nodes - 1) * bytes;
  }
  const double data_s = c.stretch * std::max(link_s, bytes / c.cap_algbw);
  cost.duration = SimTime::Seconds(c.launch_s + c.hops_s + c.fill_s + data_s);
  return cost;
}

CollectiveCost AlphaBetaCollectiveModel::Tuned(CommOp op, const GroupShape& s, double bytes) const {
  const NcclChoice choice = tuner_.Choose(op, s, bytes, nccl_.algorithm, nccl_.protocol);
  if (choice.algorithm == AllReduceAlgorithm::kNvls ||
      choice.algorithm == AllReduceAlgorithm::kNvlsTree) {
    return Nvls(op, s, bytes, choice);
  }
  if (choice.algorithm == AllReduceAlgorithm::kHierarchical && s.nodes > 1 && s.per_node > 1 &&
      s.ranks == s.nodes * s.per_node) {
    return HierarchicalAllReduce(s, bytes, choice);
  }
  CollectiveCost cost = RingData(op, s, bytes, NcclTuner::WireFactor(choice.protocol));
  const double data_s =
      choice.stretch * std::max(cost.duration.seconds(), bytes / choice.cap_algbw);
  cost.duration = SimTime::Seconds(choice.launch_s + choice.hops_s + data_s);
  return cost;
}

CollectiveCost AlphaBetaCollectiveModel::Cost(CommOp op, std::span<const int> gpus,
                                              double bytes) const {
  assert(!gpus.empty());
  if (gpus.size() == 1 || bytes <= 0) return {};
  if (cluster_.Torus()) {  // no NCCL, no DeepEP: an expert dispatch as the all-to-all
    if (IsExpertExchange(op)) return Cost(CommOp::kAllToAll, gpus, bytes * routing_.top_k);
    return TorusCollectiveCost(cluster_, op, gpus, bytes);
  }
  switch (op) {
    case CommOp::kSendRecv:
      return SendRecv(gpus, bytes);
    case CommOp::kRingShift:
      return RingShift(gpus, bytes);
    case CommOp::kAllToAll:
      return AllToAll(GroupShapeOf(cluster_.gpus_per_node, gpus), bytes);
    case CommOp::kExpertDispatch:
    case CommOp::kExpertCombine:
      return ExpertDispatch(op, gpus, bytes);
    default:
      return Tuned(op, GroupShapeOf(cluster_.gpus_per_node, gpus), bytes);
  }
}

}  // namespace meshsim

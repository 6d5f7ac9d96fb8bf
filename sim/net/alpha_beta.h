// Alpha-beta collective costs on the cluster's two link classes.
//
// A collective over n ranks is timed as NCCL's ring algorithms behave at large sizes:
// all-reduce moves 2(n-1)/n of the buffer through each rank in 2(n-1) latency-bound
// steps; all-gather, reduce-scatter and all-to-all move (n-1)/n in n-1 steps. A ring's
// bandwidth is its slowest hop: NVLink/NVSwitch inside a node (gbps_per_gpu), and across
// nodes each GPU's share of its node's NICs (gbps_per_nic * min(nics, g) / g when g
// ranks of the group share a node). An all-reduce whose group spans nodes with several
// ranks per node runs hierarchically: reduce-scatter inside each node, all-reduce of the
// 1/g shards across nodes (one ring per local rank, in parallel over the NICs), then
// all-gather inside each node. Bandwidths are scaled by efficiency.network.
//
// The flow-level network model replaces this behind the same CollectiveModel interface.
#pragma once

#include "sim/hw/cluster_spec.h"
#include "sim/net/collective.h"

namespace meshsim {

class AlphaBetaCollectiveModel final : public CollectiveModel {
 public:
  explicit AlphaBetaCollectiveModel(const ClusterSpec& cluster) : cluster_(cluster) {}
  CollectiveCost Cost(CommOp op, std::span<const int> gpus, double bytes) const override;

 private:
  // How a group sits on the cluster.
  struct Shape {
    int ranks = 0;
    int nodes = 0;     // nodes the group touches
    int per_node = 0;  // most ranks of the group on one node
  };
  Shape ShapeOf(std::span<const int> gpus) const;
  CollectiveCost SendRecv(std::span<const int> gpus, double bytes) const;
  CollectiveCost Ring(CommOp op, const Shape& s, double bytes) const;
  CollectiveCost HierarchicalAllReduce(const Shape& s, double bytes) const;
  double NvlinkBps() const;
  double NicBpsPerGpu(int per_node) const;

  const ClusterSpec cluster_;
};

}  // namespace meshsim

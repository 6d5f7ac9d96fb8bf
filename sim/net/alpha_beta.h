// Alpha-beta collective costs on the cluster's two link classes.
//
// Ring algorithms: all-reduce moves 2(n-1)/n of the buffer through each rank in 2(n-1)
// latency-bound steps; all-gather, reduce-scatter and all-to-all move (n-1)/n in n-1
// steps. The bandwidth of a ring is its slowest hop: NVLink/NVSwitch inside a node
// (gbps_per_gpu), and across nodes the NIC bandwidth shared by the group's GPUs of one
// node (NCCL spreads rings over all NICs: gbps_per_nic * min(nics, g) / g per GPU when g
// ranks of the group share a node). Both are scaled by efficiency.network.
#pragma once

#include "sim/hw/cluster_spec.h"
#include "sim/net/collective.h"

namespace meshsim {

class AlphaBetaCollectiveModel final : public CollectiveModel {
 public:
  explicit AlphaBetaCollectiveModel(const ClusterSpec& cluster) : cluster_(cluster) {}
  CollectiveCost Cost(CommOp op, std::span<const int> gpus, double bytes) const override;

 private:
  const ClusterSpec cluster_;
};

}  // namespace meshsim

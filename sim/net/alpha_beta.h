// Alpha-beta collective costs on the cluster's two link classes.
//
// All-reduce, all-gather and reduce-scatter run as NcclTuner (nccl_tuner.h) chooses, like
// the flow-level model: the choice's launch cost and latency-bound steps, plus the data
// time: the choice's stretch (idle channels, tree correction) times the longer of (a) the
// protocol's wire bytes through the group's slowest link class and (b) the bytes over
// NCCL's absolute cap for the protocol. Wire bytes as NCCL's rings move them: all-reduce moves
// 2(n-1)/n of the buffer through each rank, all-gather and reduce-scatter (n-1)/n; a tree
// all-reduce is charged the same bytes (its bottleneck on NVLink is the ring's). A ring's bandwidth
// is its slowest hop: NVLink/NVSwitch inside a node (gbps_per_gpu), and across nodes each GPU's
// share of its node's NICs (gbps_per_nic * min(nics, g) / g when g ranks of the group share a
// node). A hierarchical all-reduce (only when asked for) reduce-scatters inside each node,
// all-reduces the 1/g shards across nodes (one ring per local rank, in parallel over the
// NICs), then all-gathers inside each node. Bandwidths are scaled by efficiency.network
// and efficiency.nic. Point-to-point operations (sendrecv, ring shift) and all-to-all
// (n-1 ring-like steps) take the cluster's link latency per step. An expert dispatch
// or combine (DeepEP / HybridEP, expert_dispatch.h) takes the longer of its RDMA bytes per
// GPU over the GPU's share of its node's NICs, at the rate the backend's kernel reaches
// over the group's domains (DomainRateFactor), and its NVLink bytes per GPU over NVLink (the
// two hops run pipelined), plus one latency of each link class it crosses.
//
// The flow-level network model replaces this behind the same Network interface.
#pragma once

#include "sim/core/expert_routing.h"
#include "sim/hw/cluster_spec.h"
#include "sim/net/collective.h"
#include "sim/net/nccl_tuner.h"

namespace meshsim {

class AlphaBetaCollectiveModel final : public CollectiveModel {
 public:
  // `nccl`: what the tuner may choose (kAuto, 0) and what it must use. `routing`: the MoE
  // router behind expert dispatches and combines (IsExpertExchange); `backend`: the library
  // that runs them.
  explicit AlphaBetaCollectiveModel(const ClusterSpec& cluster, const NcclOptions& nccl = {},
                                    const ExpertRouting& routing = {},
                                    MoeFlexBackend backend = MoeFlexBackend::kDeepEp)
      : cluster_(cluster),
        nccl_(nccl),
        tuner_(cluster, nccl.channels),
        routing_(routing),
        backend_(backend) {}
  CollectiveCost Cost(CommOp op, std::span<const int> gpus, double bytes) const override;

 private:
  CollectiveCost SendRecv(std::span<const int> gpus, double bytes) const;
  CollectiveCost RingShift(std::span<const int> gpus, double bytes) const;
  CollectiveCost AllToAll(const GroupShape& s, double bytes) const;
  CollectiveCost ExpertDispatch(CommOp op, std::span<const int> gpus, double bytes) const;
  // Data time (no latency) and bytes of a ring of `op` over `s`, `wire` bytes per byte.
  CollectiveCost RingData(CommOp op, const GroupShape& s, double bytes, double wire) const;
  CollectiveCost Tuned(CommOp op, const GroupShape& s, double bytes) const;
  // NVLS / NVLSTree (nccl_tuner.h): the switch's and the heads' NICs' link bytes.
  CollectiveCost Nvls(CommOp op, const GroupShape& s, double bytes, const NcclChoice& c) const;
  CollectiveCost HierarchicalAllReduce(const GroupShape& s, double bytes,
                                       const NcclChoice& choice) const;
  double NvlinkBps() const;
  double NicBpsPerGpu(int per_node) const;

  const ClusterSpec cluster_;
  const NcclOptions nccl_;
  const NcclTuner tuner_;
  const ExpertRouting routing_;
  const MoeFlexBackend backend_;
};

}  // namespace meshsim

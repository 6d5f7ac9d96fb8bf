// nccl-tests for the simulated cluster: one collective at a time on an idle network.
#pragma once

#include <vector>

#include "sim/core/collective_kinds.h"
#include "sim/core/status.h"
#include "sim/hw/cluster_spec.h"
#include "sim/net/nccl_tuner.h"

namespace meshsim {

struct CollectiveBenchRow {
  double bytes = 0;
  double time_s = 0;
  double algbw_gbps = 0;  // bytes / time, GB/s
  double busbw_gbps = 0;  // nccl-tests: algbw x 2(n-1)/n (all-reduce), x (n-1)/n (all-gather,
                          // reduce-scatter, all-to-all), x 1 (sendrecv)
  // Mean egress rate of the NICs in use, GB/s: the bytes the collective sent into the
  // fabric over (nodes x NICs per node in use) and the time; 0 inside one node. Unlike
  // busbw / NICs it means the same for every operation (all-to-all included): how close
  // each NIC came to its line rate.
  double nic_gbps = 0;
  // How all-reduce, all-gather and reduce-scatter ran (NcclTuner's choice); other
  // operations leave channels 0.
  AllReduceAlgorithm algorithm = AllReduceAlgorithm::kRing;
  NcclProtocol protocol = NcclProtocol::kSimple;
  int channels = 0;
  // What NCCL's tuner model says that choice takes (NcclChoice::estimate_s: latency +
  // bytes / the model's bandwidth, the figure NCCL compares), beside the simulated
  // time_s; 0 where channels is 0.
  double model_s = 0;
};

// Runs `op` over GPUs 0..gpus-1 of `cluster` (resized to ceil(gpus / gpus_per_node)
// nodes) on the flow-level network for sizes min_bytes, 2*min_bytes, ... up to max_bytes.
// sendrecv uses GPU 0 and GPU gpus-1. `nccl` overrides the tuner's choice (defaults:
// NCCL's tuner model picks, as nccl-tests with no NCCL_ALGO, NCCL_PROTO or channel
// settings). Fails if the cluster's topology is invalid.
Result<std::vector<CollectiveBenchRow>> BenchCollective(ClusterSpec cluster, CommOp op, int gpus,
                                                        double min_bytes, double max_bytes,
                                                        const NcclOptions& nccl);

double BusBandwidthFactor(CommOp op, int n);

}  // namespace meshsim

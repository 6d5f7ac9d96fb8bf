// How a node's GPUs share its NICs (inter_node.nics_per_node against gpus_per_node).
//
// A node may have fewer NICs than GPUs (GPU l of g uses NIC floor(l x nics / g): several
// GPUs share one) or a multiple of them (GPU l owns NICs l k .. l k + k - 1, k = nics /
// g: OCI's BM.GPU4.8 has 16 x 100 Gb/s for 8 A100s); DecodeCluster rejects other counts.
// NCCL's topology search gives each NIC of a GPU its own channels (src/graph/topo.cc,
// ncclTopoGetLocalNet: a GPU's channels take its NICs in turn).
#pragma once

#include <algorithm>

#include "sim/hw/cluster_spec.h"

namespace meshsim {

// NICs per GPU when a node has more NICs than GPUs (k above), else 1.
inline int NicsPerGpu(const InterNodeSpec& in, int gpus_per_node) {
  return in.nics_per_node > gpus_per_node ? in.nics_per_node / gpus_per_node : 1;
}

// The NICs that `ranks` GPUs of one node reach: k per GPU when the node has more NICs
// than GPUs, else one each, at most nics_per_node.
inline int NicsOfRanks(const InterNodeSpec& in, int ranks, int gpus_per_node) {
  if (in.nics_per_node > gpus_per_node) return ranks * NicsPerGpu(in, gpus_per_node);
  return std::min(ranks, in.nics_per_node);
}

}  // namespace meshsim

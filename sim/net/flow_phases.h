// Collectives decomposed into phases of point-to-point transfers, as NCCL runs them
// (FlowCollectiveNetwork, flow_collectives.h, routes and runs them).
//
// All-reduce, all-gather and reduce-scatter run as NcclTuner (nccl_tuner.h) chooses:
// an algorithm, a protocol and a number of channels. The collective starts after the
// choice's launch cost (NCCL's base latency), then runs its phases. A phase is a set of
// concurrent point-to-point transfers and a latency term: its data takes `stretch` times
// as long as its transfers do (the channels a small collective leaves idle, NCCL's tree
// correction), and at least `min_s` (NCCL's absolute caps for the protocol: llMaxBw, the
// per-channel maxima), then its latency passes. Transfers carry the protocol's wire
// bytes (LL 2x, LL128 128/120 of the data). NCCL pipelines chunks through a ring, so all links of a
// ring are busy at once: one flow per ring edge carrying that edge's share of the data is the fluid
// limit of the chunked algorithm.
//
//  - ring (all-reduce, all-gather, reduce-scatter): one flow per edge, 2(n-1)/n (or
//    (n-1)/n) of the buffer; latency: the tuner's steps x per-hop latency of the
//    protocol. A ring that crosses nodes is split into one ring per NIC (at most the
//    channels the collective uses and the channels of NCCL's search, max_channels / 2),
//    each carrying its share of the data; a ring's edges
//    between nodes join GPUs of the same local rank (one rail), a different one per ring,
//    so every NIC carries one ring each way. Where a node has k > 1 NICs per GPU, each
//    GPU enters k rings, one on each of its NICs (NCCL's ncclTopoGetLocalNet gives a
//    GPU's channels its NICs in turn), so the rings number the group's NICs on a node.
//  - tree all-reduce, as NCCL's tree algorithm: one channel per NIC (as for rings, at
//    most max_channels / 2), each reducing and broadcasting 1/channels of the buffer,
//    pipelined: a chain through the GPUs of every
//    node (the whole slice up and down each NVLink hop) whose head joins a double binary
//    tree across nodes (each tree carries half the slice, up and down). On one node, the
//    chains alone.
//  - hierarchical all-reduce (meshsim's own; only when asked for): reduce-scatter in each
//    node, then all-reduce of each 1/g shard across nodes (a ring per local rank), then
//    all-gather in each node, each phase with the tuner's ring latency for its ranks.
//  - all-to-all: direct, every pair at once, 1/n of the buffer each; a transfer to another
//    node is relayed over NVLink to the local GPU on the destination's rail (PXN), so
//    that it crosses the fabric rail-aligned. One step of the cluster's link latency.
//  - sendrecv: one flow plus the link latency (intra_node or inter_node latency_us); across
//    nodes relayed to the sender's node's GPU on the receiver's rail (PXN), as NCCL does.
#pragma once

#include <span>
#include <vector>

#include "sim/core/collective_kinds.h"
#include "sim/hw/cluster_spec.h"
#include "sim/net/nccl_tuner.h"

namespace meshsim {

// One point-to-point transfer of a phase. With `via` >= 0 the data first moves over
// NVLink to GPU `via` and leaves through that GPU's NIC (NCCL's PXN), so that a ring
// channel uses one rail in and out of every node. With `nic` >= 0 (nodes with more NICs
// than GPUs) it crosses nodes on NIC `nic` of both nodes (Topology::AppendRailRoute).
struct Transfer {
  int src, dst;
  double bytes;
  int via = -1;
  int nic = -1;
};
struct Phase {
  std::vector<Transfer> transfers;
  double latency_s = 0;  // after the transfers
  // The phase's data ends at start + max(stretch x (last arrival - start), min_s): NCCL's
  // absolute caps for the protocol (min_s) and idle channels / tree correction (stretch).
  double min_s = 0;
  double stretch = 1;
};

// The phases of a collective (pure function of the cluster; exposed for tests). For
// all-reduce, all-gather and reduce-scatter `choice` (tuner.Choose) says how they run;
// other operations ignore it. The launch cost (choice.launch_s) is not a phase.
std::vector<Phase> CollectivePhases(const ClusterSpec& cluster, const NcclTuner& tuner,
                                    const NcclChoice& choice, CommOp op, std::span<const int> gpus,
                                    double bytes);

// The group's GPUs by node, in order of first appearance.
std::vector<std::vector<int>> GpusByNode(const ClusterSpec& cluster, std::span<const int> gpus);

}  // namespace meshsim

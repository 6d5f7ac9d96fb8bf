// NCCL's choice of algorithm, protocol and channels for a collective, and what its tuner
// model says that choice costs.
//
// NCCL times every (algorithm, protocol) pair with a latency-bandwidth model and runs the
// fastest (src/graph/tuning.cc: ncclTopoTuneModel, ncclTopoGetAlgoTime; src/enqueue.cc:
// topoGetAlgoInfo). This file restates that model with NCCL's published constants (NCCL
// master as of 2026; README "Network" lists them with their sources):
//
//   time = latency(algorithm, protocol, ranks, nodes) + bytes / algbw(algorithm, protocol)
//
//   latency  ring: base + (steps - inter) x hop_nvlink + inter x hop_net; steps = 2(n-1)
//            (all-reduce) or n-1 (all-gather, reduce-scatter), inter = 2(k-1) or k-1 of
//            them cross nodes (k nodes). Tree (all-reduce): base + 2 x ((g-1) x hop_nvlink
//            + floor(log2 k) x hop_net), g ranks per node. Multi-node Simple rings pay
//            1.4x ("plateau") once each rank's share of a channel reaches 64 bytes.
//   busbw    Simple: the link bandwidth the group can use (NVLink per GPU, and across
//            nodes the NICs of the group's ranks on a node); LL: half of it, at most
//            NCCL's llMaxBw; LL128: 0.92 of it, at most channels x a per-channel cap.
//            Tree: 0.92 of it, per-channel capped, then /3.8 (LL) or x7/9 (LL128, one
//            node) or x120/128 (LL128, several); then NCCL's per-size correction table.
//   algbw    ring: busbw x n / steps; tree: busbw / 2.
//
// The network models do not take the model's bandwidth as the truth: they move the
// protocol's wire bytes over the links (with contention), bound by NCCL's absolute caps
// (llMaxBw, the per-channel maxima), and stretch the data time by the channels a small
// collective leaves idle and by NCCL's measured tree correction.
//
// Channels: a communicator has `max_channels` (24 on one NVSwitch node, 2 per NIC and
// rail across nodes, as NCCL's init logs show on 8-GPU H100 nodes), twice the channels of
// NCCL's topology search, which its per-channel caps count; a collective uses fewer when
// small: NCCL drops channels while bytes < channels x threads x threshold (threshold: LL
// 8 x ranks for rings, 8 for trees; LL128 8; Simple 64).
//
// GPU generation (NCCL indexes its caps by compute capability) comes from gpu.kind: V100
// is Volta; A100, A800, A30, A10 are Ampere; H100, H200, H800, H20, GH200 are Hopper;
// B100, B200, B300, GB200, GB300 are Blackwell; anything else gets the Ampere caps.
// Multi-node LL caps depend on the host CPU (NCCL: Intel vs AMD rows): taken as the CPU of
// NVIDIA's reference node of that generation (DGX A100: AMD EPYC; DGX-1/2, DGX H100 and
// DGX B200: Intel Xeon).
//
// Not modelled: NVLS and NVLSTree (NVLink SHARP), CollNet (IB SHARP), PAT, user tuner
// plugins, PCIe-only nodes (all intra-node links take NCCL's NVLink latencies).
#pragma once

#include "sim/core/collective_kinds.h"
#include "sim/hw/cluster_spec.h"

namespace meshsim {

// Where a group of ranks sits on the cluster.
struct GroupShape {
  int ranks = 0;
  int nodes = 0;     // nodes the group touches
  int per_node = 0;  // most ranks of the group on one node
};

// How NCCL runs one collective and what the tuner model says it costs.
struct NcclChoice {
  AllReduceAlgorithm algorithm = AllReduceAlgorithm::kRing;  // kRing, kTree or kHierarchical
  NcclProtocol protocol = NcclProtocol::kSimple;             // never kAuto
  int channels = 1;                                          // used by this collective
  int max_channels = 1;                                      // of the communicator
  double launch_s = 0;    // once per collective: NCCL's base latency of the pair
  double hops_s = 0;      // the latency-bound steps (steps x per-hop latency, plateau)
  double estimate_s = 0;  // the tuner model's time: what NCCL compares
  // How the data moves, for the network models: it takes `stretch` x the longer of what
  // the links allow (with the protocol's wire bytes) and bytes / cap_algbw.
  double cap_algbw = 0;  // bytes/s: NCCL's absolute caps (llMaxBw, per-channel maxima);
                         // infinity where the protocol has none
  double stretch = 1;    // max_channels / channels, over NCCL's tree correction factor
};

// What a user forces, as NCCL_ALGO, NCCL_PROTO and NCCL_MIN_NCHANNELS = NCCL_MAX_NCHANNELS
// would. kAuto and 0 leave the choice to the tuner model.
struct NcclOptions {
  AllReduceAlgorithm algorithm = AllReduceAlgorithm::kAuto;
  NcclProtocol protocol = NcclProtocol::kAuto;
  int channels = 0;  // the communicator's channels; 0: as NCCL sets them (MaxChannels)
};

class NcclTuner {
 public:
  explicit NcclTuner(const ClusterSpec& cluster, int channels = 0);

  // NCCL's choice for `op` (all-reduce, all-gather or reduce-scatter) of `bytes` (nccl-tests'
  // convention, collective.h) over a group of shape `g` (ranks >= 2, bytes > 0).
  // `algorithm`: kAuto picks ring or tree (tree only for all-reduce), as NCCL does; kRing
  // or kTree forces one (tree falls back to ring for other operations); kHierarchical is
  // timed as a Simple/given-protocol ring (the network models time its phases). `protocol`
  // kAuto picks the fastest of LL, LL128 and Simple; anything else forces it.
  NcclChoice Choose(CommOp op, const GroupShape& g, double bytes, AllReduceAlgorithm algorithm,
                    NcclProtocol protocol) const;

  // One candidate (algorithm kRing or kTree, protocol not kAuto), as Choose rates it.
  NcclChoice Evaluate(CommOp op, const GroupShape& g, double bytes, AllReduceAlgorithm algorithm,
                      NcclProtocol protocol) const;

  // Bytes a protocol puts on the wire per byte of data: LL 2 (8-byte lines carry 4 bytes
  // of data and a flag), LL128 128/120 (a 128-byte line carries 120 bytes and a flag),
  // Simple 1 (NCCL src/include/device.h).
  static double WireFactor(NcclProtocol p);

  // The communicator's channels for a group of this shape (the forced count if any).
  int MaxChannels(const GroupShape& g) const;

 private:
  double RingBusBw(const GroupShape& g) const;  // Simple ring, GB/s
  double TreeBusBw(const GroupShape& g) const;  // before the tree refinements, GB/s
  double BusBw(CommOp op, const GroupShape& g, int a, int p, int channels) const;
  double CapBusBw(const GroupShape& g, int a, int p, int channels) const;  // GB/s
  double Latency(CommOp op, const GroupShape& g, int a, int p) const;

  int generation_;  // 0 Volta, 1 Ampere, 2 Hopper, 3 Blackwell (NCCL's compCapIndex)
  bool amd_host_;   // NCCL's AMD row for multi-node LL caps and network overhead
  double nvlink_;   // GB/s one GPU moves over NVLink (after efficiency)
  double nic_;      // GB/s of one NIC (after efficiency)
  int nics_;        // NICs per node
  int channels_;    // forced communicator channels; 0: none
};

}  // namespace meshsim

// NCCL's choice of algorithm, protocol and channels for a collective, and what its tuner
// model says that choice costs.
//
// NCCL times every (algorithm, protocol) pair with a latency-bandwidth model and runs the
// fastest (src/graph/tuning.cc: ncclTopoTuneModel, ncclTopoGetAlgoTime; src/enqueue.cc:
// topoGetAlgoInfo). This file restates that model with NCCL's published constants (NCCL
// 2.30.7, master at 5067397c of June 2026; README "Network" lists them with their sources):
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
//            NCCL's llMaxBw; LL128: 0.92 of it, at most channels x a per-channel cap
//            (across nodes of Grace superchips LL128 is off by default: their NICs are
//            on the CPU, beyond NCCL's LL128 enable rule; Ll128ByDefault).
//            Tree: 0.92 of it, per-channel capped, then /3.8 (LL) or x7/9 (LL128, one
//            node) or x120/128 (LL128, several); then NCCL's per-size correction table.
//   algbw    ring: busbw x n / steps; tree: busbw / 2.
//
// The network models do not take the model's bandwidth as the truth: they move the
// protocol's wire bytes over the links (with contention), bound by NCCL's absolute caps
// (llMaxBw, the per-channel maxima), and stretch the data time by the channels a small
// collective leaves idle and by NCCL's measured tree correction.
//
// Channels: a communicator has `max_channels` (24 on one NVSwitch node; across nodes
// twice the channels of NCCL's topology search, which its per-channel caps count:
// graph/connect.cc duplicates them; at most MAXCHANNELS, 64). Across nodes the search
// (graph/search.cc, ncclTopoCompute) gives each channel one NIC of the group's ranks on a
// node, at a speed step <= the NIC's port (48 GB/s for 400 Gb/s, 24 for 200 Gb/s), and on
// an NVSwitch no more channels than the GPU's NVLink, as NCCL counts it, carries at that
// speed; it steps the speed down while channels x speed grows (SearchChannels). 8-GPU
// nodes with 8 NICs: 8 (H100: 370.8 GB/s of NVLink holds 7 x 48 or 8 x 45; A100: 8 x 24;
// B200: 8 x 48), 16 channels, as NCCL's init logs show on two 8 x H100 nodes. A 72-GPU
// NVLink domain (GB200 NVL72, 72 NICs): 721.8 GB/s holds 15 x 48 or 16 x 45.1, so 16
// search channels on 16 of the NICs, 32 channels (not 64). One rank per node: one per
// NIC, 2 channels. Where GPUs own several NICs (OCI BM.GPU4.8: 16 x 100 Gb/s for 8
// A100s) the search's NICs are all those of the group's GPUs: ncclTopoSelectNets lists
// every NIC local to each GPU (ncclTopoGetLocalNet gives a GPU's channels its NICs in
// turn, src/graph/topo.cc) and ncclTopoSearchRecNet starts channel c on the list's NIC c,
// each NIC carrying a channel at the search's speed: 16 at 12 GB/s on BM.GPU4.8 (240
// GB/s of NVLink, as NCCL counts A100's, holds 20), 32 channels. Not modelled: the search's
// duplication (ncclTopoDupChannels: on Hopper and later only at >= 50 GB/s per channel or <= 4
// channels). A collective uses fewer channels when small: NCCL drops channels while bytes <
// channels x threads x threshold (threshold: LL 8 x ranks for rings, 8 for trees; LL128 8; Simple
// 64).
//
// GPU generation (NCCL indexes its caps by compute capability) comes from
// gpu.architecture where it is ampere, hopper or blackwell, else from gpu.kind: V100
// is Volta; A100, A800, A30, A10 are Ampere; H100, H200, H800, H20, GH200 are Hopper;
// B100, B200, B300, GB200, GB300 are Blackwell; anything else gets the Ampere caps.
// Multi-node LL caps depend on the host CPU (NCCL: Intel vs AMD rows): taken as the CPU of
// NVIDIA's reference node of that generation (DGX A100: AMD EPYC; DGX-1/2, DGX H100 and
// DGX B200: Intel Xeon).
//
// NVLink SHARP (NCCL's NVLS and NVLSTree, tuning.cc and src/transport/nvls.cc): where the
// NVSwitch reduces (NvlsMode; by default Hopper or Blackwell GPUs on an NVSwitch), an
// all-reduce over >= 2 ranks per node may run in the switch: NVLS on one node (or one
// NVLink domain, e.g. 72 GPUs of a GB200 NVL72 rack), NVLSTree across nodes (NVLS in each
// node, a tree between the nodes' head GPUs over their NICs); all-gather and reduce-
// scatter may use NVLS on one node. Simple protocol only; NCCL's model:
//
//   heads    h = min(ranks per node, 32), and across nodes also <= the node's NICs;
//            each is the head of one NVLS channel of the topology search
//   per-channel speed s: the search's largest speed step (sm90 / sm100 speed arrays)
//            with (h + 1) x s <= the GPU's NVLink bandwidth as NCCL counts it (18 links
//            x 20.6 GB/s on H100, x 40.1 on B200: gbps_per_gpu x 20.6/25 or 40.1/50; a
//            head moves its own channel twice; across nodes from the network speeds,
//            which the search's second pass lets exceed the NIC's); s_net: the largest
//            network step <= one NIC (after efficiency.nic)
//   busbw    h x min(s x eff x (h-1)/h x (2 for all-reduce, else (g-1)/g),
//                    s_net x (2 on two nodes), perChMaxNVLSTreeBw (NVLSTree))
//            eff = nvlsEfficiency: 0.85 Hopper, 0.74 Blackwell; algbw = busbw x n/steps
//            for all-reduce, busbw itself for all-gather / reduce-scatter
//   latency  NVLS 25 us; NVLSTree 25 + 2 x floor(log2 k) x 20.9 us; no base latency
//   channels NCCL's nvlsChannels: 16 (Hopper), 24 (Blackwell, one node), 32 (across)
//
// On 8 H100s: s = 40 (370.8 / 9 = 41.2 GB/s, stepped down), busbw 8 x 40 x 0.85 x 7/8 x 2 =
// 476 GB/s, the ~480 NCCL's maintainers quote; on 2 nodes min(59.5, 2 x 45, 57.7) x 8 =
// 461.6 GB/s. The network models move the link bytes (each GPU sends and receives
// (g+1)/g of the buffer through the switch; across nodes each head's NIC a double binary
// tree's share) and the data takes at least bytes / NCCL's NVLS algbw.
//
// NVLSTree's chunks (NCCL's calcCollChunking, enqueue.cc): 128 KiB (64 KiB from 4 nodes),
// 64 KiB below 4 x ops x 128 KiB, 32 KiB below ops x 64 KiB, ops = nvlsChannels x heads
// chunks in flight (16 x 8 = 128 on H100 nodes: 64 KiB below 64 MiB, 32 KiB below 8 MiB).
// A network hop forwards whole chunks, and a head's NIC carries nvlsChannels of them at
// once, so the tree's 2 floor(log2 k) hops fill the pipeline in 2 floor(log2 k) x
// nvlsChannels x chunk / NIC bandwidth (2 H100 nodes, 128 KiB: 2 x 16 x 128 KiB / 47 GB/s
// = 89 us): NcclChoice::fill_s, which NCCL's model lacks.
//
// Not modelled: CollNet (IB SHARP) and NVLS across nodes without NVLSTree (it needs
// CollNet), PAT, user tuner plugins, PCIe-only nodes (all intra-node links take NCCL's
// NVLink latencies).
#pragma once

#include <span>

#include "sim/core/collective_kinds.h"
#include "sim/hw/cluster_spec.h"

namespace meshsim {

// Where a group of ranks sits on the cluster.
struct GroupShape {
  int ranks = 0;
  int nodes = 0;     // nodes the group touches
  int per_node = 0;  // most ranks of the group on one node
};

// The shape of the group of `gpus` (global GPU ids; node = id / gpus_per_node). Called for
// every collective of a replay: small groups (TP, CP, pipeline pairs) count members per
// node in a table on the stack, large ones sort their nodes. O(n log n).
GroupShape GroupShapeOf(int gpus_per_node, std::span<const int> gpus);

// How NCCL runs one collective and what the tuner model says it costs.
struct NcclChoice {
  AllReduceAlgorithm algorithm = AllReduceAlgorithm::kRing;  // never kAuto
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
  int heads = 0;         // NVLS, NVLSTree: the GPUs per node that head an NVLS channel
  // NVLSTree's pipeline fill: before the links are all busy, a chunk crosses each of the
  // tree's 2 floor(log2 k) network hops whole (store and forward) at its share of a NIC.
  // Not in NCCL's model (estimate_s); the network models add it to the latency.
  double fill_s = 0;
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
  // `algorithm`: kAuto picks ring, tree (all-reduce only) or NVLS / NVLSTree (where
  // NvlsFits), as NCCL does; kRing or kTree forces one (tree falls back to ring for other
  // operations); kNvls or kNvlsTree asks for NVLink SHARP, run as whichever of the two fits
  // the placement, else as a ring; kHierarchical is timed as a Simple/given-protocol ring
  // (the network models time its phases). `protocol` kAuto picks the fastest of LL, LL128
  // and Simple; anything else forces it (NVLS runs only Simple).
  NcclChoice Choose(CommOp op, const GroupShape& g, double bytes, AllReduceAlgorithm algorithm,
                    NcclProtocol protocol) const;

  // One candidate (algorithm kRing, kTree, or kNvls / kNvlsTree where NvlsFits, which run
  // Simple whatever `protocol` says; protocol not kAuto), as Choose rates it.
  NcclChoice Evaluate(CommOp op, const GroupShape& g, double bytes, AllReduceAlgorithm algorithm,
                      NcclProtocol protocol) const;

  // Whether NCCL would consider NVLink SHARP for `op` over `g`: the cluster's switch
  // reduces, >= 2 ranks per node, and all-reduce, or all-gather / reduce-scatter on one
  // node of at most 32 ranks.
  bool NvlsFits(CommOp op, const GroupShape& g) const;

  // Bytes a protocol puts on the wire per byte of data: LL 2 (8-byte lines carry 4 bytes
  // of data and a flag), LL128 128/120 (a 128-byte line carries 120 bytes and a flag),
  // Simple 1 (NCCL src/include/device.h).
  static double WireFactor(NcclProtocol p);

  // The communicator's channels for a group of this shape (the forced count if any).
  int MaxChannels(const GroupShape& g) const;

 private:
  // The channels of NCCL's topology search across nodes (g.nodes > 1): one per NIC of
  // the group's ranks on a node, fewer where NVLink bounds them (NcclTuner's header).
  int SearchChannels(const GroupShape& g) const;
  // The NICs of the group's ranks on a node: one per rank up to the node's NICs, or all
  // of their NICs where GPUs own several (OCI BM.GPU4.8: 2 each).
  int GroupNics(const GroupShape& g) const;
  double RingBusBw(const GroupShape& g) const;  // Simple ring, GB/s
  double TreeBusBw(const GroupShape& g) const;  // before the tree refinements, GB/s
  double BusBw(CommOp op, const GroupShape& g, int a, int p, int channels) const;
  double CapBusBw(const GroupShape& g, int a, int p, int channels) const;  // GB/s
  double Latency(CommOp op, const GroupShape& g, int a, int p) const;
  bool Ll128ByDefault(const GroupShape& g) const;  // NCCL's LL128 enable rule
  int NvlsHeads(const GroupShape& g) const;
  double NvlsBusBw(CommOp op, const GroupShape& g) const;  // GB/s
  NcclChoice EvaluateNvls(CommOp op, const GroupShape& g, double bytes) const;

  int generation_;        // 0 Volta, 1 Ampere, 2 Hopper, 3 Blackwell (NCCL's compCapIndex)
  bool amd_host_;         // NCCL's AMD row for multi-node LL caps and network overhead
  bool x86_host_;         // false for Grace (GH200, GB200, GB300): no NVLSTree size
                          // correction, no LL128 across nodes by default (NICs on the CPU)
  bool nvls_;             // the NVSwitch reduces (IntraNodeSpec::nvls, or derived)
  double nvlink_;         // GB/s one GPU moves over NVLink (after efficiency)
  double nvlink_search_;  // GB/s of NVLink as NCCL's topology search counts it (NVLS)
  double nic_;            // GB/s of one NIC (after efficiency)
  double nic_search_;     // GB/s of one NIC as NCCL's topology search counts it (its port)
  int nics_;              // NICs per node
  int gpus_per_node_;     // with nics_: the NICs a group reaches (NicsOfRanks, sim/hw/nics.h)
  bool nvswitch_;         // GPUs on an NVSwitch: NCCL's search counts the GPU's NVLink
  int channels_;          // forced communicator channels; 0: none
};

}  // namespace meshsim

// Collective vocabulary shared by several floors: which collective a rank takes part in
// and which all-reduce algorithm the plan asks for.
//
// The house (STYLE.md; checked by tests/unit/house_test.cc): imports point down
//   core < hw < net;  core < workload;  plan < schedule < engine < report < sweep
//   < config < cli.
// plan/ names an all-reduce algorithm, schedule/ emits collectives, net/ times them: the
// words they share live here, in core, which imports nothing of ours, so that none of
// plan/, schedule/ or workload/ needs net/. Other vocabulary of the same kind lives beside
// it: numeric formats and bytes per element in core/dtype.h, time in core/time.h.
// What a collective costs (CollectiveModel, CollectiveCost) stays in net/collective.h.
#pragma once

#include <cstdint>
#include <string_view>

namespace meshsim {

// One collective (or point-to-point transfer) over a group of ranks. kRingShift: every
// member sends `bytes` to its successor in the group's order (one step of ring
// attention's K/V exchange). kExpertDispatch: the MoE token dispatch of DeepEP / HybridEP
// over an expert-parallel group (net/expert_dispatch.h): `bytes` is one copy of each
// member's tokens, sent once per destination NVLink domain and forwarded there.
// kExpertCombine: their combine, the reverse (the same bytes on the same links), which the
// backends' kernels run at another rate (net/expert_dispatch.h DomainRateFactor). Backward
// runs the gradient of a combine as a dispatch and that of a dispatch as a combine
// (Megatron-Core fused_a2a.py: HybridEPCombine.backward calls dispatch_with_permute).
enum class CommOp : uint8_t {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kSendRecv,
  kRingShift,
  kExpertDispatch,
  kExpertCombine
};
constexpr int kCommOpCount = 8;

// DeepEP's / HybridEP's dispatch or combine (they move the same bytes the same way).
constexpr bool IsExpertExchange(CommOp op) {
  return op == CommOp::kExpertDispatch || op == CommOp::kExpertCombine;
}

// The name reports and traces print ("all_reduce", ...).
constexpr std::string_view CommOpName(CommOp op) {
  switch (op) {
    case CommOp::kAllReduce:
      return "all_reduce";
    case CommOp::kAllGather:
      return "all_gather";
    case CommOp::kReduceScatter:
      return "reduce_scatter";
    case CommOp::kAllToAll:
      return "all_to_all";
    case CommOp::kSendRecv:
      return "sendrecv";
    case CommOp::kRingShift:
      return "ring_shift";
    case CommOp::kExpertDispatch:
      return "expert_dispatch";
    case CommOp::kExpertCombine:
      return "expert_combine";
  }
  return "?";
}

// How all-reduces run (see net/nccl_tuner.h): kAuto lets the NCCL tuner model pick ring,
// tree or NVLink SHARP per size and placement; kHierarchical (reduce-scatter in each node,
// all-reduce across, all-gather in each node) is meshsim's own and never chosen by kAuto.
// kNvls is NCCL's NVLS (the NVSwitch reduces; one node or NVLink domain), kNvlsTree its
// NVLSTree (NVLS in each node, a tree across nodes); forcing either asks for NVLink SHARP
// (NCCL_ALGO=NVLS,NVLSTree), which the tuner maps to the one that fits the placement.
enum class AllReduceAlgorithm { kAuto, kRing, kHierarchical, kTree, kNvls, kNvlsTree };

// NCCL's protocols (see net/nccl_tuner.h): kLL moves 4 data bytes per 8-byte line (a flag
// in the other half), kLL128 120 per 128-byte line, kSimple whole buffers with a
// fence per step. kAuto lets the tuner model pick per size.
enum class NcclProtocol { kAuto, kLL, kLL128, kSimple };

constexpr std::string_view NcclProtocolName(NcclProtocol p) {
  switch (p) {
    case NcclProtocol::kAuto:
      return "auto";
    case NcclProtocol::kLL:
      return "LL";
    case NcclProtocol::kLL128:
      return "LL128";
    case NcclProtocol::kSimple:
      return "Simple";
  }
  return "?";
}

}  // namespace meshsim

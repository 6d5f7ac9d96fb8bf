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
// attention's K/V exchange).
enum class CommOp : uint8_t {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kSendRecv,
  kRingShift
};
constexpr int kCommOpCount = 6;

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
  }
  return "?";
}

// How all-reduces run on the flow-level network (see net/flow_collectives.h); kAuto picks
// per size and placement. The alpha-beta model ignores it.
enum class AllReduceAlgorithm { kAuto, kRing, kHierarchical, kTree };

}  // namespace meshsim

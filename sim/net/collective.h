// Collective operations and the model that times them.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "sim/core/time.h"

namespace meshsim {

// kRingShift: every member sends `bytes` to its successor in the group's order (one
// step of ring attention's K/V exchange).
enum class CommOp : uint8_t {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kSendRecv,
  kRingShift
};

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

// What one collective costs: its duration and the bytes it puts on each link class.
struct CollectiveCost {
  SimTime duration;
  double intra_node_bytes = 0;  // bytes sent over GPU-to-GPU links inside nodes, all ranks
  double inter_node_bytes = 0;  // bytes sent through NICs, all ranks
};

// Times a collective over a group of GPUs.
//
// `bytes` follows nccl-tests' convention: the size of the full buffer of one rank
// (all-reduce: the reduced tensor; all-gather: the gathered output; reduce-scatter: the
// input; all-to-all: the send buffer; sendrecv: the message). `gpus` lists the GPU
// indices of the group in ring order; for sendrecv, {source, destination}.
class CollectiveModel {
 public:
  virtual ~CollectiveModel() = default;
  virtual CollectiveCost Cost(CommOp op, std::span<const int> gpus, double bytes) const = 0;
};

}  // namespace meshsim

// The model that times a collective (the collective kinds are core vocabulary:
// sim/core/collective_kinds.h).
#pragma once

#include <span>

#include "sim/core/collective_kinds.h"
#include "sim/core/time.h"

namespace meshsim {

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

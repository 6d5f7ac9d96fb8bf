// How a Program keeps its collectives: what collectives of one kind, group and size share
// (CommSignature), each collective's record (CommRecord) and both together (Comm).
#pragma once

#include <cstdint>

#include "sim/core/collective_kinds.h"
#include "sim/schedule/op.h"

namespace meshsim {

// What collectives of one kind over one group with the same bytes share: the program
// keeps it once (Program::signatures()), however many times a step runs that collective
// (every layer's TP collectives, every micro-batch's pipeline transfers). A network can
// remember its cost by the signature's index (Network::StartKnown).
struct CommSignature {
  CommOp op = CommOp::kAllReduce;
  int32_t group = 0;  // index into Program::groups()
  double bytes = 0;   // nccl-tests convention, see CollectiveModel
  uint32_t work = 0;  // its parts' OpWork: `bytes` (index into Program::works())
};
static_assert(sizeof(CommSignature) == 24);

// One collective as the program keeps it: 16 bytes (a full replay of GPT-1T at 3,072 GPUs
// has a million of them; with the signature's fields inline they took 32).
struct CommRecord {
  uint32_t signature = 0;  // index into Program::signatures()
  int32_t parts = 0;       // participants' ops added so far (AddCommPart)
  // After Finalize(): where its parts begin in the Program's list of parts (PartsBegin());
  // kNoOp before (parts are found by their records' `ref`: ids may move, InterleaveAdded).
  uint32_t first_part = kNoOp;
  // After Finalize(): how many parts have not arrived in the replay under way. A replay
  // counts it down from `parts` (one cache line per arrival for the count and, at the
  // last, the collective); Program::RecordsForReplay() counts it up again.
  mutable uint32_t waiting = 0;
};
static_assert(sizeof(CommRecord) == 16);

// One collective (or transfer) shared by the ops of its participants, as Program::comms()
// gives it (by value): its CommRecord with its CommSignature's fields.
struct Comm {
  CommOp op = CommOp::kAllReduce;
  int32_t group = 0;  // index into Program::groups()
  double bytes = 0;   // nccl-tests convention, see CollectiveModel
  int32_t parts = 0;  // participants' ops added so far (AddCommPart)
  uint32_t work = 0;  // its parts' OpWork: `bytes` (index into Program::works())
  // After Finalize(): where its parts begin in the Program's list of parts (PartsBegin()).
  uint32_t first_part = kNoOp;
  uint32_t signature = 0;  // index into Program::signatures()
};

}  // namespace meshsim

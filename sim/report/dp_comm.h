// Where a rank's data-parallel collectives spend their time: latency or bandwidth.
#pragma once

#include "sim/engine/simulation.h"
#include "sim/report/step_summary.h"

namespace meshsim {

// The DP/ZeRO collectives of `rank` (its ops on the kDp and kDpGather streams, as
// replayed by its representative rank): their count, bytes and replayed time, and the
// part of that time that is latency by NCCL's tuner model (launch cost and latency-bound
// steps of the algorithm and protocol it picks for each, NcclChoice::launch_s + hops_s,
// at most the replayed duration). The rest is bandwidth time. Precondition: a completed
// replay.
DpCommSummary SummarizeDpComm(const Simulation& sim, int rank);

}  // namespace meshsim

#include "sim/report/dp_comm.h"

#include <algorithm>

#include "sim/net/nccl_tuner.h"

namespace meshsim {

DpCommSummary SummarizeDpComm(const Simulation& sim, int rank) {
  const Experiment& e = sim.experiment;
  const Program& prog = sim.program;
  const NcclTuner tuner(e.cluster);
  const int replayed = sim.representative.empty() ? rank : sim.representative[rank];
  DpCommSummary d;
  for (Stream s : {Stream::kDp, Stream::kDpGather}) {
    for (OpId id : prog.StreamOps(replayed, s)) {
      const Op& op = prog.op(id);
      if (op.kind != OpKind::kComm) continue;
      const Comm& comm = prog.comms()[op.comm];
      const double busy = (sim.replay.end[id] - sim.replay.start[id]).seconds();
      double latency = 0;
      const std::vector<int>& group = prog.groups()[comm.group];
      if (group.size() >= 2 && comm.bytes > 0) {
        const NcclChoice c =
            tuner.Choose(comm.op, GroupShapeOf(e.cluster.gpus_per_node, group), comm.bytes,
                         e.plan.allreduce_algorithm, NcclProtocol::kAuto);
        latency = std::min(busy, c.launch_s + c.hops_s);
      }
      ++d.collectives;
      d.bytes += comm.bytes;
      d.busy_s += busy;
      d.latency_s += latency;
    }
  }
  d.bandwidth_s = d.busy_s - d.latency_s;
  return d;
}

}  // namespace meshsim

#include "sim/engine/collective_bench.h"

#include <algorithm>
#include <numeric>

#include "sim/core/simulator.h"
#include "sim/hw/nics.h"
#include "sim/hw/topology.h"
#include "sim/net/flow_collectives.h"

namespace meshsim {

double BusBandwidthFactor(CommOp op, int n) {
  const double f = static_cast<double>(n - 1) / n;
  switch (op) {
    case CommOp::kAllReduce:
      return 2 * f;
    case CommOp::kAllGather:
    case CommOp::kReduceScatter:
    case CommOp::kAllToAll:
      return f;
    case CommOp::kSendRecv:
    case CommOp::kRingShift:
    case CommOp::kExpertDispatch:  // not benchmarked (no nccl-tests counterpart)
    case CommOp::kExpertCombine:
      return 1;
  }
  return 1;
}

Result<std::vector<CollectiveBenchRow>> BenchCollective(ClusterSpec cluster, CommOp op, int gpus,
                                                        double min_bytes, double max_bytes,
                                                        const NcclOptions& nccl) {
  cluster.nodes = (gpus + cluster.gpus_per_node - 1) / cluster.gpus_per_node;
  // Whole NVLink domains beyond the first (ClusterSpec::NetworkView's precondition).
  const int domain = cluster.nvlink_domain_nodes;
  if (cluster.nodes > domain) cluster.nodes = (cluster.nodes + domain - 1) / domain * domain;
  cluster = cluster.NetworkView();
  Result<std::shared_ptr<const Topology>> topology = Topology::Build(cluster);
  if (!topology.ok()) return topology.error();
  std::vector<int> group(gpus);
  std::iota(group.begin(), group.end(), 0);
  if (op == CommOp::kSendRecv) group = {0, gpus - 1};
  const int nodes_used = cluster.nodes;
  const int nics = nodes_used > 1
                       ? NicsOfRanks(cluster.inter_node, std::min(gpus, cluster.gpus_per_node),
                                     cluster.gpus_per_node)
                       : 0;
  std::vector<CollectiveBenchRow> rows;
  for (double bytes = min_bytes; bytes <= max_bytes * (1 + 1e-9); bytes *= 2) {
    FlowCollectiveNetwork network(cluster, topology.value(), nccl);
    Simulator sim;
    SimTime end;
    network.Start(sim, op, group, bytes, [&] { end = sim.Now(); }, {});
    sim.Run();
    CollectiveBenchRow row;
    row.bytes = bytes;
    row.time_s = end.seconds();
    row.algbw_gbps = bytes / row.time_s / 1e9;
    row.busbw_gbps = row.algbw_gbps * BusBandwidthFactor(op, static_cast<int>(group.size()));
    row.nic_gbps = nics > 0 ? network.InterNodeBytes() / (nodes_used * nics) / row.time_s / 1e9 : 0;
    const bool nccl_op =
        op == CommOp::kAllReduce || op == CommOp::kAllGather || op == CommOp::kReduceScatter;
    if (nccl_op && !cluster.Torus()) {  // TPU slices run XLA's collectives, not NCCL's
      const NcclChoice choice = network.ChoiceFor(op, group, bytes);
      row.algorithm = choice.algorithm;
      row.protocol = choice.protocol;
      row.channels = choice.channels;
      row.model_s = choice.estimate_s;
    }
    rows.push_back(row);
  }
  return rows;
}

}  // namespace meshsim

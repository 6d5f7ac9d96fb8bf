#include "sim/engine/kernel_interference.h"

#include <map>
#include <tuple>

namespace meshsim {
namespace {

bool NcclCollective(CommOp op) {
  return op == CommOp::kAllReduce || op == CommOp::kAllGather || op == CommOp::kReduceScatter;
}

}  // namespace

std::vector<float> CommSlowdowns(const ClusterSpec& cluster, const NcclOptions& nccl,
                                 const Program& program) {
  const CommInterference& ci = cluster.efficiency.comm_interference;
  bool any = false;
  for (CommOp op : {CommOp::kAllReduce, CommOp::kAllGather, CommOp::kReduceScatter}) {
    any = any || ci.Of(op) == CommInterference::kFromKernel;
  }
  if (!any) return {};
  const NcclTuner tuner(cluster, nccl.channels);
  std::vector<GroupShape> shapes(program.groups().size());  // ranks 0: not yet worked out
  using Key = std::tuple<int, int, int, int, double>;       // kind, shape, bytes
  std::map<Key, float> memo;
  std::vector<float> out(program.signatures().size(), -1.0f);
  for (size_t i = 0; i < out.size(); ++i) {
    const CommSignature& c = program.signatures()[i];
    if (!NcclCollective(c.op) || ci.Of(c.op) != CommInterference::kFromKernel) continue;
    if (cluster.Torus()) {
      out[i] = static_cast<float>(CommInterference::kStudyMean);
      continue;
    }
    GroupShape& g = shapes[c.group];
    if (g.ranks == 0) g = GroupShapeOf(cluster.gpus_per_node, program.groups()[c.group]);
    if (g.ranks < 2 || !(c.bytes > 0)) {
      out[i] = 0;
      continue;
    }
    const Key key{static_cast<int>(c.op), g.ranks, g.nodes, g.per_node, c.bytes};
    auto [it, fresh] = memo.try_emplace(key, 0.0f);
    if (fresh) {
      const NcclChoice choice = tuner.Choose(c.op, g, c.bytes, nccl.algorithm, nccl.protocol);
      it->second =
          static_cast<float>(CommInterference::OfHeldSms(choice.channels, cluster.gpu.sms));
    }
    out[i] = it->second;
  }
  return out;
}

}  // namespace meshsim

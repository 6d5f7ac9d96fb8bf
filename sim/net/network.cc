#include "sim/net/network.h"

#include <algorithm>

namespace meshsim {

void CostModelNetwork::Start(Simulator& sim, CommOp op, std::span<const int> gpus, double bytes,
                             std::function<void()> done,
                             std::span<const std::vector<int>> mirrors) {
  const CollectiveCost& cost = Cost(op, gpus, bytes);
  const double copies = 1.0 + static_cast<double>(mirrors.size());
  intra_bytes_ += cost.intra_node_bytes * copies;
  inter_bytes_ += cost.inter_node_bytes * copies;
  sim.Schedule(cost.duration, std::move(done));
}

const CollectiveCost& CostModelNetwork::Cost(CommOp op, std::span<const int> gpus, double bytes) {
  if (const CollectiveCost* cost = costs_.Find(op, gpus, bytes)) return *cost;
  return costs_.Store(op, gpus, bytes, model_->Cost(op, gpus, bytes));
}

std::vector<LinkUsage> CostModelNetwork::Usage(double step_s) const {
  auto usage = [step_s](const char* name, double bytes, double capacity) {
    LinkUsage u;
    u.name = name;
    u.bytes = bytes;
    u.capacity = capacity;
    u.busy_s = capacity > 0 ? std::min(step_s, bytes / capacity) : 0;
    return u;
  };
  std::vector<LinkUsage> out{usage("nvlink (intra-node, all GPUs)", intra_bytes_, intra_capacity_)};
  if (inter_capacity_ > 0)
    out.push_back(usage("nics (inter-node, all nodes)", inter_bytes_, inter_capacity_));
  return out;
}

}  // namespace meshsim

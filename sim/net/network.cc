#include "sim/net/network.h"

#include <algorithm>

namespace meshsim {

void CostModelNetwork::Start(Simulator& sim, CommOp op, std::span<const int> gpus, double bytes,
                             std::function<void()> done,
                             std::span<const std::vector<int>> mirrors) {
  Run(sim, Cost(op, gpus, bytes), std::move(done), mirrors.size());
}

void CostModelNetwork::StartKnown(Simulator& sim, uint32_t key, CommOp op,
                                  std::span<const int> gpus, double bytes,
                                  std::function<void()> done,
                                  std::span<const std::vector<int>> mirrors) {
  constexpr SimTime kUnknown = SimTime::Picoseconds(-1);
  if (key >= known_.size()) known_.resize(std::max<size_t>(key + 1, 2 * known_.size()), {kUnknown});
  CollectiveCost& cost = known_[key];
  if (cost.duration == kUnknown) cost = Cost(op, gpus, bytes);
  Run(sim, cost, std::move(done), mirrors.size());
}

void CostModelNetwork::Run(Simulator& sim, const CollectiveCost& cost, std::function<void()> done,
                           size_t mirrors) {
  const double copies = 1.0 + static_cast<double>(mirrors);
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

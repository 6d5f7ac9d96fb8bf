#include "sim/net/network.h"

#include <algorithm>
#include <bit>

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
  const uint64_t h = (reinterpret_cast<uintptr_t>(gpus.data()) >> 3) ^
                     (std::bit_cast<uint64_t>(bytes) * 0x9E3779B97F4A7C15ull) ^
                     static_cast<uint64_t>(op);
  CachedCost& c = costs_[(h ^ (h >> 29)) % kCostCacheSize];
  if (c.data != gpus.data() || c.op != op || c.bytes != bytes ||
      !std::equal(gpus.begin(), gpus.end(), c.gpus.begin(), c.gpus.end())) {
    c.data = gpus.data();
    c.op = op;
    c.bytes = bytes;
    c.gpus.assign(gpus.begin(), gpus.end());
    c.cost = model_->Cost(op, gpus, bytes);
  }
  return c.cost;
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

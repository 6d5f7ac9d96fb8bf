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
  uint64_t h = 14695981039346656037ull;  // FNV-1a over op, bytes and the group
  auto mix = [&h](uint64_t v) { h = (h ^ v) * 1099511628211ull; };
  mix(static_cast<uint64_t>(op));
  mix(std::bit_cast<uint64_t>(bytes));
  for (int g : gpus) mix(static_cast<uint32_t>(g));
  std::vector<CachedCost>& bucket = costs_[h];
  for (const CachedCost& c : bucket) {
    if (c.op == op && c.bytes == bytes && std::equal(gpus.begin(), gpus.end(), c.gpus.begin(), c.gpus.end())) {
      return c.cost;
    }
  }
  bucket.push_back({op, bytes, std::vector<int>(gpus.begin(), gpus.end()), model_->Cost(op, gpus, bytes)});
  return bucket.back().cost;
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
  if (inter_capacity_ > 0) out.push_back(usage("nics (inter-node, all nodes)", inter_bytes_, inter_capacity_));
  return out;
}

}  // namespace meshsim

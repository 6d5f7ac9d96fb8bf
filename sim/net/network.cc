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

size_t CostModelNetwork::CostHash(const int* data, CommOp op, double bytes) {
  const uint64_t h = (reinterpret_cast<uintptr_t>(data) >> 3) ^
                     (std::bit_cast<uint64_t>(bytes) * 0x9E3779B97F4A7C15ull) ^
                     static_cast<uint64_t>(op);
  return static_cast<size_t>(h ^ (h >> 29));
}

const CollectiveCost& CostModelNetwork::Cost(CommOp op, std::span<const int> gpus, double bytes) {
  if (2 * (cost_count_ + 1) > costs_.size()) GrowCosts();
  const size_t mask = costs_.size() - 1;
  for (size_t i = CostHash(gpus.data(), op, bytes) & mask;; i = (i + 1) & mask) {
    CachedCost& c = costs_[i];
    if (c.data == nullptr) {
      ++cost_count_;
    } else if (c.data != gpus.data() || c.op != op || c.bytes != bytes) {
      continue;
    } else if (std::equal(gpus.begin(), gpus.end(), c.gpus.begin(), c.gpus.end())) {
      return c.cost;
    }
    // A new collective, or one whose group's storage now holds other members.
    c.data = gpus.data();
    c.op = op;
    c.bytes = bytes;
    c.gpus.assign(gpus.begin(), gpus.end());
    c.cost = model_->Cost(op, gpus, bytes);
    return c.cost;
  }
}

void CostModelNetwork::GrowCosts() {
  std::vector<CachedCost> old(2 * costs_.size());
  old.swap(costs_);
  const size_t mask = costs_.size() - 1;
  for (CachedCost& c : old) {
    if (c.data == nullptr) continue;
    size_t i = CostHash(c.data, c.op, c.bytes) & mask;
    while (costs_[i].data != nullptr) i = (i + 1) & mask;
    costs_[i] = std::move(c);
  }
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

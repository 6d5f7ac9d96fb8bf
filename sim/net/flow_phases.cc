#include "sim/net/flow_phases.h"

#include <algorithm>
#include <map>

#include "sim/hw/nics.h"
#include "sim/net/torus_collectives.h"

namespace meshsim {
namespace {

// The group's GPUs by node, in order of first appearance.
std::vector<std::vector<int>> ByNode(const ClusterSpec& c, std::span<const int> gpus) {
  std::vector<std::vector<int>> nodes;
  std::vector<int> seen;  // node of each entry of `nodes`, searched while there are few
  std::map<int, size_t> index;
  constexpr size_t kFew = 16;
  for (int g : gpus) {
    const int node = g / c.gpus_per_node;
    size_t at = std::find(seen.begin(), seen.end(), node) - seen.begin();
    if (seen.size() == kFew && at == kFew) {
      if (index.empty()) {
        for (size_t i = 0; i < kFew; ++i) index.emplace(seen[i], i);
      }
      at = index.try_emplace(node, nodes.size()).first->second;
    }
    if (at == nodes.size()) {
      nodes.emplace_back();
      if (seen.size() < kFew) seen.push_back(node);
    }
    nodes[at].push_back(g);
  }
  return nodes;
}

// Whether the GPUs span more than one node.
bool CrossesNodes(const ClusterSpec& c, std::span<const int> gpus) {
  return std::any_of(gpus.begin(), gpus.end(),
                     [&](int g) { return g / c.gpus_per_node != gpus.front() / c.gpus_per_node; });
}

double Latency(const ClusterSpec& c, bool crosses) {
  return (crosses ? c.inter_node.latency_us : c.intra_node.latency_us) * 1e-6;
}

// Ring edges of `order` (cyclic), each carrying `bytes`; an edge into GPU `order[i]` that
// crosses nodes leaves its node through the NIC of the GPU with the entry GPU's local
// rank (`relay(dst)`), or directly when relay is null.
template <typename Relay>
void AddRing(const std::vector<int>& order, double bytes, Relay relay, std::vector<Transfer>* out) {
  const size_t n = order.size();
  if (n < 2 || bytes <= 0) return;
  for (size_t i = 0; i < n; ++i) {
    const int src = order[i], dst = order[(i + 1) % n];
    out->push_back({src, dst, bytes, relay(src, dst)});
  }
}
int NoRelay(int, int) { return -1; }

// For a transfer between nodes: the GPU of the source's node with the destination's local
// index, which relays it onto the destination's rail (NCCL's PXN); -1 when none is needed.
int RailRelay(const ClusterSpec& c, int src, int dst) {
  const int per_node = c.gpus_per_node;
  if (src / per_node == dst / per_node) return -1;
  const int via = (src / per_node) * per_node + dst % per_node;
  return via == src ? -1 : via;
}

// On a node with k > 1 NICs per GPU: the transfers that cross nodes go on NIC `which`
// (0..k-1) of the GPU they enter, on both nodes (the same local rank's NICs: one rail).
void SetRail(const ClusterSpec& c, int which, std::span<Transfer> transfers) {
  const int g = c.gpus_per_node, k = NicsPerGpu(c.inter_node, g);
  for (Transfer& t : transfers) {
    if (t.src / g != t.dst / g) t.nic = t.dst % g * k + which;
  }
}

// How the transfers of a phase are sent: the protocol's wire bytes per data byte, at most
// this many rings across nodes (the channels in use), the phase's latency.
struct Wire {
  double factor = 1;
  int max_rings = 1 << 30;
  double latency_s = 0;
};

Phase RingPhase(const ClusterSpec& c, CommOp op, std::span<const int> gpus, double bytes,
                const Wire& w) {
  const int n = static_cast<int>(gpus.size());
  const double f = static_cast<double>(n - 1) / n;
  const double share = (op == CommOp::kAllReduce ? 2 * f : f) * bytes * w.factor;
  const auto nodes = ByNode(c, gpus);
  Phase p;
  p.latency_s = w.latency_s;
  if (nodes.size() == 1) {
    AddRing(std::vector<int>(gpus.begin(), gpus.end()), share, NoRelay, &p.transfers);
    return p;
  }
  size_t smallest = gpus.size();
  for (const auto& local : nodes) smallest = std::min(smallest, local.size());
  const int nics = NicsOfRanks(c.inter_node, static_cast<int>(smallest), c.gpus_per_node);
  const int channels = std::max(1, std::min(nics, w.max_rings));
  // Channel ch enters every node at the GPU of local rank s = ch*g/channels and leaves
  // it from the GPU before, which relays over NVLink to GPU s and its NIC (NCCL's PXN):
  // the channel uses rail s in and out of every node, and each NIC carries one channel.
  // With k NICs per GPU, channel ch takes the group's NIC j = ch*nics/channels: it enters
  // at the GPU j / k of each node's list and crosses on that GPU's NIC j % k.
  const int k = NicsPerGpu(c.inter_node, c.gpus_per_node);
  for (int ch = 0; ch < channels; ++ch) {
    const size_t first = p.transfers.size();
    const int j = ch * nics / channels;
    std::vector<int> order;
    for (const auto& local : nodes) {
      const size_t g = local.size();
      const size_t start = k > 1 ? j / k : ch * g / channels;
      for (size_t i = 0; i < g; ++i) order.push_back(local[(start + i) % g]);
    }
    AddRing(
        order, share / channels, [&c](int src, int dst) { return RailRelay(c, src, dst); },
        &p.transfers);
    if (k > 1) SetRail(c, j % k, std::span(p.transfers).subspan(first));
  }
  return p;
}

// Double binary tree over `members` (one GPU per node): each tree carries half of
// `bytes` up (reduce) and down (broadcast), pipelined, so both directions run at once.
void AddDoubleBinaryTree(const std::vector<int>& members, double bytes,
                         std::vector<Transfer>* out) {
  const int k = static_cast<int>(members.size());
  for (int tree = 0; tree < 2; ++tree) {
    auto at = [&](int i) { return members[tree == 0 ? i : k - 1 - i]; };
    for (int i = 1; i < k; ++i) {
      const int child = at(i), parent = at((i - 1) / 2);
      out->push_back({child, parent, bytes / 2});
      out->push_back({parent, child, bytes / 2});
    }
  }
}

// NCCL's tree all-reduce (flow_phases.h). Precondition: equal GPUs per node.
Phase NcclTreePhase(const ClusterSpec& c, const std::vector<std::vector<int>>& nodes, double bytes,
                    const Wire& w) {
  const int g = static_cast<int>(nodes.front().size());
  const int nics = NicsOfRanks(c.inter_node, g, c.gpus_per_node);
  const int channels = std::max(1, std::min(nics, w.max_rings));
  const int k = NicsPerGpu(c.inter_node, c.gpus_per_node);
  const double slice = bytes * w.factor / channels;
  Phase p;
  p.latency_s = w.latency_s;
  for (int ch = 0; ch < channels; ++ch) {
    // The chain's head: its NIC serves the channel (with k NICs per GPU, the group's NIC
    // j = ch*nics/channels: GPU j / k of the node's list, its NIC j % k, as for rings).
    const int j = ch * nics / channels;
    const int start = k > 1 ? j / k : ch * g / channels;
    std::vector<int> heads;
    for (const auto& local : nodes) {
      heads.push_back(local[start]);
      for (int i = 0; i + 1 < g; ++i) {
        const int below = local[(start + i + 1) % g], above = local[(start + i) % g];
        p.transfers.push_back({below, above, slice});  // reduce up the chain
        p.transfers.push_back({above, below, slice});  // broadcast down
      }
    }
    const size_t first = p.transfers.size();
    AddDoubleBinaryTree(heads, slice, &p.transfers);
    if (k > 1) SetRail(c, j % k, std::span(p.transfers).subspan(first));
  }
  return p;
}

// NVLink SHARP (nccl_tuner.h): through the switch each GPU sends and receives 1 + 1/heads
// of the buffer for an all-reduce (its part of every head's load-reduce and multicast
// store, and a head's own shard once more; every GPU heads a channel up to 32), (g-1)/g
// for all-gather and reduce-scatter, shown as a ring of that many bytes in each node; across nodes
// (NVLSTree) the heads of channel ch, one per node on the same rail, run a double binary tree of
// 1/heads of the buffer. Precondition: equal GPUs per node.
Phase NvlsPhase(CommOp op, const std::vector<std::vector<int>>& nodes, double bytes, int heads,
                double latency_s) {
  const int g = static_cast<int>(nodes.front().size());
  heads = heads > 0 ? heads : g;
  const double through_switch =
      op == CommOp::kAllReduce ? bytes * (1 + 1.0 / heads) : bytes * (g - 1) / g;
  Phase p;
  p.latency_s = latency_s;
  for (const auto& local : nodes) AddRing(local, through_switch, NoRelay, &p.transfers);
  if (nodes.size() == 1) return p;
  for (int ch = 0; ch < heads; ++ch) {
    std::vector<int> members;
    for (const auto& local : nodes) members.push_back(local[ch * g / heads]);
    AddDoubleBinaryTree(members, bytes / heads, &p.transfers);
  }
  return p;
}

// Reduce-scatter in each node, a ring all-reduce of each local rank's shard across nodes,
// all-gather in each node, each with the tuner's ring latency for its ranks and the
// choice's protocol. Precondition: equal GPUs per node.
std::vector<Phase> Hierarchical(const ClusterSpec& c, const NcclTuner& tuner,
                                const NcclChoice& choice, std::span<const int> gpus, double bytes) {
  const auto nodes = ByNode(c, gpus);
  const int g = static_cast<int>(nodes.front().size());
  const int k = static_cast<int>(nodes.size());
  const double factor = NcclTuner::WireFactor(choice.protocol);
  auto hops = [&](CommOp op, GroupShape shape, double b) {
    return tuner.Evaluate(op, shape, b, AllReduceAlgorithm::kRing, choice.protocol).hops_s;
  };
  std::vector<Phase> phases;
  Phase rs;
  if (g > 1) {
    const Wire local{factor, 1 << 30, hops(CommOp::kReduceScatter, {g, 1, g}, bytes)};
    for (const auto& members : nodes) {
      const Phase r = RingPhase(c, CommOp::kReduceScatter, members, bytes, local);
      rs.transfers.insert(rs.transfers.end(), r.transfers.begin(), r.transfers.end());
      rs.latency_s = r.latency_s;
    }
    phases.push_back(rs);
  }
  Phase across;
  const Wire wide{factor, 1 << 30, hops(CommOp::kAllReduce, {k, k, 1}, bytes / g)};
  for (int j = 0; j < g; ++j) {
    std::vector<int> members;
    for (const auto& local : nodes) members.push_back(local[j]);
    const Phase p = RingPhase(c, CommOp::kAllReduce, members, bytes / g, wide);
    across.transfers.insert(across.transfers.end(), p.transfers.begin(), p.transfers.end());
    across.latency_s = p.latency_s;
  }
  phases.push_back(std::move(across));
  if (g > 1) phases.push_back(std::move(rs));  // all-gather: the same bytes, the same rings
  return phases;
}

bool EqualPerNode(const std::vector<std::vector<int>>& nodes) {
  for (const auto& local : nodes) {
    if (local.size() != nodes.front().size()) return false;
  }
  return true;
}

// The point-to-point operations: the cluster's link latency, no protocol.
std::vector<Phase> PointToPointPhases(const ClusterSpec& c, CommOp op, std::span<const int> gpus,
                                      double bytes) {
  const int n = static_cast<int>(gpus.size());
  Phase p;
  p.latency_s = Latency(c, CrossesNodes(c, gpus));
  if (op == CommOp::kSendRecv) {
    // Across nodes NCCL's PXN relays over NVLink to the GPU on the receiver's rail.
    p.transfers.push_back({gpus[0], gpus[1], bytes, RailRelay(c, gpus[0], gpus[1])});
  } else if (op == CommOp::kAllToAll) {
    for (int a : gpus) {
      for (int b : gpus) {
        if (a != b) p.transfers.push_back({a, b, bytes / n, RailRelay(c, a, b)});
      }
    }
  } else {
    AddRing(std::vector<int>(gpus.begin(), gpus.end()), bytes, NoRelay, &p.transfers);
  }
  return {p};
}

}  // namespace

std::vector<std::vector<int>> GpusByNode(const ClusterSpec& c, std::span<const int> gpus) {
  return ByNode(c, gpus);
}

std::vector<Phase> CollectivePhases(const ClusterSpec& c, const NcclTuner& tuner,
                                    const NcclChoice& choice, CommOp op, std::span<const int> gpus,
                                    double bytes) {
  const int n = static_cast<int>(gpus.size());
  if (n < 2 || bytes <= 0) return {};
  if (c.Torus()) return TorusCollectivePhases(c, op, gpus, bytes);  // XLA on TPUs: no NCCL
  if (op == CommOp::kSendRecv || op == CommOp::kAllToAll || op == CommOp::kRingShift) {
    return PointToPointPhases(c, op, gpus, bytes);
  }
  const auto nodes = ByNode(c, gpus);
  // Across nodes a ring or tree uses one NIC per channel of NCCL's search (half the
  // communicator's channels: connect.cc duplicates each on the same NICs).
  const int nic_channels = std::min(choice.channels, std::max(1, choice.max_channels / 2));
  const Wire wire{NcclTuner::WireFactor(choice.protocol), nic_channels, choice.hops_s};
  Phase phase;
  if (op == CommOp::kAllReduce && choice.algorithm == AllReduceAlgorithm::kHierarchical &&
      nodes.size() > 1 && EqualPerNode(nodes)) {
    return Hierarchical(c, tuner, choice, gpus, bytes);
  }
  const bool nvls = choice.algorithm == AllReduceAlgorithm::kNvls ||
                    choice.algorithm == AllReduceAlgorithm::kNvlsTree;
  if (op == CommOp::kAllReduce && choice.algorithm == AllReduceAlgorithm::kTree &&
      EqualPerNode(nodes)) {
    phase = NcclTreePhase(c, nodes, bytes, wire);
  } else if (nvls && EqualPerNode(nodes)) {
    phase = NvlsPhase(op, nodes, bytes, choice.heads, choice.hops_s + choice.fill_s);
  } else {
    phase = RingPhase(c, op, gpus, bytes, wire);
  }
  phase.stretch = choice.stretch;
  phase.min_s = choice.stretch * bytes / choice.cap_algbw;
  return {phase};
}

}  // namespace meshsim

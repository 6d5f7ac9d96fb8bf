#include "sim/net/flow_collectives.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <map>

namespace meshsim {
namespace {

// The group's GPUs by node, in order of first appearance.
std::vector<std::vector<int>> ByNode(const ClusterSpec& c, std::span<const int> gpus) {
  std::vector<std::vector<int>> nodes;
  std::map<int, size_t> index;
  for (int g : gpus) {
    const int node = g / c.gpus_per_node;
    auto [it, inserted] = index.try_emplace(node, nodes.size());
    if (inserted) nodes.emplace_back();
    nodes[it->second].push_back(g);
  }
  return nodes;
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

Phase RingPhase(const ClusterSpec& c, CommOp op, std::span<const int> gpus, double bytes) {
  const int n = static_cast<int>(gpus.size());
  const double f = static_cast<double>(n - 1) / n;
  const double factor = op == CommOp::kAllReduce ? 2 * f : f;
  const int steps = op == CommOp::kAllReduce ? 2 * (n - 1) : n - 1;
  const auto nodes = ByNode(c, gpus);
  Phase p;
  p.latency_s = steps * Latency(c, nodes.size() > 1);
  if (nodes.size() == 1) {
    AddRing(std::vector<int>(gpus.begin(), gpus.end()), factor * bytes, NoRelay, &p.transfers);
    return p;
  }
  size_t smallest = gpus.size();
  for (const auto& local : nodes) smallest = std::min(smallest, local.size());
  const int channels =
      std::max(1, std::min(c.inter_node.nics_per_node, static_cast<int>(smallest)));
  // Channel ch enters every node at the GPU of local rank s = ch*g/channels and leaves
  // it from the GPU before, which relays over NVLink to GPU s and its NIC (NCCL's PXN):
  // the channel uses rail s in and out of every node, and each NIC carries one channel.
  for (int ch = 0; ch < channels; ++ch) {
    std::vector<int> order;
    for (const auto& local : nodes) {
      const size_t g = local.size();
      const size_t start = ch * g / channels;
      for (size_t i = 0; i < g; ++i) order.push_back(local[(start + i) % g]);
    }
    AddRing(
        order, factor * bytes / channels, [&c](int src, int dst) { return RailRelay(c, src, dst); },
        &p.transfers);
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

int Log2Ceil(int k) { return static_cast<int>(std::ceil(std::log2(std::max(2, k)))); }

// NCCL's tree all-reduce (flow_collectives.h). Precondition: equal GPUs per node.
Phase NcclTreePhase(const ClusterSpec& c, const std::vector<std::vector<int>>& nodes,
                    double bytes) {
  const int g = static_cast<int>(nodes.front().size());
  const int k = static_cast<int>(nodes.size());
  const int channels = std::max(1, std::min(c.inter_node.nics_per_node, g));
  const double slice = bytes / channels;
  Phase p;
  p.latency_s = 2 * ((g - 1) * Latency(c, false) + Log2Ceil(k) * Latency(c, true));
  for (int ch = 0; ch < channels; ++ch) {
    const int start = ch * g / channels;  // the chain's head: its NIC serves the channel
    std::vector<int> heads;
    for (const auto& local : nodes) {
      heads.push_back(local[start]);
      for (int i = 0; i + 1 < g; ++i) {
        const int below = local[(start + i + 1) % g], above = local[(start + i) % g];
        p.transfers.push_back({below, above, slice});  // reduce up the chain
        p.transfers.push_back({above, below, slice});  // broadcast down
      }
    }
    AddDoubleBinaryTree(heads, slice, &p.transfers);
  }
  return p;
}

// Reduce-scatter in each node, a ring all-reduce of each local rank's shard across nodes,
// all-gather in each node. Precondition: equal GPUs per node.
std::vector<Phase> Hierarchical(const ClusterSpec& c, std::span<const int> gpus, double bytes) {
  const auto nodes = ByNode(c, gpus);
  const size_t g = nodes.front().size();
  std::vector<Phase> phases;
  Phase rs, ag;
  for (const auto& local : nodes) {
    const Phase r = RingPhase(c, CommOp::kReduceScatter, local, bytes);
    rs.transfers.insert(rs.transfers.end(), r.transfers.begin(), r.transfers.end());
    rs.latency_s = r.latency_s;
  }
  ag = rs;  // all-gather moves the same bytes along the same rings
  Phase across;
  for (size_t j = 0; j < g; ++j) {
    std::vector<int> members;
    for (const auto& local : nodes) members.push_back(local[j]);
    const Phase p = RingPhase(c, CommOp::kAllReduce, members, bytes / g);
    across.transfers.insert(across.transfers.end(), p.transfers.begin(), p.transfers.end());
    across.latency_s = p.latency_s;
  }
  if (g > 1) phases.push_back(std::move(rs));
  phases.push_back(std::move(across));
  if (g > 1) phases.push_back(std::move(ag));
  return phases;
}

bool EqualPerNode(const std::vector<std::vector<int>>& nodes) {
  for (const auto& local : nodes) {
    if (local.size() != nodes.front().size()) return false;
  }
  return true;
}

// Time estimate of phases from the load they put on each link (no event simulation).
double Estimate(const Topology& topo, const std::vector<double>& capacity,
                const std::vector<Phase>& phases) {
  double total = 0;
  std::map<int, double> load;
  for (const Phase& p : phases) {
    load.clear();
    for (const Transfer& t : p.transfers) {
      if (t.via >= 0) {
        for (int l : topo.Route(t.src, t.via, 0)) load[l] += t.bytes;
        for (int l : topo.Route(t.via, t.dst, 0)) load[l] += t.bytes;
      } else {
        for (int l : topo.Route(t.src, t.dst, 0)) load[l] += t.bytes;
      }
    }
    double worst = 0;
    for (const auto& [l, bytes] : load) worst = std::max(worst, bytes / capacity[l]);
    total += worst + p.latency_s;
  }
  return total;
}

// The same cluster with no link failed, if some what-if link failed (else null): the
// reference for reroute accounting. Bandwidth factors alone do not change routes (they
// are by hop count).
std::shared_ptr<const Topology> HealthyTopology(const ClusterSpec& c) {
  const auto& changes = c.what_if.links;
  if (std::none_of(changes.begin(), changes.end(), [](const LinkChange& l) { return l.failed; })) {
    return nullptr;
  }
  ClusterSpec healthy = c;
  healthy.what_if.links.clear();
  Result<std::shared_ptr<const Topology>> t = Topology::Build(healthy);
  assert(t.ok() && "removing failures cannot disconnect a fabric that built");
  return t.value();
}

// The links of `t` from src to dst, through `via` when it relays.
std::vector<int> TransferRoute(const Topology& topo, const Transfer& t) {
  if (t.via < 0) return topo.Route(t.src, t.dst, 0);
  std::vector<int> route = topo.Route(t.src, t.via, 0);
  const std::vector<int>& rest = topo.Route(t.via, t.dst, 0);
  route.insert(route.end(), rest.begin(), rest.end());
  return route;
}

std::vector<double> ClassEfficiency(const ClusterSpec& c) {
  std::vector<double> e(kLinkClassCount, c.NicEfficiency());
  e[static_cast<int>(LinkClass::kNvlink)] = c.efficiency.network;
  return e;
}

}  // namespace

std::vector<Phase> CollectivePhases(const ClusterSpec& c, AllReduceAlgorithm algorithm, CommOp op,
                                    std::span<const int> gpus, double bytes) {
  const int n = static_cast<int>(gpus.size());
  if (n < 2 || bytes <= 0) return {};
  switch (op) {
    case CommOp::kSendRecv: {
      const bool crosses = gpus[0] / c.gpus_per_node != gpus[1] / c.gpus_per_node;
      return {Phase{{{gpus[0], gpus[1], bytes}}, Latency(c, crosses)}};
    }
    case CommOp::kAllToAll: {
      Phase p;
      p.latency_s = Latency(c, ByNode(c, gpus).size() > 1);
      for (int a : gpus) {
        for (int b : gpus) {
          if (a != b) p.transfers.push_back({a, b, bytes / n, RailRelay(c, a, b)});
        }
      }
      return {p};
    }
    case CommOp::kAllGather:
    case CommOp::kReduceScatter:
      return {RingPhase(c, op, gpus, bytes)};
    case CommOp::kRingShift: {
      Phase p;
      p.latency_s = Latency(c, ByNode(c, gpus).size() > 1);
      AddRing(std::vector<int>(gpus.begin(), gpus.end()), bytes, NoRelay, &p.transfers);
      return {p};
    }
    case CommOp::kAllReduce: {
      const auto nodes = ByNode(c, gpus);
      const bool layered = nodes.size() > 1 && EqualPerNode(nodes);
      if (algorithm == AllReduceAlgorithm::kHierarchical && layered) {
        return Hierarchical(c, gpus, bytes);
      }
      if (algorithm == AllReduceAlgorithm::kTree && layered)
        return {NcclTreePhase(c, nodes, bytes)};
      return {RingPhase(c, op, gpus, bytes)};
    }
  }
  return {};
}

struct FlowCollectiveNetwork::Running {
  std::shared_ptr<const RoutedPlan> plan;
  std::vector<std::shared_ptr<const RoutedPlan>> mirrors;
  size_t next = 0;
  int outstanding = 0;
  std::function<void()> done;
};

FlowCollectiveNetwork::FlowCollectiveNetwork(const ClusterSpec& cluster,
                                             std::shared_ptr<const Topology> topology,
                                             AllReduceAlgorithm algorithm)
    : cluster_(cluster),
      algorithm_(algorithm),
      flows_(std::move(topology), ClassEfficiency(cluster)),
      healthy_(HealthyTopology(cluster)) {
  if (healthy_) detour_bytes_.assign(flows_.topology().links().size(), 0);
}

AllReduceAlgorithm FlowCollectiveNetwork::Choose(CommOp op, std::span<const int> gpus,
                                                 double bytes) const {
  if (op != CommOp::kAllReduce || algorithm_ != AllReduceAlgorithm::kAuto) return algorithm_;
  // Like NCCL's tuner: the candidate with the smallest estimate for this size and placement.
  std::vector<double> capacity(flows_.topology().links().size());
  for (size_t l = 0; l < capacity.size(); ++l)
    capacity[l] = flows_.LinkCapacity(static_cast<int>(l));
  AllReduceAlgorithm best = AllReduceAlgorithm::kRing;
  double best_s =
      Estimate(flows_.topology(), capacity, CollectivePhases(cluster_, best, op, gpus, bytes));
  // NCCL's tree is not a candidate yet: its tuner weighs the tree's bandwidth per
  // protocol, which this estimate does not model; tree runs only when asked for.
  for (AllReduceAlgorithm a : {AllReduceAlgorithm::kHierarchical}) {
    const double s =
        Estimate(flows_.topology(), capacity, CollectivePhases(cluster_, a, op, gpus, bytes));
    if (s < best_s * 0.999) {
      best = a;
      best_s = s;
    }
  }
  return best;
}

const std::vector<int>* FlowCollectiveNetwork::RouteOf(const Transfer& t) {
  if (t.via < 0) return &flows_.topology().Route(t.src, t.dst, 0);
  const uint64_t id = (static_cast<uint64_t>(t.src) << 42) | (static_cast<uint64_t>(t.via) << 21) |
                      static_cast<uint64_t>(t.dst);
  auto it = relayed_routes_.find(id);
  if (it == relayed_routes_.end()) {
    std::vector<int> route = flows_.topology().Route(t.src, t.via, 0);
    const std::vector<int>& rest = flows_.topology().Route(t.via, t.dst, 0);
    route.insert(route.end(), rest.begin(), rest.end());
    it = relayed_routes_.emplace(id, std::move(route)).first;
  }
  return &it->second;
}

std::shared_ptr<const FlowCollectiveNetwork::RoutedPlan> FlowCollectiveNetwork::PlanFor(
    CommOp op, std::span<const int> gpus, double bytes) {
  PlanKey key{static_cast<int>(op), std::vector<int>(gpus.begin(), gpus.end()), bytes};
  auto it = plans_.find(key);
  if (it != plans_.end()) return it->second;
  auto plan = std::make_shared<RoutedPlan>();
  for (const Phase& phase : CollectivePhases(cluster_, Choose(op, gpus, bytes), op, gpus, bytes)) {
    RoutedPhase routed;
    routed.latency_s = phase.latency_s;
    for (const Transfer& t : phase.transfers) {
      if (t.src == t.dst || t.bytes <= 0) continue;
      // A connection keeps its path (ECMP hashes a queue pair's header, which does not
      // change between collectives): the path depends on (src, dst) only.
      const std::vector<int>* route = RouteOf(t);
      auto same = std::find_if(routed.coflows.begin(), routed.coflows.end(),
                               [&t](const Coflow& f) { return f.bytes == t.bytes; });
      if (same == routed.coflows.end()) {
        same = routed.coflows.insert(same, Coflow{});
        same->bytes = t.bytes;
      }
      same->route.insert(same->route.end(), route->begin(), route->end());
      if (healthy_) NoteReroute(t, *route, &*same);
    }
    plan->push_back(std::move(routed));
  }
  return plans_.emplace(std::move(key), plan).first->second;
}

void FlowCollectiveNetwork::NoteReroute(const Transfer& t, const std::vector<int>& route,
                                        Coflow* phase) const {
  // Link ids agree between the two topologies: the same cluster builds the same links.
  const std::vector<int> healthy = TransferRoute(*healthy_, t);
  if (healthy == route) return;
  ++phase->rerouted;
  for (int l : route) {
    if (std::find(healthy.begin(), healthy.end(), l) == healthy.end()) phase->detour.push_back(l);
  }
}

void FlowCollectiveNetwork::CountReroutes(const Coflow& phase) {
  if (phase.rerouted == 0) return;
  rerouted_bytes_ += phase.rerouted * phase.bytes;
  for (int l : phase.detour) detour_bytes_[l] += phase.bytes;
}

Reroutes FlowCollectiveNetwork::Rerouted() const {
  Reroutes out;
  out.bytes = rerouted_bytes_;
  std::map<std::string, double> by_name;  // both directions of a physical link together
  const auto& links = flows_.topology().links();
  for (size_t l = 0; l < detour_bytes_.size(); ++l) {
    if (detour_bytes_[l] > 0) by_name[links[l].name] += detour_bytes_[l];
  }
  for (const auto& [name, bytes] : by_name) out.links.push_back({name, bytes});
  std::stable_sort(
      out.links.begin(), out.links.end(),
      [](const Reroutes::Detour& a, const Reroutes::Detour& b) { return a.bytes > b.bytes; });
  return out;
}

void FlowCollectiveNetwork::Start(Simulator& sim, CommOp op, std::span<const int> gpus,
                                  double bytes, std::function<void()> done,
                                  std::span<const std::vector<int>> mirrors) {
  auto run = std::make_shared<Running>();
  run->plan = PlanFor(op, gpus, bytes);
  for (const auto& m : mirrors) run->mirrors.push_back(PlanFor(op, m, bytes));
  run->done = std::move(done);
  RunPhase(sim, std::move(run));
}

void FlowCollectiveNetwork::RunPhase(Simulator& sim, std::shared_ptr<Running> run) {
  if (run->next == run->plan->size()) {
    sim.Schedule(SimTime::Zero(), std::move(run->done));
    return;
  }
  const RoutedPhase& phase = (*run->plan)[run->next];
  const size_t index = run->next++;
  auto finish_phase = [this, &sim, run, latency = phase.latency_s]() {
    if (--run->outstanding > 0) return;
    sim.Schedule(SimTime::Seconds(latency), [this, &sim, run] { RunPhase(sim, run); });
  };
  if (phase.coflows.empty()) {
    run->outstanding = 1;
    finish_phase();
    return;
  }
  run->outstanding = static_cast<int>(phase.coflows.size());
  for (const Coflow& f : phase.coflows) {
    flows_.StartFlowOnRoute(sim, &f.route, f.bytes, finish_phase);
    CountReroutes(f);
  }
  // Mirrors load the network during this phase; nobody waits for them.
  for (const auto& mirror : run->mirrors) {
    if (index >= mirror->size()) continue;
    for (const Coflow& f : (*mirror)[index].coflows) {
      flows_.StartFlowOnRoute(sim, &f.route, f.bytes, nullptr);
      CountReroutes(f);
    }
  }
}

void FlowCollectiveNetwork::WatchNics(const std::vector<int>& nodes) {
  const Topology& topo = flows_.topology();
  std::vector<int> links;
  for (size_t l = 0; l < topo.links().size(); ++l) {
    const Link& link = topo.links()[l];
    if (link.cls != LinkClass::kNicSwitch) continue;
    const std::string& nic = topo.VertexName(link.src);  // "node<N>.nic<I>"
    for (int n : nodes) {
      if (nic.rfind("node" + std::to_string(n) + ".", 0) == 0) links.push_back(static_cast<int>(l));
    }
  }
  // Every watched NIC starts at 0, so that each has a counter track.
  for (int l : links) samples_.push_back({l, SimTime::Zero(), 0.0});
  flows_.WatchLinks(links, [this](int link, SimTime t, double rate) {
    samples_.push_back({link, t, rate});
  });
}

std::string FlowCollectiveNetwork::LinkName(int link) const {
  const Link& l = flows_.topology().links()[link];
  return flows_.topology().VertexName(l.src) + " -> " + flows_.topology().VertexName(l.dst);
}

std::vector<LinkUsage> FlowCollectiveNetwork::Usage(double step_s) const {
  const Topology& topo = flows_.topology();
  const auto& links = topo.links();
  std::vector<LinkUsage> classes(kLinkClassCount);
  for (int k = 0; k < kLinkClassCount; ++k) {
    classes[k].name = LinkClassName(static_cast<LinkClass>(k));
    classes[k].links = 0;
  }
  std::vector<LinkUsage> busiest;
  for (size_t l = 0; l < links.size(); ++l) {
    LinkUsage& u = classes[static_cast<int>(links[l].cls)];
    u.bytes += flows_.link_bytes()[l];
    u.busy_s += flows_.link_busy_s()[l];
    u.capacity += flows_.LinkCapacity(static_cast<int>(l));
    ++u.links;
    if (flows_.link_bytes()[l] > 0) {
      LinkUsage one;
      one.name = topo.VertexName(links[l].src) + " -> " + topo.VertexName(links[l].dst);
      one.bytes = flows_.link_bytes()[l];
      one.busy_s = flows_.link_busy_s()[l];
      one.capacity = flows_.LinkCapacity(static_cast<int>(l));
      busiest.push_back(std::move(one));
    }
  }
  std::vector<LinkUsage> out;
  for (LinkUsage& u : classes) {
    if (u.links == 0) continue;
    u.busy_s = step_s > 0 ? u.busy_s / u.links : 0;  // mean busy time of one link
    out.push_back(std::move(u));
  }
  std::stable_sort(busiest.begin(), busiest.end(),
                   [](const LinkUsage& a, const LinkUsage& b) { return a.bytes > b.bytes; });
  if (busiest.size() > 8) busiest.resize(8);
  out.insert(out.end(), busiest.begin(), busiest.end());
  return out;
}

double FlowCollectiveNetwork::IntraNodeBytes() const {
  double b = 0;
  const auto& links = flows_.topology().links();
  for (size_t l = 0; l < links.size(); ++l) {
    // Count each byte once, on the link that leaves its GPU.
    if (links[l].cls == LinkClass::kNvlink && links[l].src < flows_.topology().Gpus()) {
      b += flows_.link_bytes()[l];
    }
  }
  return b;
}

double FlowCollectiveNetwork::InterNodeBytes() const {
  double b = 0;
  const auto& links = flows_.topology().links();
  for (size_t l = 0; l < links.size(); ++l) {
    if (links[l].cls == LinkClass::kNicSwitch) b += flows_.link_bytes()[l];
  }
  return b;
}

}  // namespace meshsim

#include "sim/net/flow_collectives.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>
#include <map>

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
  const int channels =
      std::max(1, std::min({c.inter_node.nics_per_node, static_cast<int>(smallest), w.max_rings}));
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
        order, share / channels, [&c](int src, int dst) { return RailRelay(c, src, dst); },
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

// NCCL's tree all-reduce (flow_collectives.h). Precondition: equal GPUs per node.
Phase NcclTreePhase(const ClusterSpec& c, const std::vector<std::vector<int>>& nodes, double bytes,
                    const Wire& w) {
  const int g = static_cast<int>(nodes.front().size());
  const int channels = std::max(1, std::min({c.inter_node.nics_per_node, g, w.max_rings}));
  const double slice = bytes * w.factor / channels;
  Phase p;
  p.latency_s = w.latency_s;
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
  e[static_cast<int>(LinkClass::kIci)] = c.efficiency.network;
  return e;
}

}  // namespace

namespace {

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
  const Wire wire{NcclTuner::WireFactor(choice.protocol), choice.channels, choice.hops_s};
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

// A collective in flight, from a pool: the callbacks that refer to it are two pointers,
// which std::function stores without allocating.
struct FlowCollectiveNetwork::Running {
  Simulator* sim = nullptr;
  std::shared_ptr<const RoutedPlan> plan;
  MirrorPlans* mirrors = nullptr;
  MirrorPlans own_mirrors;  // when the memo holds other groups at the same address
  size_t next = 0;
  int outstanding = 0;
  std::function<void()> done;
  // The phase in flight: its start, stretch, min_s and latency (RoutedPhase).
  SimTime start;
  double stretch = 1, min_s = 0, latency_s = 0;
};

FlowCollectiveNetwork::~FlowCollectiveNetwork() = default;

FlowCollectiveNetwork::Running* FlowCollectiveNetwork::AcquireRun() {
  if (free_runs_.empty()) {
    runs_.push_back(std::make_unique<Running>());
    return runs_.back().get();
  }
  Running* run = free_runs_.back();
  free_runs_.pop_back();
  return run;
}

void FlowCollectiveNetwork::ReleaseRun(Running* run) {
  run->plan.reset();
  run->mirrors = nullptr;
  run->own_mirrors.groups.clear();
  run->own_mirrors.phases.clear();
  run->own_mirrors.links.clear();
  run->own_mirrors.split = NearMirrors::Split{};
  run->done = nullptr;
  run->next = 0;
  run->outstanding = 0;
  free_runs_.push_back(run);
}

FlowCollectiveNetwork::FlowCollectiveNetwork(const ClusterSpec& cluster,
                                             std::shared_ptr<const Topology> topology,
                                             const NcclOptions& nccl)
    : cluster_(cluster),
      nccl_(nccl),
      tuner_(cluster, nccl.channels),
      flows_(std::move(topology), ClassEfficiency(cluster)),
      healthy_(HealthyTopology(cluster)) {
  const size_t links = flows_.topology().links().size();
  if (healthy_) detour_bytes_.assign(links, 0);
  if (cluster.mirror_traffic == MirrorTraffic::kNear) near_ = std::make_unique<NearMirrors>(links);
}

NcclChoice FlowCollectiveNetwork::ChoiceFor(CommOp op, std::span<const int> gpus,
                                            double bytes) const {
  const auto nodes = ByNode(cluster_, gpus);
  GroupShape shape{static_cast<int>(gpus.size()), static_cast<int>(nodes.size()), 0};
  for (const auto& local : nodes) shape.per_node = std::max<int>(shape.per_node, local.size());
  return tuner_.Choose(op, shape, bytes, nccl_.algorithm, nccl_.protocol);
}

std::vector<Phase> FlowCollectiveNetwork::PhasesOf(CommOp op, std::span<const int> gpus,
                                                   double bytes, double* launch_s) const {
  NcclChoice choice;
  const bool tuned =
      !cluster_.Torus() && gpus.size() >= 2 && bytes > 0 &&
      (op == CommOp::kAllReduce || op == CommOp::kAllGather || op == CommOp::kReduceScatter);
  if (tuned) choice = ChoiceFor(op, gpus, bytes);
  *launch_s = tuned ? choice.launch_s : 0;
  return CollectivePhases(cluster_, tuner_, choice, op, gpus, bytes);
}

void FlowCollectiveNetwork::RoutePhase(const Phase& phase, std::vector<int>* links,
                                       std::vector<Coflow>* out) {
  const Topology& topo = flows_.topology();
  const size_t first = out->size();
  for (const Transfer& t : phase.transfers) {
    if (t.src == t.dst || t.bytes <= 0) continue;
    auto same = std::find_if(out->begin() + first, out->end(),
                             [&t](const Coflow& f) { return f.bytes == t.bytes; });
    const size_t k = same - (out->begin() + first);
    if (same == out->end()) {
      out->emplace_back().bytes = t.bytes;
      if (routing_.size() <= k) routing_.resize(k + 1);
      routing_[k].clear();
    }
    // A connection keeps its path (ECMP hashes a queue pair's header, which does not
    // change between collectives): the path depends on (src, dst) only.
    std::vector<int>& route = routing_[k];
    const size_t start = route.size();
    topo.AppendRoute(t.src, t.via < 0 ? t.dst : t.via, 0, &route);
    if (t.via >= 0) topo.AppendRoute(t.via, t.dst, 0, &route);
    if (healthy_) {
      NoteReroute(t, std::span<const int>(route).subspan(start), &(*out)[first + k]);
    }
  }
  for (size_t k = 0; first + k < out->size(); ++k) {
    Coflow& f = (*out)[first + k];
    f.links = links;
    f.first = static_cast<uint32_t>(links->size());
    f.count = static_cast<uint32_t>(routing_[k].size());
    links->insert(links->end(), routing_[k].begin(), routing_[k].end());
  }
}

std::shared_ptr<const RoutedPlan> FlowCollectiveNetwork::PlanFor(CommOp op,
                                                                 std::span<const int> gpus,
                                                                 double bytes) {
  PlanKey key{static_cast<int>(op), std::vector<int>(gpus.begin(), gpus.end()), bytes};
  auto it = plans_.find(key);
  if (it != plans_.end()) return it->second;
  auto plan = std::make_shared<RoutedPlan>();
  for (const Phase& phase : PhasesOf(op, gpus, bytes, &plan->launch_s)) {
    RoutedPhase& routed = plan->phases.emplace_back();
    routed.latency_s = phase.latency_s;
    routed.min_s = phase.min_s;
    routed.stretch = phase.stretch;
    RoutePhase(phase, &plan->links, &routed.coflows);
  }
  return plans_.emplace(std::move(key), plan).first->second;
}

size_t FlowCollectiveNetwork::MirrorKeyHash::operator()(const MirrorKey& k) const {
  uint64_t bits = 0;
  static_assert(sizeof(double) == sizeof(uint64_t));
  std::memcpy(&bits, &std::get<2>(k), sizeof bits);
  uint64_t h = reinterpret_cast<uintptr_t>(std::get<0>(k)) * 0x9e3779b97f4a7c15ull;
  h ^= (bits + static_cast<uint64_t>(std::get<1>(k))) * 0xc2b2ae3d27d4eb4full;
  return static_cast<size_t>(h ^ (h >> 29));
}

std::shared_ptr<const RoutedPlan> FlowCollectiveNetwork::GroupPlanFor(CommOp op,
                                                                      std::span<const int> gpus,
                                                                      double bytes) {
  auto [it, added] = group_plans_.try_emplace(MirrorKey{gpus.data(), static_cast<int>(op), bytes});
  auto& [members, plan] = it->second;
  if (!added && std::equal(gpus.begin(), gpus.end(), members.begin(), members.end())) return plan;
  std::shared_ptr<const RoutedPlan> found = PlanFor(op, gpus, bytes);
  if (added) {
    members.assign(gpus.begin(), gpus.end());
    plan = found;
  }
  return found;
}

FlowCollectiveNetwork::MirrorPlans* FlowCollectiveNetwork::MirrorPlansFor(
    CommOp op, std::span<const std::vector<int>> mirrors, double bytes, MirrorPlans* scratch) {
  auto [it, added] =
      mirror_plans_.try_emplace(MirrorKey{mirrors.data(), static_cast<int>(op), bytes});
  MirrorPlans& memo = it->second;
  auto stored_at = [](const std::vector<int>& group, std::span<const int> seen) {
    return group.data() == seen.data() && group.size() == seen.size();
  };
  if (!added && std::equal(mirrors.begin(), mirrors.end(), memo.groups.begin(), memo.groups.end(),
                           stored_at)) {
    return &memo;
  }
  MirrorPlans* out = added ? &memo : scratch;
  BuildMirrorPlans(op, mirrors, bytes, out);
  if (added) {
    for (const auto& m : mirrors) memo.groups.emplace_back(m);
    if (near_) near_->Remember(&memo.split);
  }
  return out;
}

void FlowCollectiveNetwork::BuildMirrorPlans(CommOp op, std::span<const std::vector<int>> mirrors,
                                             double bytes, MirrorPlans* out) {
  for (const auto& m : mirrors) {
    double launch_s = 0;  // mirrors run in step with the replayed group's phases
    const std::vector<Phase> phases = PhasesOf(op, m, bytes, &launch_s);
    if (out->phases.size() < phases.size()) out->phases.resize(phases.size());
    for (size_t i = 0; i < phases.size(); ++i) RoutePhase(phases[i], &out->links, &out->phases[i]);
  }
}

void FlowCollectiveNetwork::NoteReroute(const Transfer& t, std::span<const int> route,
                                        Coflow* phase) const {
  // Link ids agree between the two topologies: the same cluster builds the same links.
  const std::vector<int> healthy = TransferRoute(*healthy_, t);
  if (std::equal(healthy.begin(), healthy.end(), route.begin(), route.end())) return;
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
  const Topology& topo = flows_.topology();
  for (size_t l = 0; l < detour_bytes_.size(); ++l) {
    if (detour_bytes_[l] > 0) by_name[topo.LinkName(static_cast<int>(l))] += detour_bytes_[l];
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
  Running* run = AcquireRun();
  run->sim = &sim;
  run->plan = GroupPlanFor(op, gpus, bytes);
  run->mirrors = MirrorPlansFor(op, mirrors, bytes, &run->own_mirrors);
  run->done = std::move(done);
  const double launch_s = run->plan->launch_s;
  if (launch_s <= 0) {
    RunPhase(run);
    return;
  }
  sim.Schedule(SimTime::Seconds(launch_s), [this, run] { RunPhase(run); });
}

void FlowCollectiveNetwork::RunPhase(Running* run) {
  Simulator& sim = *run->sim;
  if (run->next == run->plan->phases.size()) {
    sim.Schedule(SimTime::Zero(), std::move(run->done));
    ReleaseRun(run);
    return;
  }
  const RoutedPhase& phase = run->plan->phases[run->next];
  const size_t index = run->next++;
  run->start = sim.Now();
  run->stretch = phase.stretch;
  run->min_s = phase.min_s;
  run->latency_s = phase.latency_s;
  if (phase.coflows.empty()) {
    run->outstanding = 1;
    FinishPhase(run);
    return;
  }
  run->outstanding = static_cast<int>(phase.coflows.size());
  for (const Coflow& f : phase.coflows) {
    flows_.StartFlowOnRoute(sim, f.route(), f.bytes, [this, run] { FinishPhase(run); });
    CountReroutes(f);
    if (near_) near_->MarkNear(f);
  }
  StartMirrors(run, index);
}

void FlowCollectiveNetwork::StartMirrors(Running* run, size_t index) {
  Simulator& sim = *run->sim;
  const std::vector<std::vector<Coflow>>& phases = run->mirrors->phases;
  if ((!near_ || healthy_) && index < phases.size()) {
    for (const Coflow& f : phases[index]) {
      if (!near_) flows_.StartFlowOnRoute(sim, f.route(), f.bytes, nullptr);
      CountReroutes(f);
    }
  }
  if (!near_) return;
  for (const Coflow* f : near_->Run(phases, &run->mirrors->split, index)) {
    flows_.StartFlowOnRoute(sim, f->route(), f->bytes, nullptr);
  }
}

const std::vector<double>& FlowCollectiveNetwork::CountedBytes() const {
  static const std::vector<double> kNone;
  return near_ ? near_->CountedBytes() : kNone;
}

const std::vector<double>& FlowCollectiveNetwork::CountedBusy() const {
  static const std::vector<double> kNone;
  return near_ ? near_->CountedBusy() : kNone;
}

double FlowCollectiveNetwork::LinkBytes(int link, const std::vector<double>& counted) const {
  return flows_.link_bytes()[link] + (counted.empty() ? 0.0 : counted[link]);
}

// The data ends at start + max(stretch x (last arrival - start), min_s); then the
// phase's latency passes.
void FlowCollectiveNetwork::FinishPhase(Running* run) {
  if (--run->outstanding > 0) return;
  Simulator& sim = *run->sim;
  const double data_s = std::max(run->stretch * (sim.Now() - run->start).seconds(), run->min_s);
  if (near_) {
    NearMirrors::Split& split = run->mirrors->split;
    near_->Finished(&split, run->next - 1, data_s);  // its counted mirrors took as long
    if (run->mirrors == &run->own_mirrors) near_->Flush(&split);
  }
  const SimTime wait = std::max(SimTime::Zero(), run->start + SimTime::Seconds(data_s) - sim.Now());
  sim.Schedule(wait + SimTime::Seconds(run->latency_s), [this, run] { RunPhase(run); });
}

void FlowCollectiveNetwork::WatchNics(const std::vector<int>& nodes) {
  const Topology& topo = flows_.topology();
  std::vector<bool> watched(topo.Gpus() / cluster_.gpus_per_node, false);
  for (int n : nodes) watched[n] = true;
  std::vector<int> links;
  for (size_t l = 0; l < topo.links().size(); ++l) {
    const Link& link = topo.links()[l];
    if (link.cls == LinkClass::kNicSwitch && watched[topo.NodeOfVertex(link.src)]) {
      links.push_back(static_cast<int>(l));
    }
  }
  // Mirrors crossing a watched NIC are simulated, so that its rate counts them.
  if (near_) {
    for (int l : links) near_->MarkNear(l);
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
  const std::vector<double>& counted_bytes = CountedBytes();
  const std::vector<double>& counted_busy_s = CountedBusy();
  // A link's busy time: its flows' and its counted mirrors', at most the step.
  auto busy = [&](size_t l) {
    const double flows = flows_.link_busy_s()[l];
    if (counted_busy_s.empty() || counted_busy_s[l] == 0) return flows;
    const double both = flows + counted_busy_s[l];
    return step_s > 0 ? std::min(both, std::max(flows, step_s)) : both;
  };
  std::vector<LinkUsage> classes(kLinkClassCount);
  for (int k = 0; k < kLinkClassCount; ++k) {
    classes[k].name = LinkClassName(static_cast<LinkClass>(k));
    classes[k].links = 0;
  }
  std::vector<int> carried;  // links that carried bytes
  for (size_t l = 0; l < links.size(); ++l) {
    LinkUsage& u = classes[static_cast<int>(links[l].cls)];
    const double bytes = LinkBytes(static_cast<int>(l), counted_bytes);
    u.bytes += bytes;
    u.busy_s += busy(l);
    u.capacity += flows_.LinkCapacity(static_cast<int>(l));
    ++u.links;
    if (bytes > 0) carried.push_back(static_cast<int>(l));
  }
  std::vector<LinkUsage> out;
  for (LinkUsage& u : classes) {
    if (u.links == 0) continue;
    u.busy_s = step_s > 0 ? u.busy_s / u.links : 0;  // mean busy time of one link
    out.push_back(std::move(u));
  }
  // The 8 busiest links, named only once chosen. Ties, in link order, are bytes equal to
  // a float's precision: sums of the same traffic in another order (counted mirrors against
  // flows) differ in the last bits.
  const size_t shown = std::min<size_t>(carried.size(), 8);
  std::partial_sort(carried.begin(), carried.begin() + shown, carried.end(), [&](int a, int b) {
    const float ba = static_cast<float>(LinkBytes(a, counted_bytes));
    const float bb = static_cast<float>(LinkBytes(b, counted_bytes));
    return ba != bb ? ba > bb : a < b;
  });
  for (size_t i = 0; i < shown; ++i) {
    const int l = carried[i];
    LinkUsage one;
    one.name = topo.VertexName(links[l].src) + " -> " + topo.VertexName(links[l].dst);
    one.bytes = LinkBytes(l, counted_bytes);
    one.busy_s = busy(l);
    one.capacity = flows_.LinkCapacity(l);
    out.push_back(std::move(one));
  }
  return out;
}

double FlowCollectiveNetwork::IntraNodeBytes() const {
  const std::vector<double>& counted_bytes = CountedBytes();
  double b = 0;
  const auto& links = flows_.topology().links();
  for (size_t l = 0; l < links.size(); ++l) {
    // Count each byte once, on the link that leaves its GPU.
    const LinkClass cls = links[l].cls;
    if ((cls == LinkClass::kNvlink || cls == LinkClass::kIci) &&
        links[l].src < flows_.topology().Gpus()) {
      b += LinkBytes(static_cast<int>(l), counted_bytes);
    }
  }
  return b;
}

double FlowCollectiveNetwork::InterNodeBytes() const {
  const std::vector<double>& counted_bytes = CountedBytes();
  double b = 0;
  const auto& links = flows_.topology().links();
  for (size_t l = 0; l < links.size(); ++l) {
    if (links[l].cls == LinkClass::kNicSwitch) b += LinkBytes(static_cast<int>(l), counted_bytes);
  }
  return b;
}

}  // namespace meshsim

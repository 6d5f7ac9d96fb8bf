#include "sim/net/flow_collectives.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>
#include <map>

#include "sim/net/expert_dispatch.h"

namespace meshsim {
namespace {
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

// Appends the links of `t` from src to dst: through `via` when it relays, and across
// nodes on NIC `nic` of both nodes when it names one.
void AppendTransferRoute(const Topology& topo, const Transfer& t, std::vector<int>* route) {
  const int from = t.via < 0 ? t.src : t.via;
  if (t.via >= 0) topo.AppendRoute(t.src, t.via, 0, route);
  if (t.nic >= 0) {
    topo.AppendRailRoute(from, t.dst, t.nic, route);
  } else {
    topo.AppendRoute(from, t.dst, 0, route);
  }
}

// The links of `t` from src to dst (AppendTransferRoute).
std::vector<int> TransferRoute(const Topology& topo, const Transfer& t) {
  if (t.via < 0 && t.nic < 0) return topo.Route(t.src, t.dst, 0);
  std::vector<int> route;
  AppendTransferRoute(topo, t, &route);
  return route;
}

std::vector<double> ClassEfficiency(const ClusterSpec& c) {
  std::vector<double> e(kLinkClassCount, c.NicEfficiency());
  e[static_cast<int>(LinkClass::kNvlink)] = c.efficiency.network;
  e[static_cast<int>(LinkClass::kIci)] = c.efficiency.network;
  return e;
}

}  // namespace

// A collective in flight, from a pool: the callbacks that refer to it are two pointers,
// which std::function stores without allocating.
struct FlowCollectiveNetwork::Running {
  Simulator* sim = nullptr;
  const RoutedPlan* plan = nullptr;
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
  run->plan = nullptr;
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
                                             const NcclOptions& nccl, const ExpertRouting& routing,
                                             MoeFlexBackend backend)
    : cluster_(cluster),
      nccl_(nccl),
      tuner_(cluster, nccl.channels),
      expert_routing_(routing),
      flex_backend_(backend),
      flows_(std::move(topology), ClassEfficiency(cluster)),
      healthy_(HealthyTopology(cluster)) {
  const size_t links = flows_.topology().links().size();
  if (healthy_) detour_bytes_.assign(links, 0);
  if (cluster.mirror_traffic == MirrorTraffic::kNear) near_ = std::make_unique<NearMirrors>(links);
}

NcclChoice FlowCollectiveNetwork::ChoiceFor(CommOp op, std::span<const int> gpus,
                                            double bytes) const {
  return tuner_.Choose(op, GroupShapeOf(cluster_.gpus_per_node, gpus), bytes, nccl_.algorithm,
                       nccl_.protocol);
}

std::vector<Phase> FlowCollectiveNetwork::PhasesOf(CommOp op, std::span<const int> gpus,
                                                   double bytes, double* launch_s) const {
  if (IsExpertExchange(op)) {
    *launch_s = 0;
    if (gpus.size() < 2 || bytes <= 0) return {};
    // No DeepEP on a torus (TPUs): the all-to-all of top_k copies.
    if (cluster_.Torus())
      return PhasesOf(CommOp::kAllToAll, gpus, bytes * expert_routing_.top_k, launch_s);
    const int domains = FanoutOf(expert_routing_, gpus, cluster_.gpus_per_node).domains;
    return {ExpertDispatchPhase(cluster_, expert_routing_, gpus, bytes,
                                DomainRateFactor(flex_backend_, op, domains))};
  }
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
    // change between collectives): the path depends on (src, dst, via, nic) only.
    std::vector<int>& route = routing_[k];
    const size_t start = route.size();
    AppendTransferRoute(topo, t, &route);
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

const RoutedPlan* FlowCollectiveNetwork::PlanFor(CommOp op, std::span<const int> gpus,
                                                 double bytes) {
  PlanKey key{static_cast<int>(op), std::vector<int>(gpus.begin(), gpus.end()), bytes};
  auto it = plans_.find(key);
  if (it != plans_.end()) return it->second.get();
  auto plan = std::make_unique<RoutedPlan>();
  for (const Phase& phase : PhasesOf(op, gpus, bytes, &plan->launch_s)) {
    RoutedPhase& routed = plan->phases.emplace_back();
    routed.latency_s = phase.latency_s;
    routed.min_s = phase.min_s;
    routed.stretch = phase.stretch;
    RoutePhase(phase, &plan->links, &routed.coflows);
  }
  return plans_.emplace(std::move(key), std::move(plan)).first->second.get();
}

size_t FlowCollectiveNetwork::MirrorKeyHash::operator()(const MirrorKey& k) const {
  uint64_t bits = 0;
  static_assert(sizeof(double) == sizeof(uint64_t));
  std::memcpy(&bits, &std::get<2>(k), sizeof bits);
  uint64_t h = reinterpret_cast<uintptr_t>(std::get<0>(k)) * 0x9e3779b97f4a7c15ull;
  h ^= (bits + static_cast<uint64_t>(std::get<1>(k))) * 0xc2b2ae3d27d4eb4full;
  return static_cast<size_t>(h ^ (h >> 29));
}

const RoutedPlan* FlowCollectiveNetwork::GroupPlanFor(CommOp op, std::span<const int> gpus,
                                                      double bytes) {
  if (gpus.empty()) return PlanFor(op, gpus, bytes);
  if (const RoutedPlan* const* plan = group_plans_.Find(op, gpus, bytes)) return *plan;
  return group_plans_.Store(op, gpus, bytes, PlanFor(op, gpus, bytes));
}

FlowCollectiveNetwork::MirrorPlans* FlowCollectiveNetwork::MirrorPlansFor(
    CommOp op, std::span<const std::vector<int>> mirrors, double bytes, MirrorPlans* scratch) {
  const MirrorKey key{mirrors.data(), static_cast<int>(op), bytes};
  MirrorSlot& slot = mirror_slots_[MirrorKeyHash()(key) % kMirrorSlots];
  bool added = false;
  if (slot.key != key) {
    auto found = mirror_plans_.try_emplace(key);
    added = found.second;
    slot = {key, &found.first->second};
  }
  MirrorPlans& memo = *slot.plans;
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

// A collective's phases depend on its GPUs only through their nodes' order and the GPUs'
// local ranks (flow_phases.h), so a group moved by whole nodes has its phases moved alike
// (not on a torus, whose phases follow chip coordinates, nor for expert dispatches, whose
// phases follow the router). Returns the shift, or 0 where there is none.
int FlowCollectiveNetwork::NodeShift(CommOp op, std::span<const int> from,
                                     std::span<const int> to) const {
  if (IsExpertExchange(op) || cluster_.Torus() || from.size() != to.size() || from.empty()) {
    return 0;
  }
  const int shift = to.front() - from.front();
  if (shift % cluster_.gpus_per_node != 0) return 0;
  for (size_t i = 0; i < from.size(); ++i) {
    if (to[i] - from[i] != shift) return 0;
  }
  return shift;
}

void FlowCollectiveNetwork::BuildMirrorPlans(CommOp op, std::span<const std::vector<int>> mirrors,
                                             double bytes, MirrorPlans* out) {
  std::vector<Phase> first, shifted;  // the first mirror's phases; another's moved from them
  for (size_t m = 0; m < mirrors.size(); ++m) {
    double launch_s = 0;  // mirrors run in step with the replayed group's phases
    const int shift = m == 0 ? 0 : NodeShift(op, mirrors[0], mirrors[m]);
    if (m == 0) {
      first = PhasesOf(op, mirrors[m], bytes, &launch_s);
    } else if (shift != 0) {
      Shift(first, shift, &shifted);
    } else {
      shifted = PhasesOf(op, mirrors[m], bytes, &launch_s);
    }
    const std::vector<Phase>& phases = m == 0 ? first : shifted;
    if (out->phases.size() < phases.size()) out->phases.resize(phases.size());
    for (size_t i = 0; i < phases.size(); ++i) RoutePhase(phases[i], &out->links, &out->phases[i]);
    // Mirrors are translates of one group: room for the others as the first one needed.
    if (m == 0) {
      for (std::vector<Coflow>& coflows : out->phases)
        coflows.reserve(coflows.size() * mirrors.size());
      out->links.reserve(out->links.size() * mirrors.size());
    }
  }
}

void FlowCollectiveNetwork::Shift(const std::vector<Phase>& phases, int shift,
                                  std::vector<Phase>* out) {
  out->resize(phases.size());
  for (size_t i = 0; i < phases.size(); ++i) {
    const Phase& from = phases[i];
    Phase& to = (*out)[i];
    to.latency_s = from.latency_s;
    to.min_s = from.min_s;
    to.stretch = from.stretch;
    to.transfers.assign(from.transfers.begin(), from.transfers.end());
    for (Transfer& t : to.transfers) {
      t.src += shift;
      t.dst += shift;
      if (t.via >= 0) t.via += shift;
    }
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
  if (launch_s <= 0 && run->plan->phases.empty()) {  // `done` runs from an event
    sim.Schedule(SimTime::Zero(), std::move(run->done));
    ReleaseRun(run);
    return;
  }
  if (launch_s <= 0) {
    RunPhase(run);
    return;
  }
  sim.Schedule(SimTime::Seconds(launch_s), [this, run] { RunPhase(run); });
}

void FlowCollectiveNetwork::RunPhase(Running* run) {
  Simulator& sim = *run->sim;
  // Here always from an event (Start schedules `done` of a plan with nothing to run).
  if (run->next == run->plan->phases.size()) {
    std::function<void()> done = std::move(run->done);
    ReleaseRun(run);
    done();
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
  flows_.Hold();
  for (const Coflow& f : phase.coflows) {
    flows_.StartFlowOnRoute(
        sim, f.route(), f.bytes, [this, run] { FinishPhase(run); }, &f.gathered);
    CountReroutes(f);
    if (near_) near_->MarkNear(f);
  }
  StartMirrors(run, index);
  flows_.Release(sim);
}

void FlowCollectiveNetwork::StartMirrors(Running* run, size_t index) {
  Simulator& sim = *run->sim;
  const std::vector<std::vector<Coflow>>& phases = run->mirrors->phases;
  if ((!near_ || healthy_) && index < phases.size()) {
    for (const Coflow& f : phases[index]) {
      if (!near_) flows_.StartFlowOnRoute(sim, f.route(), f.bytes, nullptr, &f.gathered);
      CountReroutes(f);
    }
  }
  if (!near_) return;
  for (const Coflow* f : near_->Run(phases, &run->mirrors->split, index)) {
    flows_.StartFlowOnRoute(sim, f->route(), f->bytes, nullptr, &f->gathered);
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
  return flows_.LinkBytes(link) + (counted.empty() ? 0.0 : counted[link]);
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
    const double flows = flows_.LinkBusySeconds(static_cast<int>(l));
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

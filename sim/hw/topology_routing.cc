// Topology's routing: hop counts from the fat-tree/rail structure (per-pattern local
// tables) or a search, torus routes, and equal-cost next hops chosen by flow (d-mod-k).
#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <map>

#include "sim/core/hash.h"
#include "sim/hw/topology.h"

namespace meshsim {

// One pattern per distinct way a node's NICs share switches.
void Topology::IndexStructure() {
  uplinks_.assign(leaves_.size(), {});
  for (int leaf : leaves_) {
    for (int id : OutLinks(leaf)) {
      if (role_[links_[id].dst] == Role::kSpine) uplinks_[index_[leaf]].push_back(id);
    }
  }
  // A NIC's link to its switch is 2k or 2k + 1, the way back the other one (AddBidirectional).
  down_link_of_nic_.assign(nic_vertex_.size(), -1);
  for (size_t k = 0; k < nic_vertex_.size(); ++k) {
    for (int id : OutLinks(nic_vertex_[k])) {
      if (links_[id].dst == switch_of_nic_[k]) down_link_of_nic_[k] = id ^ 1;
    }
  }
  nvswitch_routes_ = OnlyNvswitchJoinsGpus();
  const int nodes = gpus_ / gpus_per_node_;
  std::map<std::vector<int>, int> patterns;
  pattern_of_node_.assign(nodes, 0);
  for (int n = 0; n < nodes; ++n) {
    std::vector<int> ordinal(nics_), seen;
    for (int i = 0; i < nics_; ++i) {
      const int sw = SwitchOf(n, i);
      auto at = std::find(seen.begin(), seen.end(), sw);
      ordinal[i] = static_cast<int>(at - seen.begin());
      if (at == seen.end()) seen.push_back(sw);
    }
    auto [it, added] = patterns.try_emplace(ordinal, static_cast<int>(locals_.size()));
    if (added) locals_.push_back(BuildLocal(n, ordinal));
    pattern_of_node_[n] = it->second;
  }
}

// Two GPUs of a node are two hops apart through the NVSwitch; another two-hop path
// would need a vertex next to both, which only a NIC they share is. Links out of a GPU
// go to its NVSwitch or its NICs, so that is the only shortest path.
bool Topology::OnlyNvswitchJoinsGpus() const {
  if (torus_ || nvlink_of_gpu_.size() != static_cast<size_t>(gpus_)) return false;
  for (int nic : nic_vertex_) {
    int gpus = 0;
    for (int id : OutLinks(nic)) gpus += role_[links_[id].dst] == Role::kGpu ? 1 : 0;
    if (gpus > 1) return false;
  }
  return true;
}

// Local ids: GPUs 0..g-1, the NVSwitch g, NICs g+1..g+nics, the node's switches by
// ordinal, then one spine (all spines are alike to a node).
int Topology::LocalId(int node, const Local& local, int v) const {
  const int g = gpus_per_node_;
  switch (role_[v]) {
    case Role::kGpu:
    case Role::kNvswitch:
    case Role::kNic:
      return node_of_[v] == node ? index_[v] : -1;
    case Role::kSwitch:
      for (int i = 0; i < nics_; ++i) {
        if (SwitchOf(node, i) == v) return g + 1 + nics_ + local.ordinal[i];
      }
      return -1;
    case Role::kSpine:
      return local.spine;
  }
  return -1;
}

Topology::Local Topology::BuildLocal(int node, const std::vector<int>& ordinal) const {
  Local local;
  local.ordinal = ordinal;
  const int switches = ordinal.empty() ? 0 : *std::max_element(ordinal.begin(), ordinal.end()) + 1;
  local.size = gpus_per_node_ + 1 + nics_ + switches + (spines_.empty() ? 0 : 1);
  if (!spines_.empty()) local.spine = local.size - 1;
  // The neighbourhood's vertices (global ids) by local id; -1 for an absent NVSwitch.
  std::vector<int> global(local.size, -1);
  for (int v = 0; v < Vertices(); ++v) {
    if (role_[v] == Role::kSpine) continue;
    const int id = LocalId(node, local, v);
    if (id >= 0) global[id] = v;
  }
  if (local.spine >= 0) global[local.spine] = spines_[0];
  std::vector<std::vector<int>> adjacent(local.size);
  for (int a = 0; a < local.size; ++a) {
    if (global[a] < 0) continue;
    for (int id : OutLinks(global[a])) {
      if (links_[id].cls == LinkClass::kIci) continue;  // chip to chip: TorusRoute
      const int b = LocalId(node, local, links_[id].dst);
      if (b >= 0) adjacent[a].push_back(b);
    }
  }
  local.hops.assign(static_cast<size_t>(local.size) * local.size, 255);
  for (int a = 0; a < local.size; ++a) {  // breadth-first from each local vertex
    std::vector<int> frontier{a};
    local.hops[a * local.size + a] = 0;
    for (size_t k = 0; k < frontier.size(); ++k) {
      const int u = frontier[k];
      for (int b : adjacent[u]) {
        if (local.hops[a * local.size + b] != 255) continue;
        local.hops[a * local.size + b] = static_cast<uint8_t>(local.At(a, u) + 1);
        frontier.push_back(b);
      }
    }
  }
  const int first_switch = gpus_per_node_ + 1 + nics_;
  local.to_nic.assign(local.size, 255);
  for (int a = 0; a < local.size; ++a) {
    for (int i = 0; i < nics_; ++i) {
      local.to_nic[a] = std::min<int>(local.to_nic[a], local.At(a, gpus_per_node_ + 1 + i));
    }
  }
  local.from_switch.assign(gpus_per_node_, 255);
  for (int d = 0; d < gpus_per_node_; ++d) {
    for (int j = 0; j < nics_; ++j) {
      local.from_switch[d] =
          std::min<int>(local.from_switch[d], local.At(first_switch + ordinal[j], d));
    }
  }
  return local;
}

uint64_t Topology::SharedSwitches(int m, int n) const {
  const int64_t pair = static_cast<int64_t>(m) << 32 | n;
  if (pair == shared_pair_) return shared_mask_;
  uint64_t mask = 0;
  for (int i = 0; i < nics_; ++i) {
    for (int j = 0; j < nics_; ++j) {
      if (SwitchOf(m, i) == SwitchOf(n, j)) mask |= uint64_t{1} << (i * nics_ + j);
    }
  }
  shared_pair_ = pair;
  shared_mask_ = mask;
  return mask;
}

// Every path into GPU dst's node enters through one of the node's switches; switches
// meet in two hops through a spine (through any node it would take four or more).
int Topology::StructuralHops(int v, int dst) const {
  constexpr int kFar = 1 << 20;
  const int g = gpus_per_node_, nd = dst / g;
  const Local& to = locals_[pattern_of_node_[nd]];
  const int here = LocalId(nd, to, v);
  if (here >= 0) return to.At(here, dst % g) == 255 ? -1 : to.At(here, dst % g);
  const int first_switch = g + 1 + nics_;
  int best = kFar;
  if (role_[v] == Role::kSwitch) {  // not one of nd's: up to a spine and down
    for (int o = first_switch; o < (to.spine < 0 ? to.size : to.spine); ++o) {
      best = std::min(best, 2 + to.At(o, dst % g));
    }
    return spines_.empty() || best >= kFar ? -1 : best;
  }
  const int m = node_of_[v];
  const Local& from = locals_[pattern_of_node_[m]];
  if (nics_ <= 8) {
    // Through a spine: to the nearest NIC, up to its switch, a spine, down to the switch
    // nearest dst; or through a switch both nodes reach (SharedSwitches), 2 hops fewer.
    const int a = index_[v], d = dst % g;
    if (!spines_.empty() && from.to_nic[a] != 255 && to.from_switch[d] != 255) {
      best = from.to_nic[a] + 3 + to.from_switch[d];
    }
    for (uint64_t mask = SharedSwitches(m, nd); mask != 0; mask &= mask - 1) {
      const int bit = __builtin_ctzll(mask), i = bit / nics_, j = bit % nics_;
      const int out = from.At(a, g + 1 + i), in = to.At(first_switch + to.ordinal[j], d);
      if (out != 255 && in != 255) best = std::min(best, out + 1 + in);
    }
    return best >= kFar ? -1 : best;
  }
  for (int i = 0; i < nics_; ++i) {
    const int to_nic = from.At(index_[v], g + 1 + i);
    if (to_nic == 255) continue;
    for (int j = 0; j < nics_; ++j) {
      const int same = SwitchOf(m, i) == SwitchOf(nd, j);
      if (!same && spines_.empty()) continue;
      const int in = to.At(first_switch + to.ordinal[j], dst % g);
      if (in != 255) best = std::min(best, to_nic + 1 + (same ? 0 : 2) + in);
    }
  }
  return best >= kFar ? -1 : best;
}

int Topology::Hops(int v, int dst) const {
  if (structural_ && torus_ && v < gpus_ && v / gpus_per_node_ == dst / gpus_per_node_) {
    return TorusHops(v, dst);
  }
  return structural_ ? StructuralHops(v, dst) : DistancesTo(dst)[v];
}

int Topology::TorusHops(int src, int dst) const {
  const auto& a = torus_coords_[src % gpus_per_node_];
  const auto& b = torus_coords_[dst % gpus_per_node_];
  int hops = 0;
  for (int d = 0; d < torus_spec_.Dims(); ++d) hops += std::abs(torus_spec_.Offset(d, a[d], b[d]));
  return hops;
}

void Topology::TorusRoute(int src, int dst, std::vector<int>* path) const {
  const int g = gpus_per_node_, base = src / g * g;
  const int shift = src / g * torus_links_per_slice_;
  int at = src % g;
  const auto& goal = torus_coords_[dst % g];
  for (int d = 0; d < torus_spec_.Dims(); ++d) {
    const int off = torus_spec_.Offset(d, torus_coords_[at][d], goal[d]);
    for (int k = 0; k < std::abs(off); ++k) {
      const int id = torus_out_[(at * kMaxTorusDims + d) * 2 + (off < 0 ? 1 : 0)] + shift;
      assert(id >= shift);
      path->push_back(id);
      at = links_[id].dst - base;
    }
  }
  assert(at == dst % g);
}

// The links out of `at` that lead one hop closer to GPU dst, in OutLinks order.
void Topology::NextHops(int at, int dst, std::vector<int>* next) const {
  next->clear();
  if (structural_ && role_[at] == Role::kSwitch) {
    SwitchNextHops(at, dst, next);
    return;
  }
  const int d = Hops(at, dst);
  if (structural_ && role_[at] == Role::kSpine) {
    // Down to one of dst's node's switches only: any other is farther (a spine's links
    // go to leaf k in leaf order).
    const int g = gpus_per_node_, nd = dst / g;
    const Local& to = locals_[pattern_of_node_[nd]];
    for (int i = 0; i < nics_; ++i) {
      const int sw = SwitchOf(nd, i);
      const int id = OutLinks(at)[index_[sw]];
      assert(links_[id].dst == sw);
      // Hops(sw, dst), as StructuralHops finds it (a switch of dst's node).
      const int hops = to.At(g + 1 + nics_ + to.ordinal[i], dst % g);
      if (hops != 255 && hops == d - 1 &&
          std::find(next->begin(), next->end(), id) == next->end()) {
        next->push_back(id);
      }
    }
    std::sort(next->begin(), next->end());
    return;
  }
  for (int id : OutLinks(at)) {
    const Link& l = links_[id];
    if (!l.failed && Hops(l.dst, dst) == d - 1) next->push_back(id);
  }
}

// A switch's links are its NICs' in port order, then its uplinks in spine order
// (BuildInterNode). Not attached to dst's node: up to any spine, all one hop closer. Else
// down to dst's node's NICs on it (another node's NIC leads back to a switch) or up to
// the spines, which are all alike to a node (one Hops for all).
void Topology::SwitchNextHops(int at, int dst, std::vector<int>* next) const {
  const int nd = dst / gpus_per_node_;
  bool attached = false;
  for (int j = 0; j < nics_ && !attached; ++j) attached = SwitchOf(nd, j) == at;
  const std::vector<int>& up = spines_.empty() ? no_uplinks_ : uplinks_[index_[at]];
  if (!attached) {
    next->assign(up.begin(), up.end());
    return;
  }
  const int d = Hops(at, dst);
  for (int j = 0; j < nics_; ++j) {
    if (SwitchOf(nd, j) != at) continue;
    const int id = down_link_of_nic_[nd * nics_ + j];
    if (Hops(links_[id].dst, dst) == d - 1) next->push_back(id);
  }
  if (!up.empty() && Hops(links_[up.front()].dst, dst) == d - 1) {
    next->insert(next->end(), up.begin(), up.end());
  }
}

const std::vector<int>& Topology::Route(int src, int dst, uint64_t flow_key) const {
  assert(src != dst && src < gpus_ && dst < gpus_);
  const uint64_t key = flow_key == 0 ? 0 : Fmix64(flow_key);
  // Memoise per (src, dst, key % 64): at most 64 variants per pair.
  const uint64_t memo =
      (static_cast<uint64_t>(src) << 38) | (static_cast<uint64_t>(dst) << 6) | (key % 64);
  auto it = routes_.find(memo);
  if (it != routes_.end()) return it->second;
  std::vector<int> path;
  AppendRoute(src, dst, flow_key, &path);
  return routes_.emplace(memo, std::move(path)).first->second;
}

void Topology::AppendRoute(int src, int dst, uint64_t flow_key, std::vector<int>* path) const {
  assert(src != dst && src < gpus_ && dst < gpus_);
  if (structural_ && torus_ && src / gpus_per_node_ == dst / gpus_per_node_) {
    TorusRoute(src, dst, path);
    return;
  }
  if (structural_ && nvswitch_routes_ && NodeOfGpu(src) == NodeOfGpu(dst)) {
    // The one shortest path (OnlyNvswitchJoinsGpus): up src's NVLink, down dst's (the
    // link back of dst's pair, AddBidirectional).
    path->push_back(nvlink_of_gpu_[src]);
    path->push_back(nvlink_of_gpu_[dst] ^ 1);
    return;
  }
  if (Hops(src, dst) < 0) return;
  const uint64_t h = (flow_key == 0 ? 0 : Fmix64(flow_key)) % 64;
  int at = src;
  std::vector<int>& next = next_scratch_;
  while (at != dst) {
    NextHops(at, dst, &next);
    assert(!next.empty());
    // Destination-based choice (InfiniBand's d-mod-k static routing, which numbers the
    // destinations by their leaf port: the hosts of one leaf take different uplinks),
    // shifted by the flow key: deterministic, and spreads traffic to different GPUs over
    // the uplinks. By GPU number instead, the GPUs of one rail (the same local rank on
    // every node) would share 1 / gpus_per_node of a rail switch's uplinks.
    const uint64_t d = port_of_gpu_[dst] >= 0 ? port_of_gpu_[dst] : dst;
    const int chosen = next[(d + h) % next.size()];
    path->push_back(chosen);
    at = links_[chosen].dst;
  }
}

}  // namespace meshsim

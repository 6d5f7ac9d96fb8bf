#include "sim/hw/topology.h"

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/reverse_graph.hpp>
#include <cassert>
#include <cmath>
#include <limits>
#include <map>

#include "sim/core/huge_pages.h"

namespace meshsim {
namespace {

using BoostGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS>;

constexpr double kGB = 1e9;

uint64_t Mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

}  // namespace

struct Topology::Graph {
  BoostGraph graph;
};

const char* LinkClassName(LinkClass c) {
  switch (c) {
    case LinkClass::kNvlink:
      return "nvlink";
    case LinkClass::kGpuNic:
      return "gpu-nic (pcie)";
    case LinkClass::kNicSwitch:
      return "nic up (to switch)";
    case LinkClass::kSwitchNic:
      return "nic down (from switch)";
    case LinkClass::kUplink:
      return "leaf-spine up";
    case LinkClass::kDownlink:
      return "spine-leaf down";
    case LinkClass::kIci:
      return "ici";
  }
  return "?";
}

int Topology::AddVertex(std::string name, Role role, int node, int index) {
  vertex_names_.push_back(std::move(name));
  out_links_.emplace_back();
  role_.push_back(role);
  node_of_.push_back(node);
  index_.push_back(index);
  return static_cast<int>(vertex_names_.size()) - 1;
}

// Arrays of a large fabric: first touched 2 MiB at a time (huge_pages.h).
void Topology::Reserve(int64_t vertices, int64_t links) {
  ReserveHuge(vertex_names_, vertices);
  ReserveHuge(out_links_, vertices);
  ReserveHuge(role_, vertices);
  ReserveHuge(node_of_, vertices);
  ReserveHuge(index_, vertices);
  ReserveHuge(links_, links);
  ReserveHuge(link_names_, links / 2);
}

void Topology::AddBidirectional(int a, int b, double bps, double latency_s, LinkClass ab,
                                LinkClass ba, std::string name) {
  for (const auto& [s, d, cls] : {std::tuple{a, b, ab}, std::tuple{b, a, ba}}) {
    out_links_[s].push_back(static_cast<int>(links_.size()));
    links_.push_back(Link{s, d, bps, latency_s, cls, false});
  }
  link_names_.push_back(std::move(name));
}

// One slice's ICI links: for each chip (by physical index) and dimension, the link pair
// to its + neighbour, where there is one. Records each link's id per (rank, dim, sign).
void Topology::BuildTorus(const ClusterSpec& c, int node) {
  const TorusSpec& t = c.intra_node.torus;
  const int g = c.gpus_per_node;
  const double bw = c.intra_node.gbps_per_link * kGB;
  const double lat = c.intra_node.latency_us * 1e-6;
  const int first_link = static_cast<int>(links_.size());
  const std::string slice = "slice" + std::to_string(node);
  static const char* const kAxis[] = {"x", "y", "z"};
  for (int chip = 0; chip < g; ++chip) {
    const std::array<int, kMaxTorusDims> at = t.CoordsOfChip(chip);
    for (int d = 0; d < t.Dims(); ++d) {
      const int n = t.Size(d);
      if (n < 2 || (at[d] == n - 1 && !t.Ring(d))) continue;
      std::array<int, kMaxTorusDims> next = at;
      next[d] = (at[d] + 1) % n;
      const int a = torus_rank_of_chip_[chip];
      const int b = torus_rank_of_chip_[t.ChipAt(next)];
      if (node == 0) {
        const int id = static_cast<int>(links_.size());
        torus_out_[(a * kMaxTorusDims + d) * 2] = id;          // a -> b: a's + link
        torus_out_[(b * kMaxTorusDims + d) * 2 + 1] = id + 1;  // b -> a: b's - link
      }
      AddBidirectional(node * g + a, node * g + b, bw, lat, LinkClass::kIci, LinkClass::kIci,
                       slice + ".chip" + std::to_string(chip) + "." + kAxis[d] + "+");
    }
  }
  torus_links_per_slice_ = static_cast<int>(links_.size()) - first_link;
}

void Topology::BuildIntraNode(const ClusterSpec& c) {
  const int g = c.gpus_per_node;
  if (c.intra_node.kind == IntraNodeKind::kTorus) {
    const TorusSpec& t = c.intra_node.torus;
    torus_ = true;
    torus_spec_ = t;
    torus_coords_.resize(g);
    torus_rank_of_chip_.assign(g, -1);
    torus_out_.assign(static_cast<size_t>(g) * kMaxTorusDims * 2, -1);
    for (int l = 0; l < g; ++l) {
      torus_coords_[l] = t.CoordsOfRank(l);
      torus_rank_of_chip_[t.ChipAt(torus_coords_[l])] = l;
    }
    for (int n = 0; n < c.nodes; ++n) BuildTorus(c, n);
    return;
  }
  const double bw = c.intra_node.gbps_per_gpu * kGB;
  const double lat = c.intra_node.latency_us * 1e-6;
  for (int n = 0; n < c.nodes; ++n) {
    const int first = n * g;  // GPU vertices are 0..gpus-1
    const std::string node = "node" + std::to_string(n);
    switch (c.intra_node.kind) {
      case IntraNodeKind::kNvswitch: {
        if (g == 1) break;
        const int sw = AddVertex(node + ".nvswitch", Role::kNvswitch, n, g);
        for (int l = 0; l < g; ++l) {
          AddBidirectional(first + l, sw, bw, lat / 2, LinkClass::kNvlink, LinkClass::kNvlink,
                           node + ".gpu" + std::to_string(l) + ".nvlink");
        }
        break;
      }
      case IntraNodeKind::kRing:
        for (int l = 0; l < g && g > 1; ++l) {
          const int next = (l + 1) % g;
          if (g == 2 && l == 1) break;
          AddBidirectional(first + l, first + next, g == 2 ? bw : bw / 2, lat, LinkClass::kNvlink,
                           LinkClass::kNvlink,
                           node + ".gpu" + std::to_string(l) + "-gpu" + std::to_string(next));
        }
        break;
      case IntraNodeKind::kFullMesh:
        for (int a = 0; a < g; ++a) {
          for (int b = a + 1; b < g; ++b) {
            AddBidirectional(first + a, first + b, bw / (g - 1), lat, LinkClass::kNvlink,
                             LinkClass::kNvlink,
                             node + ".gpu" + std::to_string(a) + "-gpu" + std::to_string(b));
          }
        }
        break;
      case IntraNodeKind::kTorus:  // BuildTorus, above
        break;
    }
  }
}

void Topology::BuildInterNode(const ClusterSpec& c) {
  nic_of_gpu_.assign(gpus_, -1);
  port_of_gpu_.assign(gpus_, -1);
  if (c.nodes == 1) return;
  nics_ = c.inter_node.nics_per_node;
  const InterNodeSpec& in = c.inter_node;
  const int g = c.gpus_per_node;
  const double nic_bw = in.gbps_per_nic * kGB;
  const double lat = in.latency_us * 1e-6;
  // NICs and their GPUs.
  std::vector<int> nics;  // vertex per (node, nic)
  for (int n = 0; n < c.nodes; ++n) {
    for (int i = 0; i < in.nics_per_node; ++i) {
      nics.push_back(AddVertex("node" + std::to_string(n) + ".nic" + std::to_string(i), Role::kNic,
                               n, g + 1 + i));
    }
    for (int l = 0; l < g; ++l) {
      const int i = l * in.nics_per_node / g;
      const int nic = nics[n * in.nics_per_node + i];
      nic_of_gpu_[n * g + l] = nic;
      AddBidirectional(n * g + l, nic, nic_bw, 0, LinkClass::kGpuNic, LinkClass::kGpuNic,
                       "node" + std::to_string(n) + ".gpu" + std::to_string(l) + ".pcie");
    }
  }
  nic_vertex_ = nics;
  switch_of_nic_.assign(nics.size(), -1);
  std::unordered_map<int, int> ports;  // NICs attached so far, by switch vertex
  auto attach = [&](int nic_index, int sw) {
    const int n = nic_index / in.nics_per_node, i = nic_index % in.nics_per_node;
    switch_of_nic_[nic_index] = sw;
    const int port = ports[sw]++;
    for (int l = 0; l < g; ++l) {
      if (l * in.nics_per_node / g == i) port_of_gpu_[n * g + l] = port;
    }
    AddBidirectional(nics[nic_index], sw, nic_bw, lat / 4, LinkClass::kNicSwitch,
                     LinkClass::kSwitchNic,
                     "node" + std::to_string(n) + ".nic" + std::to_string(i));
  };
  if (in.kind == InterNodeKind::kSingleSwitch) {
    const int sw = AddVertex("switch", Role::kSwitch, -1, 0);
    leaves_.push_back(sw);
    for (int k = 0; k < static_cast<int>(nics.size()); ++k) attach(k, sw);
    return;
  }
  // Leaves (fat tree) or rail switches, each with switch_ports NIC ports.
  std::vector<int>& leaves = leaves_;
  if (in.kind == InterNodeKind::kFatTree) {
    const int count = (static_cast<int>(nics.size()) + in.switch_ports - 1) / in.switch_ports;
    for (int k = 0; k < count; ++k) {
      leaves.push_back(AddVertex("leaf" + std::to_string(k), Role::kSwitch, -1, k));
    }
    for (int k = 0; k < static_cast<int>(nics.size()); ++k) attach(k, leaves[k / in.switch_ports]);
  } else {
    const int groups = (c.nodes + in.switch_ports - 1) / in.switch_ports;
    for (int r = 0; r < in.nics_per_node; ++r) {
      for (int grp = 0; grp < groups; ++grp) {
        const int k = static_cast<int>(leaves.size());
        leaves.push_back(AddVertex("rail" + std::to_string(r) + "." + std::to_string(grp),
                                   Role::kSwitch, -1, k));
      }
    }
    for (int k = 0; k < static_cast<int>(nics.size()); ++k) {
      const int n = k / in.nics_per_node, r = k % in.nics_per_node;
      attach(k, leaves[r * groups + n / in.switch_ports]);
    }
  }
  if (leaves.size() == 1) return;
  const int uplinks =
      std::max(1, static_cast<int>(std::ceil(in.switch_ports / in.oversubscription)));
  std::vector<int>& spines = spines_;
  for (int s = 0; s < uplinks; ++s) {
    spines.push_back(AddVertex("spine" + std::to_string(s), Role::kSpine, -1, s));
  }
  for (int leaf : leaves) {
    for (int s = 0; s < uplinks; ++s) {
      AddBidirectional(leaf, spines[s], nic_bw, lat / 4, LinkClass::kUplink, LinkClass::kDownlink,
                       VertexName(leaf) + ".spine" + std::to_string(s));
    }
  }
}

Result<std::shared_ptr<const Topology>> Topology::Build(const ClusterSpec& cluster, bool searches) {
  const ClusterSpec c = cluster.NetworkView();
  auto t = std::shared_ptr<Topology>(new Topology());
  t->gpus_ = c.TotalGpus();
  t->gpus_per_node_ = c.gpus_per_node;
  const TorusSpec& torus = c.intra_node.torus;
  int64_t vertices = 0, links = 0;
  Count(c, &vertices, &links);
  t->Reserve(vertices, links);
  for (int gpu = 0; gpu < t->gpus_; ++gpu) {
    const int node = gpu / c.gpus_per_node, l = gpu % c.gpus_per_node;
    std::string name = "node" + std::to_string(node) + ".gpu" + std::to_string(l);
    if (c.Torus()) {
      name = "slice" + std::to_string(node) + ".chip" +
             std::to_string(torus.ChipAt(torus.CoordsOfRank(l)));
    }
    t->AddVertex(std::move(name), Role::kGpu, node, l);
  }
  t->BuildIntraNode(c);
  t->BuildInterNode(c);
  // What-if link changes.
  for (size_t i = 0; i < c.what_if.links.size(); ++i) {
    const LinkChange& change = c.what_if.links[i];
    bool found = false;
    for (size_t k = 0; k < t->link_names_.size(); ++k) {
      if (t->link_names_[k] != change.link) continue;
      found = true;
      for (Link* l : {&t->links_[2 * k], &t->links_[2 * k + 1]}) {
        if (change.failed) {
          l->failed = true;
        } else {
          l->bytes_per_s *= change.bandwidth_factor;
        }
      }
    }
    if (!found) {
      InputError e;
      e.key = "cluster.what_if.links[" + std::to_string(i) + "].link";
      e.message = "no link named '" + change.link +
                  "' (names look like node0.gpu3.nvlink, node0.gpu3.pcie, node1.nic2, "
                  "leaf0.spine3, slice0.chip5.x+)";
      return e;
    }
  }
  if (!searches &&
      std::none_of(t->links_.begin(), t->links_.end(), [](const Link& l) { return l.failed; })) {
    // Connected by construction: every GPU has a NIC, every switch a spine.
    t->structural_ = true;
    t->IndexStructure();
    return std::shared_ptr<const Topology>(t);
  }
  t->graph_ = std::make_shared<Graph>();
  t->graph_->graph = BoostGraph(t->Vertices());
  for (const Link& l : t->links_) {
    if (!l.failed) boost::add_edge(l.src, l.dst, t->graph_->graph);
  }
  // Every GPU must reach every other over surviving links: all reach GPU 0, and GPU 0
  // reaches all (a forward search from GPU 0).
  if (t->gpus_ > 1) {
    const std::vector<int>& to0 = t->DistancesTo(0);
    std::vector<int> from0(t->Vertices(), -1);
    from0[0] = 0;
    boost::breadth_first_search(t->graph_->graph, boost::vertex(0, t->graph_->graph),
                                boost::visitor(boost::make_bfs_visitor(
                                    boost::record_distances(from0.data(), boost::on_tree_edge()))));
    for (int gpu = 1; gpu < t->gpus_; ++gpu) {
      if (to0[gpu] < 0 || from0[gpu] <= 0) {
        InputError e;
        e.key = "cluster";
        e.message = "the network is disconnected: GPU " + std::to_string(gpu) + " (" +
                    t->VertexName(gpu) + ") and GPU 0 cannot reach each other" +
                    (c.what_if.links.empty() ? "" : " after the what_if link failures");
        return e;
      }
    }
  }
  return std::shared_ptr<const Topology>(t);
}

// Hop counts from every vertex to `dst` over surviving links (-1: unreachable), by a
// breadth-first search on the reversed graph.
const std::vector<int>& Topology::DistancesTo(int dst) const {
  auto it = distances_.find(dst);
  if (it != distances_.end()) return it->second;
  const auto reversed = boost::make_reverse_graph(graph_->graph);
  std::vector<int> dist(Vertices(), std::numeric_limits<int>::max());
  dist[dst] = 0;
  boost::breadth_first_search(reversed, boost::vertex(dst, reversed),
                              boost::visitor(boost::make_bfs_visitor(
                                  boost::record_distances(dist.data(), boost::on_tree_edge()))));
  for (int& d : dist) {
    if (d == std::numeric_limits<int>::max()) d = -1;
  }
  return distances_.emplace(dst, std::move(dist)).first->second;
}

// One pattern per distinct way a node's NICs share switches.
void Topology::IndexStructure() {
  uplinks_.assign(leaves_.size(), {});
  for (int leaf : leaves_) {
    for (int id : out_links_[leaf]) {
      if (role_[links_[id].dst] == Role::kSpine) uplinks_[index_[leaf]].push_back(id);
    }
  }
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
    for (int id : out_links_[global[a]]) {
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

// The links out of `at` that lead one hop closer to GPU dst, in out_links_ order.
void Topology::NextHops(int at, int dst, std::vector<int>* next) const {
  next->clear();
  if (structural_ && role_[at] == Role::kSwitch && !spines_.empty()) {
    const int nd = dst / gpus_per_node_;
    bool attached = false;
    for (int j = 0; j < nics_ && !attached; ++j) attached = SwitchOf(nd, j) == at;
    if (!attached) {  // up to any spine: all are one hop closer, nothing else is
      next->assign(uplinks_[index_[at]].begin(), uplinks_[index_[at]].end());
      return;
    }
  }
  const int d = Hops(at, dst);
  if (structural_ && role_[at] == Role::kSpine) {
    // Down to one of dst's node's switches only: any other is farther (a spine's links
    // go to leaf k in leaf order).
    for (int i = 0; i < nics_; ++i) {
      const int sw = SwitchOf(dst / gpus_per_node_, i);
      const int id = out_links_[at][index_[sw]];
      assert(links_[id].dst == sw);
      if (Hops(sw, dst) == d - 1 && std::find(next->begin(), next->end(), id) == next->end()) {
        next->push_back(id);
      }
    }
    std::sort(next->begin(), next->end());
    return;
  }
  // From a switch, another node's NIC is never closer (it leads back to a switch): skip
  // it without counting its hops.
  const bool skip_nics = structural_ && role_[at] == Role::kSwitch;
  for (int id : out_links_[at]) {
    const Link& l = links_[id];
    if (skip_nics && role_[l.dst] == Role::kNic && node_of_[l.dst] != dst / gpus_per_node_) {
      continue;
    }
    if (!l.failed && Hops(l.dst, dst) == d - 1) next->push_back(id);
  }
}

const std::vector<int>& Topology::Route(int src, int dst, uint64_t flow_key) const {
  assert(src != dst && src < gpus_ && dst < gpus_);
  const uint64_t key = flow_key == 0 ? 0 : Mix(flow_key);
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
  if (Hops(src, dst) < 0) return;
  const uint64_t h = (flow_key == 0 ? 0 : Mix(flow_key)) % 64;
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

namespace meshsim {

void Topology::Count(const ClusterSpec& cluster, int64_t* vertices, int64_t* links) {
  const ClusterSpec c = cluster.NetworkView();  // as Build sees it
  const int64_t g = c.gpus_per_node, nodes = c.nodes, gpus = g * nodes;
  int64_t intra = 0;  // physical links per node
  bool nvswitch = false;
  if (g > 1) {
    switch (c.intra_node.kind) {
      case IntraNodeKind::kNvswitch:
        intra = g;
        nvswitch = true;
        break;
      case IntraNodeKind::kRing:
        intra = g == 2 ? 1 : g;
        break;
      case IntraNodeKind::kFullMesh:
        intra = g * (g - 1) / 2;
        break;
      case IntraNodeKind::kTorus: {
        const TorusSpec& t = c.intra_node.torus;
        for (int d = 0; d < t.Dims(); ++d) intra += g / t.Size(d) * t.LinksPerLine(d);
        break;
      }
    }
  }
  *vertices = gpus + (nvswitch ? nodes : 0);
  int64_t physical = intra * nodes;
  if (nodes > 1) {
    const InterNodeSpec& in = c.inter_node;
    const int64_t nics = nodes * in.nics_per_node, ports = std::max(1, in.switch_ports);
    int64_t leaves = 1;
    if (in.kind == InterNodeKind::kFatTree) leaves = (nics + ports - 1) / ports;
    if (in.kind == InterNodeKind::kRailOptimized) {
      leaves = in.nics_per_node * ((nodes + ports - 1) / ports);
    }
    const int64_t spines =
        leaves > 1 ? std::max<int64_t>(1, std::ceil(in.switch_ports / in.oversubscription)) : 0;
    *vertices += nics + leaves + spines;
    physical += gpus + nics + leaves * spines;
  }
  *links = 2 * physical;
}

}  // namespace meshsim

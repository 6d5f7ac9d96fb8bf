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
#include "sim/hw/nics.h"

namespace meshsim {
namespace {

using BoostGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS>;

constexpr double kGB = 1e9;

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

int Topology::AddVertex(Role role, int node, int index) {
  role_.push_back(role);
  node_of_.push_back(node);
  index_.push_back(index);
  return static_cast<int>(role_.size()) - 1;
}

// Arrays of a large fabric: first touched 2 MiB at a time (huge_pages.h).
void Topology::Reserve(int64_t vertices, int64_t links) {
  ReserveHuge(role_, vertices);
  ReserveHuge(node_of_, vertices);
  ReserveHuge(index_, vertices);
  ReserveHuge(links_, links);
}

void Topology::AddBidirectional(int a, int b, double bps, double latency_s, LinkClass ab,
                                LinkClass ba) {
  for (const auto& [s, d, cls] : {std::tuple{a, b, ab}, std::tuple{b, a, ba}}) {
    links_.push_back(Link{s, d, bps, latency_s, cls, false});
  }
}

// A counting sort of the links by source, in id order within each.
void Topology::IndexOutLinks() {
  out_first_.assign(static_cast<size_t>(Vertices()) + 1, 0);
  for (const Link& l : links_) ++out_first_[l.src + 1];
  for (int v = 0; v < Vertices(); ++v) out_first_[v + 1] += out_first_[v];
  ReserveHuge(out_ids_, static_cast<int64_t>(links_.size()));
  out_ids_.resize(links_.size());
  std::vector<int> next(out_first_.begin(), out_first_.end() - 1);
  for (size_t id = 0; id < links_.size(); ++id)
    out_ids_[next[links_[id].src]++] = static_cast<int>(id);
}

// One slice's ICI links: for each chip (by physical index) and dimension, the link pair
// to its + neighbour, where there is one. Records each link's id per (rank, dim, sign).
void Topology::BuildTorus(const ClusterSpec& c, int node) {
  const TorusSpec& t = c.intra_node.torus;
  const int g = c.gpus_per_node;
  const double bw = c.intra_node.gbps_per_link * kGB;
  const double lat = c.intra_node.latency_us * 1e-6;
  const int first_link = static_cast<int>(links_.size());
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
      AddBidirectional(node * g + a, node * g + b, bw, lat, LinkClass::kIci, LinkClass::kIci);
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
    switch (c.intra_node.kind) {
      case IntraNodeKind::kNvswitch: {
        if (g == 1) break;
        const int sw = AddVertex(Role::kNvswitch, n, g);
        nvlink_of_gpu_.resize(gpus_, -1);
        for (int l = 0; l < g; ++l) {
          nvlink_of_gpu_[first + l] = static_cast<int>(links_.size());
          AddBidirectional(first + l, sw, bw, lat / 2, LinkClass::kNvlink, LinkClass::kNvlink);
        }
        break;
      }
      case IntraNodeKind::kRing:
        for (int l = 0; l < g && g > 1; ++l) {
          const int next = (l + 1) % g;
          if (g == 2 && l == 1) break;
          AddBidirectional(first + l, first + next, g == 2 ? bw : bw / 2, lat, LinkClass::kNvlink,
                           LinkClass::kNvlink);
        }
        break;
      case IntraNodeKind::kFullMesh:
        for (int a = 0; a < g; ++a) {
          for (int b = a + 1; b < g; ++b) {
            AddBidirectional(first + a, first + b, bw / (g - 1), lat, LinkClass::kNvlink,
                             LinkClass::kNvlink);
          }
        }
        break;
      case IntraNodeKind::kTorus:  // BuildTorus, above
        break;
    }
  }
}

namespace {

// GPU l's first NIC (its port numbers it on its switch): floor(l * nics / g), or l * k
// on a node with k NICs per GPU.
int FirstNic(const InterNodeSpec& in, int gpus_per_node, int l) {
  const int k = NicsPerGpu(in, gpus_per_node);
  return k > 1 ? l * k : l * in.nics_per_node / gpus_per_node;
}

}  // namespace

std::vector<int> Topology::AddNics(const ClusterSpec& c) {
  const InterNodeSpec& in = c.inter_node;
  const int g = c.gpus_per_node, k = NicsPerGpu(in, g);
  const double nic_bw = in.gbps_per_nic * kGB;
  std::vector<int> nics;  // vertex per (node, nic)
  for (int n = 0; n < c.nodes; ++n) {
    for (int i = 0; i < in.nics_per_node; ++i) {
      nics.push_back(AddVertex(Role::kNic, n, g + 1 + i));
    }
    for (int l = 0; l < g; ++l) {
      const int first = n * in.nics_per_node + FirstNic(in, g, l);
      nic_of_gpu_[n * g + l] = nics[first];
      for (int j = 0; j < k; ++j) {
        AddBidirectional(n * g + l, nics[first + j], nic_bw, 0, LinkClass::kGpuNic,
                         LinkClass::kGpuNic);
      }
    }
  }
  return nics;
}

void Topology::BuildInterNode(const ClusterSpec& c) {
  nic_of_gpu_.assign(gpus_, -1);
  port_of_gpu_.assign(gpus_, -1);
  if (c.nodes == 1) return;
  nics_ = c.inter_node.nics_per_node;
  const InterNodeSpec& in = c.inter_node;
  const int g = c.gpus_per_node;
  nics_per_gpu_ = NicsPerGpu(in, g);
  switch_kind_ = in.kind;
  const double nic_bw = in.gbps_per_nic * kGB;
  const double lat = in.latency_us * 1e-6;
  const std::vector<int> nics = AddNics(c);
  nic_vertex_ = nics;
  switch_of_nic_.assign(nics.size(), -1);
  port_of_nic_.assign(nics.size(), -1);
  std::unordered_map<int, int> ports;  // NICs attached so far, by switch vertex
  auto attach = [&](int nic_index, int sw) {
    const int n = nic_index / in.nics_per_node, i = nic_index % in.nics_per_node;
    switch_of_nic_[nic_index] = sw;
    const int port = ports[sw]++;
    port_of_nic_[nic_index] = port;
    for (int l = 0; l < g; ++l) {
      if (FirstNic(in, g, l) == i) port_of_gpu_[n * g + l] = port;
    }
    AddBidirectional(nics[nic_index], sw, nic_bw, lat / 4, LinkClass::kNicSwitch,
                     LinkClass::kSwitchNic);
  };
  if (in.kind == InterNodeKind::kSingleSwitch) {
    const int sw = AddVertex(Role::kSwitch, -1, 0);
    leaves_.push_back(sw);
    for (int k = 0; k < static_cast<int>(nics.size()); ++k) attach(k, sw);
    return;
  }
  // Leaves (fat tree) or rail switches, each with switch_ports NIC ports.
  std::vector<int>& leaves = leaves_;
  if (in.kind == InterNodeKind::kFatTree) {
    const int count = (static_cast<int>(nics.size()) + in.switch_ports - 1) / in.switch_ports;
    for (int k = 0; k < count; ++k) {
      leaves.push_back(AddVertex(Role::kSwitch, -1, k));
    }
    for (int k = 0; k < static_cast<int>(nics.size()); ++k) attach(k, leaves[k / in.switch_ports]);
  } else {
    const int groups = (c.nodes + in.switch_ports - 1) / in.switch_ports;
    rail_groups_ = groups;
    for (int r = 0; r < in.nics_per_node; ++r) {
      for (int grp = 0; grp < groups; ++grp) {
        const int k = static_cast<int>(leaves.size());
        leaves.push_back(AddVertex(Role::kSwitch, -1, k));
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
    spines.push_back(AddVertex(Role::kSpine, -1, s));
  }
  for (int leaf : leaves) {
    for (int s = 0; s < uplinks; ++s) {
      AddBidirectional(leaf, spines[s], nic_bw, lat / 4, LinkClass::kUplink, LinkClass::kDownlink);
    }
  }
}

int Topology::LinkFrom(int a, int b) const {
  for (int id : OutLinks(a)) {
    if (links_[id].dst == b) return id;
  }
  return -1;
}

void Topology::AppendRailRoute(int src, int dst, int nic, std::vector<int>* path) const {
  const int m = NodeOfGpu(src), n = NodeOfGpu(dst);
  assert(m != n && nic >= 0 && nic < nics_);
  const int out = nic_vertex_[m * nics_ + nic], in = nic_vertex_[n * nics_ + nic];
  const int up = switch_of_nic_[m * nics_ + nic], down = switch_of_nic_[n * nics_ + nic];
  std::array<int, 6> hops{LinkFrom(src, out), LinkFrom(out, up), -1, -1,
                          LinkFrom(down, in), LinkFrom(in, dst)};
  const bool direct = up == down;  // one switch serves both NICs
  if (!direct && structural_ && !spines_.empty()) {
    const std::vector<int>& spines = uplinks_[index_[up]];
    hops[2] = spines[port_of_nic_[n * nics_ + nic] % spines.size()];
    hops[3] = LinkFrom(links_[hops[2]].dst, down);
  }
  const bool ends = hops[0] >= 0 && hops[1] >= 0 && hops[4] >= 0 && hops[5] >= 0;
  if (!structural_ || !ends || (!direct && hops[3] < 0)) {
    AppendRoute(src, dst, 0, path);
    return;
  }
  for (int id : hops) {
    if (id >= 0) path->push_back(id);
  }
}

Result<std::shared_ptr<const Topology>> Topology::Build(const ClusterSpec& cluster, bool searches) {
  const ClusterSpec c = cluster.NetworkView();
  auto t = std::shared_ptr<Topology>(new Topology());
  t->gpus_ = c.TotalGpus();
  t->gpus_per_node_ = c.gpus_per_node;
  int64_t vertices = 0, links = 0;
  Count(c, &vertices, &links);
  t->Reserve(vertices, links);
  for (int gpu = 0; gpu < t->gpus_; ++gpu) {
    t->AddVertex(Role::kGpu, gpu / c.gpus_per_node, gpu % c.gpus_per_node);
  }
  t->BuildIntraNode(c);
  t->BuildInterNode(c);
  t->IndexOutLinks();
  // What-if link changes.
  for (size_t i = 0; i < c.what_if.links.size(); ++i) {
    const LinkChange& change = c.what_if.links[i];
    bool found = false;
    for (size_t k = 0; 2 * k < t->links_.size(); ++k) {
      if (t->LinkName(static_cast<int>(2 * k)) != change.link) continue;
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
    // GPU-NIC links: one per GPU, or one per NIC where GPUs own several.
    physical += nodes * std::max<int64_t>(g, in.nics_per_node) + nics + leaves * spines;
  }
  *links = 2 * physical;
}

}  // namespace meshsim

// The cluster as a directed graph of devices and links (Boost.Graph).
//
// Vertices: GPUs, one NVSwitch per node (intra_node.kind nvswitch; ring and full_mesh
// connect GPUs directly), NICs, and the scale-out switches: leaves and spines
// (fat_tree), rail switches and spines (rail_optimized), or one switch (single_switch).
// Every physical link is two directed links with their own bandwidth and latency.
//
//  - nvswitch: GPU <-> switch at gbps_per_gpu; ring: GPU <-> next GPU at gbps_per_gpu/2;
//    full_mesh: GPU <-> each other GPU at gbps_per_gpu/(g-1).
//  - GPU l of a node attaches to NIC floor(l * nics / g) at gbps_per_nic; on a node with
//    more NICs than GPUs (nics = k g) to its own k NICs l k .. l k + k - 1, each by its
//    own link ("node0.gpu3.pcie", "node0.gpu3.pcie1", ...), as on OCI's BM.GPU4.8 (two
//    100 Gb/s NICs per A100).
//  - fat_tree: a leaf serves `switch_ports` NICs of consecutive nodes; each leaf has
//    ceil(switch_ports / oversubscription) uplinks of gbps_per_nic, one to each spine.
//  - rail_optimized: NIC i of up to switch_ports nodes share rail switch i; rail
//    switches connect to spines as leaves do.
// Latencies: a GPU-switch-GPU path inside a node sums to intra_node.latency_us, a
// GPU-NIC-leaf-spine-leaf-NIC-GPU path to inter_node.latency_us.
//
// Routing: shortest paths by hop count, over links that have not failed; among equal
// next hops the choice is destination-based (InfiniBand fat trees' static d-mod-k
// routing: next hop (destination + flow key) mod count), so it is deterministic and
// spreads the traffic to different GPUs over the uplinks.
//
// Torus (intra_node.kind torus, sim/hw/torus.h): a node is a TPU slice; its chips are
// vertices "slice<s>.chip<c>" (c: the physical index x + X(y + Yz) of the chip that runs
// GPU index l of the slice, by the placement) with one link pair per neighbouring pair of
// chips along each dimension, named "slice<s>.chip<c>.x+" (and y+, z+) after the chip on
// its - side; a wrap-around link is named after the last chip ("slice0.chip3.x+" joins
// x = 3 to x = 0 on a 4-wide ring). Each link carries gbps_per_link per direction and
// latency_us. Routes between chips of one slice are dimension-order (x, then y, then z),
// each the shorter way round its ring (ties: the + way), computed from the coordinates.
// GPU l of a slice uses NIC floor(l * nics / chips) for the DCN (inter_node), as GPUs do.
//
// Hop counts: with no failed link they are a function of the structure (every node is
// alike up to which of its NICs share a switch, and switches meet through the spines),
// computed from one small table per such pattern: no per-destination search, so a route
// costs the same on 100,000 GPUs as on 100. With a failed link, breadth-first searches
// over the graph of surviving links (memoised per destination). Both give the same
// routes (tests/unit/topology_test.cc compares them).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/core/status.h"
#include "sim/hw/cluster_spec.h"

namespace meshsim {

// kIci: a TPU slice's chip-to-chip links (intra_node.kind torus).
enum class LinkClass : uint8_t {
  kNvlink,
  kGpuNic,
  kNicSwitch,
  kSwitchNic,
  kUplink,
  kDownlink,
  kIci
};
constexpr int kLinkClassCount = 7;
const char* LinkClassName(LinkClass c);

struct Link {
  int src = 0;  // vertex
  int dst = 0;
  double bytes_per_s = 0;  // nominal bandwidth times the what-if factor
  double latency_s = 0;
  LinkClass cls = LinkClass::kNvlink;
  bool failed = false;
};

class Topology {
 public:
  // Builds the graph of cluster.NetworkView() (an NVLink domain of several nodes is one
  // node here, one NVSwitch joining its GPUs); applies cluster.what_if.links (an unknown
  // link name is an error). `searches`: hop counts from breadth-first searches even with
  // no link failed (the reference the structural hop counts are tested against).
  static Result<std::shared_ptr<const Topology>> Build(const ClusterSpec& cluster,
                                                       bool searches = false);

  int Gpus() const { return gpus_; }
  int Vertices() const { return static_cast<int>(role_.size()); }
  const std::vector<Link>& links() const { return links_; }
  // Name of the physical link that directed link `link` belongs to (both directions
  // share it): what cluster.what_if.links names ("node0.gpu3.nvlink", "node0.gpu3.pcie",
  // "node1.nic2", "leaf0.spine3", "slice0.chip5.x+", "node0.gpu1-gpu2"). Names are made
  // when asked for, from the structure (none is stored).
  std::string LinkName(int link) const;
  // "node0.gpu3", "slice0.chip5", "node0.nvswitch", "node0.nic2", "leaf4", "rail2.0",
  // "switch", "spine7".
  std::string VertexName(int v) const;
  int NodeOfGpu(int gpu) const { return gpu / gpus_per_node_; }
  int NicOfGpu(int gpu) const { return nic_of_gpu_[gpu]; }  // a vertex
  // The node of a GPU, NVSwitch or NIC vertex; -1 for a switch.
  int NodeOfVertex(int v) const { return node_of_[v]; }

  // Links from GPU src to GPU dst (src != dst), or empty if no path survives. Routes
  // are memoised; `flow_key` selects among equal-cost paths.
  const std::vector<int>& Route(int src, int dst, uint64_t flow_key) const;
  // The same route, appended to `path` and not memoised. Not thread-safe (scratch).
  void AppendRoute(int src, int dst, uint64_t flow_key, std::vector<int>* path) const;
  // A route between nodes on one rail: from GPU src out through NIC `nic` of its node,
  // into GPU dst through NIC `nic` of dst's node (a spine between them chosen d-mod-k by
  // that NIC's switch port). NCCL's channels across nodes each use one NIC per node
  // (src/graph/topo.cc, ncclTopoGetLocalNet), which the flow collectives name where a
  // node has more NICs than GPUs. Appends AppendRoute's route instead where a link has
  // failed or either GPU is not attached to its node's NIC `nic`.
  // Precondition: src and dst on different nodes, 0 <= nic < nics per node.
  void AppendRailRoute(int src, int dst, int nic, std::vector<int>* path) const;
  // Hops from vertex `v` to GPU `dst` over surviving links (-1: unreachable).
  int Hops(int v, int dst) const;
  // Whether hop counts come from the structure (no link failed) or from searches.
  bool Structural() const { return structural_; }
  // Estimated vertices and directed links of a cluster's topology, without building it.
  static void Count(const ClusterSpec& cluster, int64_t* vertices, int64_t* links);

 private:
  struct Graph;  // the Boost.Graph of surviving links, for breadth-first searches
  // One node's neighbourhood (its GPUs, NVSwitch, NICs, their switches and a spine) with
  // all-pairs hop counts; nodes whose NICs share switches alike share one.
  struct Local {
    int size = 0;
    int spine = -1;             // local id of the spine, -1 without spines
    std::vector<int> ordinal;   // per NIC: its switch's index among the node's switches
    std::vector<uint8_t> hops;  // size x size, 255: unreachable
    // Per local vertex: fewest hops to one of the node's NICs; per GPU: fewest hops from
    // one of the node's switches (255: none).
    std::vector<uint8_t> to_nic, from_switch;
    int At(int a, int b) const { return hops[a * size + b]; }
  };
  enum class Role : uint8_t { kGpu, kNvswitch, kNic, kSwitch, kSpine };
  Topology() = default;
  void Reserve(int64_t vertices, int64_t links);  // Count's estimates
  int AddVertex(Role role, int node, int index);
  void AddBidirectional(int a, int b, double bytes_per_s, double latency_s, LinkClass ab,
                        LinkClass ba);
  int FirstNicOfGpu(int l) const;  // GPU l's first NIC on its node (its pcie link 0)
  void BuildIntraNode(const ClusterSpec& c);
  void BuildTorus(const ClusterSpec& c, int node);
  // The dimension-order route between two chips of one torus slice.
  void TorusRoute(int src, int dst, std::vector<int>* path) const;
  int TorusHops(int src, int dst) const;
  void BuildInterNode(const ClusterSpec& c);
  // The NIC vertices, per (node, nic), each linked to the GPU that owns it; sets
  // nic_of_gpu_.
  std::vector<int> AddNics(const ClusterSpec& c);
  const std::vector<int>& DistancesTo(int dst_vertex) const;
  void IndexStructure();
  Local BuildLocal(int node, const std::vector<int>& ordinal) const;
  int LocalId(int node, const Local& local, int v) const;  // -1: not in node's neighbourhood
  int SwitchOf(int node, int nic) const { return switch_of_nic_[node * nics_ + nic]; }
  int StructuralHops(int v, int dst) const;
  // Bit i * nics + j: NIC i of node m and NIC j of node n share a switch (nics <= 8).
  uint64_t SharedSwitches(int m, int n) const;
  void NextHops(int at, int dst, std::vector<int>* next) const;
  int LinkFrom(int a, int b) const;  // the link a -> b, -1 if none
  void SwitchNextHops(int at, int dst, std::vector<int>* next) const;  // structural only
  // Whether nvswitch_routes_ holds (IndexStructure).
  bool OnlyNvswitchJoinsGpus() const;

  int gpus_ = 0;
  int gpus_per_node_ = 1;
  // Torus slices: the shape, the chip coordinates of each local rank, and per (local rank,
  // dimension, direction +/-) the link id out of slice 0's chip (-1: none); slice s's
  // links are slice 0's plus s * torus_links_per_slice_.
  bool torus_ = false;
  TorusSpec torus_spec_;
  std::vector<std::array<int, kMaxTorusDims>> torus_coords_;
  std::vector<int> torus_rank_of_chip_;  // physical chip index -> local rank
  std::vector<int> torus_out_;           // (l * kMaxTorusDims + d) * 2 + (minus ? 1 : 0)
  int torus_links_per_slice_ = 0;
  std::vector<Link> links_;  // both directions of a physical link: 2k and 2k + 1
  // Per vertex, the links out of it in id order: out_ids_[out_first_[v] ..
  // out_first_[v + 1]) (IndexOutLinks, once every link is added).
  std::vector<int> out_first_, out_ids_;
  std::span<const int> OutLinks(int v) const {
    return {out_ids_.data() + out_first_[v],
            static_cast<size_t>(out_first_[v + 1] - out_first_[v])};
  }
  void IndexOutLinks();
  std::vector<int> nic_of_gpu_;
  // Per GPU: the port of its NIC on its leaf or rail switch (InfiniBand's d-mod-k routes
  // by it, Route); -1 on one node.
  std::vector<int> port_of_gpu_;
  // Structure, for structural hop counts.
  bool structural_ = false;
  int nics_ = 0;          // per node (0 on one node)
  int nics_per_gpu_ = 1;  // NicsPerGpu
  // How switches are named: "switch" (single_switch), "leaf<k>" (fat_tree), or
  // "rail<r>.<group>" with rail_groups_ groups per rail (rail_optimized).
  InterNodeKind switch_kind_ = InterNodeKind::kFatTree;
  int rail_groups_ = 0;
  std::vector<Role> role_;            // per vertex
  std::vector<int> node_of_;          // per vertex: node of a GPU, NVSwitch or NIC
  std::vector<int> index_;            // per vertex: GPU l, NVSwitch g, NIC g+1+i; leaf k, spine s
  std::vector<int> nic_vertex_;       // per (node, nic)
  std::vector<int> switch_of_nic_;    // per (node, nic): its switch's vertex
  std::vector<int> port_of_nic_;      // per (node, nic): its port on that switch
  std::vector<int> leaves_, spines_;  // switch vertices
  std::vector<std::vector<int>> uplinks_;  // per leaf (index_ of its vertex): to the spines
  std::vector<int> no_uplinks_;            // no uplinks (one switch, no spines): stays empty
  std::vector<int> down_link_of_nic_;      // per (node, nic): its switch's link to it
  // Per GPU: its link to its node's NVSwitch (intra_node.kind nvswitch; else empty).
  std::vector<int> nvlink_of_gpu_;
  // Structural, every GPU on an NVSwitch and no NIC shared by GPUs: the only shortest
  // path between two GPUs of a node is through its NVSwitch (NodeRoute).
  bool nvswitch_routes_ = false;
  std::vector<int> pattern_of_node_;  // index into locals_
  std::vector<Local> locals_;
  std::shared_ptr<Graph> graph_;
  mutable std::unordered_map<int, std::vector<int>> distances_;    // by destination
  mutable std::unordered_map<uint64_t, std::vector<int>> routes_;  // by (src, dst, key)
  mutable std::vector<int> next_scratch_;                          // AppendRoute's
  mutable int64_t shared_pair_ = -1;  // SharedSwitches' last (m, n), and its answer
  mutable uint64_t shared_mask_ = 0;
};

}  // namespace meshsim

// The cluster as a directed graph of devices and links (Boost.Graph).
//
// Vertices: GPUs, one NVSwitch per node (intra_node.kind nvswitch; ring and full_mesh
// connect GPUs directly), NICs, and the scale-out switches: leaves and spines
// (fat_tree), rail switches and spines (rail_optimized), or one switch (single_switch).
// Every physical link is two directed links with their own bandwidth and latency.
//
//  - nvswitch: GPU <-> switch at gbps_per_gpu; ring: GPU <-> next GPU at gbps_per_gpu/2;
//    full_mesh: GPU <-> each other GPU at gbps_per_gpu/(g-1).
//  - GPU l of a node attaches to NIC floor(l * nics / g) at gbps_per_nic.
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
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/core/status.h"
#include "sim/hw/cluster_spec.h"

namespace meshsim {

enum class LinkClass : uint8_t { kNvlink, kGpuNic, kNicSwitch, kSwitchNic, kUplink, kDownlink };
constexpr int kLinkClassCount = 6;
const char* LinkClassName(LinkClass c);

struct Link {
  int src = 0;  // vertex
  int dst = 0;
  double bytes_per_s = 0;  // nominal bandwidth times the what-if factor
  double latency_s = 0;
  LinkClass cls = LinkClass::kNvlink;
  bool failed = false;
  std::string name;  // of the physical link, shared by both directions
};

class Topology {
 public:
  // Builds the graph of cluster.NetworkView() (an NVLink domain of several nodes is one
  // node here, one NVSwitch joining its GPUs); applies cluster.what_if.links (an unknown
  // link name is an error).
  static Result<std::shared_ptr<const Topology>> Build(const ClusterSpec& cluster);

  int Gpus() const { return gpus_; }
  int Vertices() const { return static_cast<int>(vertex_names_.size()); }
  const std::vector<Link>& links() const { return links_; }
  const std::string& VertexName(int v) const { return vertex_names_[v]; }
  int NodeOfGpu(int gpu) const { return gpu / gpus_per_node_; }
  int NicOfGpu(int gpu) const { return nic_of_gpu_[gpu]; }  // a vertex

  // Links from GPU src to GPU dst (src != dst), or empty if no path survives. Routes
  // are memoised; `flow_key` selects among equal-cost paths.
  const std::vector<int>& Route(int src, int dst, uint64_t flow_key) const;

 private:
  struct Graph;  // the Boost.Graph of surviving links, for breadth-first searches
  Topology() = default;
  int AddVertex(std::string name);
  void AddBidirectional(int a, int b, double bytes_per_s, double latency_s, LinkClass ab,
                        LinkClass ba, const std::string& name);
  void BuildIntraNode(const ClusterSpec& c);
  void BuildInterNode(const ClusterSpec& c);
  const std::vector<int>& DistancesTo(int dst_vertex) const;

  int gpus_ = 0;
  int gpus_per_node_ = 1;
  std::vector<std::string> vertex_names_;
  std::vector<Link> links_;
  std::vector<std::vector<int>> out_links_;  // per vertex
  std::vector<int> nic_of_gpu_;
  std::shared_ptr<Graph> graph_;
  mutable std::unordered_map<int, std::vector<int>> distances_;    // by destination
  mutable std::unordered_map<uint64_t, std::vector<int>> routes_;  // by (src, dst, key)
};

}  // namespace meshsim

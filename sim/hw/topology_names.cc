// Topology's names of vertices and links, made when asked for from the structure (role,
// node and index of each vertex; the link's ends and class): a fabric of 100,000 GPUs
// would otherwise build and keep a million strings that only what-if changes, the
// busiest links and the NIC counters ever read.
#include <array>
#include <string>

#include "sim/hw/topology.h"

namespace meshsim {

int Topology::FirstNicOfGpu(int l) const {
  return nics_per_gpu_ > 1 ? l * nics_per_gpu_ : l * nics_ / gpus_per_node_;
}

std::string Topology::VertexName(int v) const {
  const std::string node = "node" + std::to_string(node_of_[v]);
  const int index = index_[v];
  switch (role_[v]) {
    case Role::kGpu:
      if (torus_) {
        return "slice" + std::to_string(node_of_[v]) + ".chip" +
               std::to_string(torus_spec_.ChipAt(torus_coords_[index]));
      }
      return node + ".gpu" + std::to_string(index);
    case Role::kNvswitch:
      return node + ".nvswitch";
    case Role::kNic:
      return node + ".nic" + std::to_string(index - gpus_per_node_ - 1);
    case Role::kSwitch:
      if (switch_kind_ == InterNodeKind::kSingleSwitch) return "switch";
      if (switch_kind_ == InterNodeKind::kRailOptimized) {
        return "rail" + std::to_string(index / rail_groups_) + "." +
               std::to_string(index % rail_groups_);
      }
      return "leaf" + std::to_string(index);
    case Role::kSpine:
      return "spine" + std::to_string(index);
  }
  return "?";
}

// Each physical link is named after its first direction (a -> b as AddBidirectional
// added it): a GPU's NVLink, PCIe link or ICI link after the GPU, a NIC's after the NIC,
// an uplink after its leaf and spine.
std::string Topology::LinkName(int link) const {
  const Link& l = links_[link & ~1];
  const int a = l.src, b = l.dst;
  const std::string node = "node" + std::to_string(node_of_[a]);
  switch (l.cls) {
    case LinkClass::kNvlink:
      if (role_[b] == Role::kNvswitch) return node + ".gpu" + std::to_string(index_[a]) + ".nvlink";
      return node + ".gpu" + std::to_string(index_[a]) + "-gpu" + std::to_string(index_[b]);
    case LinkClass::kIci: {
      // After the chip on its - side and the one dimension along which the chips differ.
      static const char* const kAxis[] = {"x", "y", "z"};
      const auto& from = torus_coords_[index_[a]];
      const auto& to = torus_coords_[index_[b]];
      int d = 0;
      while (d + 1 < torus_spec_.Dims() && from[d] == to[d]) ++d;
      return "slice" + std::to_string(node_of_[a]) + ".chip" +
             std::to_string(torus_spec_.ChipAt(from)) + "." + kAxis[d] + "+";
    }
    case LinkClass::kGpuNic: {
      const int j = index_[b] - gpus_per_node_ - 1 - FirstNicOfGpu(index_[a]);
      return node + ".gpu" + std::to_string(index_[a]) + ".pcie" + (j > 0 ? std::to_string(j) : "");
    }
    case LinkClass::kNicSwitch:
      return node + ".nic" + std::to_string(index_[a] - gpus_per_node_ - 1);
    case LinkClass::kUplink:
      return VertexName(a) + ".spine" + std::to_string(index_[b]);
    case LinkClass::kSwitchNic:
    case LinkClass::kDownlink:
      break;  // never a link's first direction
  }
  return "?";
}

}  // namespace meshsim

#include "sim/plan/mesh_torus.h"

#include <cassert>
#include <numeric>

namespace meshsim {
namespace {

// The sets of `k` of the candidate dimensions, in itertools.combinations order.
void Combinations(const std::vector<int>& from, size_t k, size_t start, std::vector<int>* pick,
                  std::vector<std::vector<int>>* out) {
  if (pick->size() == k) {
    out->push_back(*pick);
    return;
  }
  for (size_t i = start; i < from.size(); ++i) {
    pick->push_back(from[i]);
    Combinations(from, k, i + 1, pick, out);
    pick->pop_back();
  }
}

// Whole free dimensions whose sizes multiply to `size`, most dimensions first; empty if
// none.
std::vector<int> WholeDims(const std::vector<int>& dims, const std::vector<int>& left, int size) {
  std::vector<int> free;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] > 1 && left[d] == dims[d]) free.push_back(static_cast<int>(d));
  }
  for (size_t k = free.size(); k >= 1; --k) {
    std::vector<std::vector<int>> sets;
    std::vector<int> pick;
    Combinations(free, k, 0, &pick, &sets);
    for (const std::vector<int>& set : sets) {
      int64_t product = 1;
      for (int d : set) product *= dims[d];
      if (product == size) return set;
    }
  }
  return {};
}

}  // namespace

std::vector<TorusFactor> PlaceAxesOnTorus(const std::vector<int>& dims,
                                          const std::vector<int>& sizes) {
  std::vector<int> left = dims;  // per dimension: the part no axis has taken yet
  std::vector<TorusFactor> out;
  for (const int size : sizes) {
    if (size == 1) continue;
    const std::vector<int> whole = WholeDims(dims, left, size);
    std::vector<TorusFactor> axis;  // outermost first, as JAX transposes
    for (int d : whole) {
      axis.push_back({d, dims[d]});
      left[d] = 1;
    }
    int need = whole.empty() ? size : 1;
    for (size_t d = 0; d < dims.size() && need > 1; ++d) {
      const int f = std::gcd(need, left[d]);
      if (f <= 1) continue;
      axis.push_back({static_cast<int>(d), f});
      left[d] /= f;
      need /= f;
    }
    assert(need == 1 && "axis sizes multiply to the chips");
    out.insert(out.end(), axis.rbegin(), axis.rend());  // innermost first
  }
  for (size_t d = 0; d < dims.size(); ++d) {
    if (left[d] > 1) out.push_back({static_cast<int>(d), left[d]});
  }
  return out;
}

std::vector<int> SliceAxisSizes(const PlanSpec& plan, int chips) {
  std::vector<int> sizes;
  int64_t product = 1;
  if (!plan.jax.Empty()) {
    for (auto a = plan.jax.axes.rbegin(); a != plan.jax.axes.rend(); ++a) {
      sizes.push_back(a->ici);
      product *= a->ici;
    }
    return product == chips ? sizes : std::vector<int>{};
  }
  for (const Axis a : plan.mesh_order) {
    int degree = 1;
    switch (a) {
      case Axis::kTp:
        degree = plan.tp;
        break;
      case Axis::kCp:
        degree = plan.cp;
        break;
      case Axis::kEp:
        degree = 1;
        break;  // folded into tp x dp x cp (mesh.h)
      case Axis::kDp:
        degree = plan.dp;
        break;
      case Axis::kPp:
        degree = plan.pp;
        break;
    }
    if (product * degree > chips) {
      if (chips % product != 0 || degree % (chips / product) != 0) return {};
      degree = static_cast<int>(chips / product);
    }
    sizes.push_back(degree);
    product *= degree;
    if (product == chips) return sizes;
  }
  return {};
}

void PlaceRanksOnTorus(const PlanSpec& plan, ClusterSpec* cluster) {
  if (!cluster->Torus()) return;
  TorusSpec& t = cluster->intra_node.torus;
  const std::vector<int> sizes = SliceAxisSizes(plan, cluster->gpus_per_node);
  t.placement = sizes.empty() ? std::vector<TorusFactor>{} : PlaceAxesOnTorus(t.dims, sizes);
}

}  // namespace meshsim

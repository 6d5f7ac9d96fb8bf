#include "sim/plan/mesh.h"

#include <cassert>

namespace meshsim {
namespace {
int Idx(Axis a) { return static_cast<int>(a); }
}  // namespace

Mesh::Mesh(const PlanSpec& plan) : ep_(plan.ep) {
  degree_[Idx(Axis::kTp)] = plan.tp;
  degree_[Idx(Axis::kCp)] = plan.cp;
  degree_[Idx(Axis::kEp)] = 1;  // folded into dp x cp
  degree_[Idx(Axis::kDp)] = plan.dp;
  degree_[Idx(Axis::kPp)] = plan.pp;
  int stride = 1;
  for (Axis a : plan.mesh_order) {
    stride_[Idx(a)] = stride;
    stride *= degree_[Idx(a)];
  }
  size_ = stride;
  coords_.resize(size_);
  for (int r = 0; r < size_; ++r) {
    Coords& c = coords_[r];
    auto at = [&](Axis a) { return (r / stride_[Idx(a)]) % degree_[Idx(a)]; };
    c.tp = at(Axis::kTp);
    c.cp = at(Axis::kCp);
    c.dp = at(Axis::kDp);
    c.pp = at(Axis::kPp);
    c.ep = (c.dp * plan.cp + c.cp) % plan.ep;
  }
}

int Mesh::RankOf(int tp, int cp, int dp, int pp) const {
  return tp * stride_[Idx(Axis::kTp)] + cp * stride_[Idx(Axis::kCp)] +
         dp * stride_[Idx(Axis::kDp)] + pp * stride_[Idx(Axis::kPp)];
}

int Mesh::Degree(Axis a) const { return degree_[Idx(a)]; }

std::vector<int> Mesh::Group(int rank, Axis axis) const {
  assert(axis != Axis::kEp);
  const int n = degree_[Idx(axis)];
  const int stride = stride_[Idx(axis)];
  const int own = (rank / stride) % n;
  const int base = rank - own * stride;
  std::vector<int> g(n);
  for (int i = 0; i < n; ++i) g[i] = base + i * stride;
  return g;
}

std::vector<int> Mesh::ExpertGroup(int rank) const {
  const std::vector<int> all = GradientGroup(rank);
  const Coords& c = coords_[rank];
  const int index = c.dp * degree_[Idx(Axis::kCp)] + c.cp;
  const int first = index / ep_ * ep_;
  return std::vector<int>(all.begin() + first, all.begin() + first + ep_);
}

std::vector<int> Mesh::ExpertDataGroup(int rank) const {
  const std::vector<int> all = GradientGroup(rank);
  const Coords& c = coords_[rank];
  const int index = c.dp * degree_[Idx(Axis::kCp)] + c.cp;
  std::vector<int> g;
  for (size_t i = index % ep_; i < all.size(); i += ep_) g.push_back(all[i]);
  return g;
}

std::vector<int> Mesh::GradientGroup(int rank) const {
  const Coords& c = coords_[rank];
  std::vector<int> g;
  g.reserve(degree_[Idx(Axis::kDp)] * degree_[Idx(Axis::kCp)]);
  for (int d = 0; d < degree_[Idx(Axis::kDp)]; ++d) {
    for (int k = 0; k < degree_[Idx(Axis::kCp)]; ++k) g.push_back(RankOf(c.tp, k, d, c.pp));
  }
  return g;
}

}  // namespace meshsim

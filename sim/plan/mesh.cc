#include "sim/plan/mesh.h"

#include <algorithm>
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
  }
  fold_tp_ = plan.ExpertsFoldTp();
  stage_size_ = plan.tp * plan.cp * plan.dp;
  if (!fold_tp_) {
    for (Coords& c : coords_) c.ep = (c.dp * plan.cp + c.cp) % ep_;
    return;
  }
  if (ep_ == 1) return;  // one expert group per rank; ExpertDataGroup lists the stage
  stage_ranks_.reserve(size_);
  stage_index_.resize(size_);
  for (int p = 0; p < plan.pp; ++p) {
    const std::vector<int> stage = StageRanks(p);
    for (int i = 0; i < stage_size_; ++i) {
      stage_index_[stage[i]] = i;
      coords_[stage[i]].ep = i % ep_;
    }
    stage_ranks_.insert(stage_ranks_.end(), stage.begin(), stage.end());
  }
}

std::vector<int> Mesh::StageRanks(int pp) const {
  std::vector<int> stage;
  stage.reserve(stage_size_);
  for (int d = 0; d < degree_[Idx(Axis::kDp)]; ++d) {
    for (int k = 0; k < degree_[Idx(Axis::kCp)]; ++k) {
      for (int t = 0; t < degree_[Idx(Axis::kTp)]; ++t) stage.push_back(RankOf(t, k, d, pp));
    }
  }
  std::sort(stage.begin(), stage.end());
  return stage;
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

std::vector<int> Mesh::ExpertDomain(int rank, int* index) const {
  const Coords& c = coords_[rank];
  if (!fold_tp_) {
    *index = c.dp * degree_[Idx(Axis::kCp)] + c.cp;
    return GradientGroup(rank);
  }
  if (stage_index_.empty()) {
    std::vector<int> stage = StageRanks(c.pp);
    *index = static_cast<int>(std::lower_bound(stage.begin(), stage.end(), rank) - stage.begin());
    return stage;
  }
  *index = stage_index_[rank];
  const auto first = stage_ranks_.begin() + c.pp * stage_size_;
  return std::vector<int>(first, first + stage_size_);
}

std::vector<int> Mesh::ExpertGroup(int rank) const {
  if (ep_ == 1) return {rank};
  int index = 0;
  const std::vector<int> domain = ExpertDomain(rank, &index);
  const int first = index / ep_ * ep_;
  return std::vector<int>(domain.begin() + first, domain.begin() + first + ep_);
}

std::vector<int> Mesh::ExpertDataGroup(int rank) const {
  int index = 0;
  const std::vector<int> domain = ExpertDomain(rank, &index);
  std::vector<int> g;
  for (size_t i = index % ep_; i < domain.size(); i += ep_) g.push_back(domain[i]);
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

// The device mesh: which rank holds which coordinates, and the communication groups.
//
// Ranks are numbered 0..N-1 and rank r runs on GPU r (GPU r is on node r / gpus_per_node).
// mesh_order lists axes innermost first, so with [tp, cp, ep, dp, pp] the tp ranks of a
// group are consecutive GPUs and share a node whenever tp <= gpus_per_node.
#pragma once

#include <array>
#include <vector>

#include "sim/plan/plan_spec.h"

namespace meshsim {

struct Coords {
  int tp = 0, cp = 0, dp = 0, pp = 0;
  int ep = 0;  // expert-parallel index: the rank's place in its stage, modulo ep_size
};

class Mesh {
 public:
  explicit Mesh(const PlanSpec& plan);

  int Size() const { return size_; }
  const Coords& CoordsOf(int rank) const { return coords_[rank]; }
  int RankOf(int tp, int cp, int dp, int pp) const;
  int Degree(Axis a) const;

  // The ranks that share every coordinate with `rank` except along `axis`, in order of
  // that axis's coordinate. Includes `rank` itself.
  std::vector<int> Group(int rank, Axis axis) const;
  // The pp ranks of one pipeline, by stage: those sharing tp, cp and dp with `rank`.
  std::vector<int> Pipeline(int rank) const { return Group(rank, Axis::kPp); }
  // The data-parallel group for gradient reduction: dp x cp ranks (CP ranks hold the same
  // weights, so their gradients are reduced together), ordered by (dp, cp).
  std::vector<int> GradientGroup(int rank) const;

  // Expert parallelism as Megatron-Core folds it with expert tensor parallelism 1 (MoE
  // Parallel Folding, arXiv:2504.14960; megatron/core/parallel_state.py's expert rank
  // generator, order tp-ep-dp-pp with etp = 1): the tp x cp x dp ranks of a pipeline
  // stage, in rank order, form consecutive expert-parallel groups of `ep` ranks, so EP
  // takes the TP ranks first; ranks with the same position in their EP group form the
  // expert-data-parallel group (tp x cp x dp / ep ranks) that reduces expert gradients.
  // A JAX-style plan's EP groups are blocks of the dp x cp ranks of one tp index
  // (PlanSpec::ExpertsFoldTp).
  std::vector<int> ExpertGroup(int rank) const;
  std::vector<int> ExpertDataGroup(int rank) const;
  int ExpertDegree() const { return ep_; }

 private:
  // The tp x cp x dp ranks of pipeline stage `pp`, in rank order.
  std::vector<int> StageRanks(int pp) const;
  // The ranks EP groups are carved from (the stage's; the dp x cp ranks of one tp index
  // when !fold_tp_), in order, and `rank`'s index among them.
  std::vector<int> ExpertDomain(int rank, int* index) const;

  int ep_ = 1;
  bool fold_tp_ = true;                   // PlanSpec::ExpertsFoldTp
  int stage_size_ = 1;                    // tp x cp x dp
  std::vector<int> stage_ranks_;          // with ep > 1: StageRanks of each pp, one after another
  std::vector<int> stage_index_;          // with ep > 1: per rank, its index in StageRanks
  std::array<int, kAxisCount> degree_{};  // indexed by Axis
  std::array<int, kAxisCount> stride_{};  // rank stride of one step along each axis
  std::vector<Coords> coords_;
  int size_ = 0;
};

}  // namespace meshsim

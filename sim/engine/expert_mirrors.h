// Symmetric replay of expert-parallel plans: the mirrors of the expert groups.
//
// Symmetric replay (simulation.h) replays the pipeline through rank 0 and gives every
// other collective group's traffic to the network as mirrors: translates of the replayed
// groups along tp, cp and dp. Expert-parallel groups are not translates: Megatron-Core's
// folding (Mesh::ExpertGroup) carves them as consecutive blocks of a stage's tp x cp x dp
// ranks, and a translate along dp of a block is not a block when ep < dp (it straddles
// two). Their mirrors are the family's own groups instead: the other expert-parallel
// groups of the stage (each running the same all-to-all), and the other expert-data
// groups (each reducing its expert gradients), every one that holds no replayed rank.
// Together with the replayed groups they are every group of the family, as a full replay
// runs them.
//
// This is exact when the family's groups are alike on the hardware (ExpertGroupsAlike):
// each places its members on NVLink domains the same way, so each collective costs what
// the replayed group's costs, with the same bytes inside and between domains. Otherwise
// every rank is replayed (NeedsFullReplay).
#pragma once

#include <vector>

#include "sim/plan/mesh.h"

namespace meshsim {

enum class ExpertFamily {
  kNone,        // not an expert group (or ep 1, or a single rank)
  kExpert,      // Mesh::ExpertGroup: the all-to-all of token dispatch and combine
  kExpertData,  // Mesh::ExpertDataGroup: the expert gradients' reduction
};

// Which family `group` is of: its members, in order, are the ExpertGroup or the
// ExpertDataGroup of its first rank. O(stage size).
ExpertFamily FamilyOf(const Mesh& mesh, const std::vector<int>& group);

// The groups of `family` in the pipeline stage of `group` (one of them) that hold no
// rank with `replayed[rank]`, in order of their lowest rank, members in the family's
// order. O(ranks of the mesh + stage size x groups). Precondition: family != kNone.
std::vector<std::vector<int>> ExpertMirrors(const Mesh& mesh, const std::vector<int>& group,
                                            ExpertFamily family, const std::vector<bool>& replayed);

// Whether, in every stage, the groups of each expert family place their members alike
// on NVLink domains of `domain_gpus` GPUs (GPU r is rank r): member i and member j share
// a domain in one group exactly when they do in every other. O(ranks x ep).
bool ExpertGroupsAlike(const Mesh& mesh, int domain_gpus);

}  // namespace meshsim

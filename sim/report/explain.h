// `meshsim explain`: what one training step of an experiment runs, per layer, as text:
// the plan (and for a JAX-style plan its mesh and which mesh axes form each group), each
// array's global and per-device shape, and the collectives of rank 0's pipeline with
// their kind, group axes, group size, bytes and count per step, layers with the same
// collectives merged into ranges. The view a JAX user gets from reading HLO and a
// PyTorch user from reading Megatron's code, for either plan style.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/plan/experiment.h"
#include "sim/plan/mesh.h"
#include "sim/schedule/program.h"

namespace meshsim {

// One kind of collective of one rank, one layer: how often it runs per step.
struct ExplainedCollective {
  int layer = -1;  // -1: not tied to a layer (gradient buckets, optimizer)
  Stream stream = Stream::kTp;
  CommOp op = CommOp::kAllReduce;
  int group_size = 0;
  double bytes = 0;  // nccl-tests convention
  int count = 0;     // per step, on this rank
  auto operator<=>(const ExplainedCollective&) const = default;
};

// The collectives that `rank` takes part in in `program`, grouped and counted, in
// order of (layer, stream, op, group size, bytes).
std::vector<ExplainedCollective> CollectivesOf(const Program& program, int rank);

// The group a stream's collectives run over, as PlanSpec axes ("tp", "dp", "pp") and,
// for a JAX-style plan, the mesh axes in brackets ("tp [tensor]").
std::string GroupLabel(const PlanSpec& plan, Stream stream);

// The whole text. Precondition: `program` holds (at least) the ranks of
// mesh.Pipeline(0), built for `e`.
std::string ExplainText(const Experiment& e, const Mesh& mesh, const Program& program);

}  // namespace meshsim

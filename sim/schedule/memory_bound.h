// A fast lower bound on the peak device memory that the replay of a step will reach.
//
// The step program (step_builder.h) allocates on each rank, at the start, its model states
// (ModelStates of the parameters its stage holds: dense ones over dp x cp, MoE experts'
// over dp x cp / ep), then per forward of a model chunk the stored activations of its
// layers (attention with context parallelism and FlashAttention as configured; MLP, or
// router + experts + shared experts of a MoE layer, with rank 0's expert load) and, on
// the last virtual stage, the fp32 logits, freed by that chunk's backward; recomputed
// activations and ZeRO-3's gathered parameters are short-lived buffers. This bound takes
// the layer split and parameters from the builder's own StageCosts (stage_costs.h), walks
// the same pipeline order (StageOrder) for every stage that may be the fullest (with
// uneven stages, or layers that differ, a middle one may; with an even split of identical
// layers only the first and the last) and takes, at each point the compute stream is
// known to pass, the memory that is certainly allocated then: model states + stored
// activations of the chunks in flight (+ the buffers the next kernel needs). Allocations
// the bound leaves out (prefetched ZeRO-3 layers, frees that have not run yet) only add to
// the replay's memory, so
//
//   EstimatePeakMemory(e).Total() <= replay peak of the worst device,
//
// and a plan whose bound exceeds the budget cannot fit (tests check this over sweeps).
// Cost: O(micro-batches x virtual stages + layers) for an even split of identical layers,
// else O(pp x micro-batches x virtual stages + layers); no program is built.
#pragma once

#include "sim/plan/experiment.h"

namespace meshsim {

struct MemoryBound {
  // Bytes per device at the bound's worst instant, by category.
  double weights = 0;
  double gradients = 0;
  double optimizer = 0;
  double activations = 0;  // stored activations of the micro-batches in flight (+ logits)
  double buffers = 0;      // recomputed activations, ZeRO-3 gathered parameters
  int stage = 0;           // pipeline stage of that device
  double Total() const { return weights + gradients + optimizer + activations + buffers; }
};

// Precondition: the experiment passed ValidatePlan.
MemoryBound EstimatePeakMemory(const Experiment& e);

}  // namespace meshsim

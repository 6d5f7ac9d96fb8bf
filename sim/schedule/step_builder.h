// Builds the Program of one training step: every rank, micro-batch and layer.
//
// For each rank the builder walks its pipeline stage's order (GPipe, 1F1B or interleaved)
// and emits, per micro-batch and model chunk: the pipeline receive, embedding, per layer
// the attention and MLP blocks with their tensor-parallel collectives, activation
// allocations (forward) and frees (backward), recomputation, the output layer and the
// pipeline send. Gradients are reduced over the data-parallel group in buckets as the
// backward pass produces them (all-reduce; reduce-scatter under ZeRO), ZeRO-3 gathers
// each layer's parameters just in time with one layer of prefetch, and the step ends with
// the optimizer update (and ZeRO's parameter all-gather).
#pragma once

#include <vector>

#include "sim/plan/mesh.h"
#include "sim/plan/plan_spec.h"
#include "sim/schedule/program.h"
#include "sim/workload/model_spec.h"

namespace meshsim {

// Emits the programs of `ranks` (all ranks when empty). The other ranks get no ops; a
// collective then waits only for its emitted members (its cost still covers the whole
// group), so `ranks` must be closed under pipeline partners: whole pipelines (see
// Mesh::Pipeline). This is how symmetric ranks are simulated once.
// With `host_threads`, each emitted rank also gets its host thread (Stream::kHost,
// sim/schedule/host_launch.h), which issues its GPU ops, waits at its host-device
// synchronisations and launches training.cuda_graphs' captured regions once.
// With `clone_ranks`, a pipeline stage's data-parallel replicas are copied from the first
// one emitted (the same program; Program::CloneRank) instead of emitted op by op: a full
// replay's build costs a fraction (the tests compare both).
// Precondition: the plan passed ValidatePlan for this model.
Program BuildStepProgram(const ModelSpec& model, const PlanSpec& plan, const TrainingSpec& training,
                         const Mesh& mesh, const std::vector<int>& ranks = {},
                         bool host_threads = false, bool clone_ranks = true);

}  // namespace meshsim

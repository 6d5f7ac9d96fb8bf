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

#include "sim/plan/mesh.h"
#include "sim/plan/plan_spec.h"
#include "sim/schedule/program.h"
#include "sim/workload/model_spec.h"

namespace meshsim {

// Precondition: the plan passed ValidatePlan for this model.
Program BuildStepProgram(const ModelSpec& model, const PlanSpec& plan,
                         const TrainingSpec& training, const Mesh& mesh);

}  // namespace meshsim

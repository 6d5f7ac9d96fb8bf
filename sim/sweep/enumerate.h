// The configurations of a sweep: every group (combination of explicit axis values) with
// its `auto` axes expanded, numbered 0..N-1 in a deterministic order.
//
// `auto` means every valid value, given the group's experiment:
//   plan.tp, plan.pp, plan.cp, plan.dp  every factorization of the GPU count: the auto
//                          axes take each divisor in turn such that the product of the
//                          mesh degrees can still equal the GPU count;
//   plan.micro_batch       every divisor of global_batch / dp;
//   plan.zero              0, 1, 2, 3;
//   plan.recompute         none, selective, full;
//   plan.schedule          gpipe, 1f1b, interleaved;
//   plan.virtual_stages    1 unless the schedule is interleaved; then every v >= 2 with
//                          pp * v dividing the layers (when pp does not divide them,
//                          dividing the layers + 2: Megatron's split with the embedding
//                          and the loss counted as a layer each, run evenly);
//   plan.stage_layers      the default split (DefaultStageLayers, sim/plan/stages.h)
//                          written out, so that results.csv shows it;
//   plan.sequence_parallel false, true.
//   plan.mesh.ici.NAME, plan.mesh.dcn.NAME (a JAX-style plan's mesh sizes)
//                          every split of the chip count (sim/sweep/mesh_axes.h); a
//                          JAX-style plan's degrees are then derived from its mesh and
//                          rules (DerivePlan, sim/plan/sharding.h), and a configuration
//                          where that fails is invalid with its error.
// Where the axes set some of tp, pp and cp but not dp, dp is derived as
// gpus / (tp * pp * cp); a configuration where that is not a whole number is invalid.
//
// Order: groups in order; inside a group the auto axes nest as listed above (mesh axes
// outermost, in the order tp, pp, cp, dp; each ascending), so that values that depend on
// others (dp, micro-batch, virtual stages, stage layers) are chosen after them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/core/status.h"
#include "sim/sweep/sweep_spec.h"

namespace meshsim {

struct Configuration {
  int64_t index = 0;  // 0..N-1, the row's identity in results.csv
  int group = 0;      // index into SweepSpec::groups
  PlanSpec plan;      // the group's plan with the auto values and a derived dp
  // Set when enumeration already knows the plan is invalid (dp not a whole number).
  std::optional<InputError> invalid;
};

// Keys that accept `auto` (AutoKeys names a JAX-style plan's mesh sizes
// plan.mesh.ici.NAME and plan.mesh.dcn.NAME; SupportsAuto takes any NAME).
bool SupportsAuto(const std::string& key);
const std::vector<std::string>& AutoKeys();

std::vector<Configuration> Enumerate(const SweepSpec& spec);

// The experiment of one configuration: its group's experiment with its plan.
Experiment ConfigurationExperiment(const SweepSpec& spec, const Configuration& c);

// A fingerprint of the configuration space (axes; each group's model, cluster and
// training essentials; every plan), so that a resumed or merged sweep can check that its
// rows come from the same space. Not a hash of every key: an edit to a base file that it
// does not cover (an efficiency other than matmul and network, a latency) goes unseen.
// 16 hex digits.
std::string Fingerprint(const SweepSpec& spec, const std::vector<Configuration>& configs);

// Divisors of n >= 1, ascending.
std::vector<int> Divisors(int n);

}  // namespace meshsim

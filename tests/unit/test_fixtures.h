// Small experiments and fake cost models for tests.
//
// The fakes reach every engine test: Simulate(experiment, options, FakeModels()) replays
// on them what Replay would (see Models in sim/engine/simulation.h).
#pragma once

#include <memory>

#include "sim/engine/simulation.h"
#include "sim/net/network.h"
#include "sim/plan/experiment.h"
#include "sim/workload/compute_model.h"

namespace meshsim::testing {

// Time proportional to matmul FLOPs only: 1 us per 1e9 FLOPs. Element-wise work is free,
// so a layer's time depends only on its matmuls and equal layers take equal time.
class FlopsOnlyComputeModel final : public ComputeModel {
 public:
  SimTime Duration(const KernelWork& w) const override {
    return SimTime::Picoseconds(static_cast<int64_t>(w.flops / 1e9 * 1e6));
  }
};

// Every collective and transfer is instantaneous.
class FreeNetwork final : public Network {
 public:
  void Start(Simulator& sim, CommOp, std::span<const int>, double, std::function<void()> done,
             std::span<const std::vector<int>>) override {
    sim.Schedule(SimTime::Zero(), std::move(done));
  }
  std::vector<LinkUsage> Usage(double) const override { return {}; }
  double IntraNodeBytes() const override { return 0; }
  double InterNodeBytes() const override { return 0; }
};

// FlopsOnlyComputeModel and FreeNetwork, for Simulate.
inline Models FakeModels() {
  return Models{std::make_unique<FlopsOnlyComputeModel>(), std::make_unique<FreeNetwork>()};
}

// A small GPT-like model: 8 layers, hidden 1024, 16 heads, tiny vocabulary so that the
// embedding and output layers are negligible next to the transformer layers.
inline ModelSpec SmallModel() {
  ModelSpec m;
  m.name = "small";
  m.layers = 8;
  m.hidden = 1024;
  m.heads = 16;
  m.kv_heads = 16;
  m.ffn_hidden = 4096;
  m.vocab = 8;
  m.seq_len = 1024;
  return m;
}

// One node of `gpus` A100-like GPUs.
inline ClusterSpec OneNode(int gpus) {
  ClusterSpec c;
  c.name = "test-node";
  c.nodes = 1;
  c.gpus_per_node = gpus;
  return c;
}

inline Experiment SmallPipeline(int pp, int micro_batches, ScheduleKind schedule, int v = 1) {
  Experiment e;
  e.name = "test";
  e.model = SmallModel();
  e.cluster = OneNode(pp);
  e.plan.pp = pp;
  e.plan.schedule = schedule;
  e.plan.virtual_stages = v;
  e.plan.micro_batch = 1;
  e.plan.global_batch = micro_batches;
  return e;
}

}  // namespace meshsim::testing

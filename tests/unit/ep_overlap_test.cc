// Megatron-Core's EP all-to-all overlap (plan.framework_options.
// overlap_moe_expert_parallel_comm, sim/schedule/ep_overlap.cc): a forward and a backward
// step of two micro-batches merged layer by layer, each one's all-to-alls under the other's
// compute. Checks its input rules and its effect on whole steps.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "sim/engine/simulation.h"
#include "sim/schedule/pipeline_order.h"
#include "tests/unit/experiment_step.h"

namespace meshsim {
namespace {

const std::string kSource = MESHSIM_SOURCE_DIR;
// Two H100 nodes, Qwen3-30B-A3B, EP 16 over both: the all-to-alls cross InfiniBand.
const std::string kExperiment =
    kSource + "/workloads/experiments/public-h100-bridge-qwen3-30b-a3b.yaml";
const std::string kOverlap = "plan.framework_options.overlap_moe_expert_parallel_comm=true";

StepSummary Step(std::vector<std::string> sets) {
  return testing::ExperimentStep(kExperiment, std::move(sets));
}

std::string LoadError(const std::vector<std::string>& sets) {
  return testing::ExperimentLoadError(kExperiment, sets);
}

// Four micro-batches per rank: three merged steps hide most of the all-to-alls; the step
// gets shorter but not shorter than its compute. No host model: eager, this run is
// host-bound, and the merged order's dispatcher syncs (after each forward router) hold
// back the backward's launches.
TEST(EpOverlap, HidesAllToAllsUnderTheOtherMicroBatch) {
  const std::string no_host = "cluster.host.launch_us=0";
  const StepSummary plain = Step({"plan.global_batch=64", no_host});
  const StepSummary merged = Step({"plan.global_batch=64", no_host, kOverlap});
  ASSERT_GT(plain.time_breakdown_s.exposed_ep_comm, 0.05 * plain.step_time_s);
  EXPECT_LT(merged.time_breakdown_s.exposed_ep_comm, 0.6 * plain.time_breakdown_s.exposed_ep_comm);
  EXPECT_LT(merged.step_time_s, plain.step_time_s);
  EXPECT_GT(merged.step_time_s, merged.time_breakdown_s.compute);
  EXPECT_DOUBLE_EQ(merged.model_flops_per_step, plain.model_flops_per_step);
}

// One micro-batch per rank: its forward and backward cannot merge, so nothing changes.
TEST(EpOverlap, OneMicroBatchHasNothingToMerge) {
  const StepSummary plain = Step({"plan.global_batch=16"});
  const StepSummary merged = Step({"plan.global_batch=16", kOverlap});
  EXPECT_DOUBLE_EQ(merged.step_time_s, plain.step_time_s);
}

// With the interleaved pipeline the steady state's forward and backward steps merge; the
// warm-up and cool-down run as before. Four nodes, EP 16 over two of them per stage; no host
// model, so that the all-to-alls, not the launches, are what the overlap hides.
TEST(EpOverlap, InterleavedPipelineMergesItsSteadyState) {
  const std::vector<std::string> pipe = {"cluster.nodes=4",
                                         "cluster.host.launch_us=0",
                                         "plan.pp=2",
                                         "plan.dp=16",
                                         "plan.ep=16",
                                         "plan.schedule=interleaved",
                                         "plan.virtual_stages=2",
                                         "plan.overlap_p2p=true",
                                         "plan.global_batch=128"};
  std::vector<std::string> with = pipe;
  with.push_back(kOverlap);
  const StepSummary plain = Step(pipe);
  const StepSummary merged = Step(with);
  EXPECT_LT(merged.time_breakdown_s.exposed_ep_comm, 0.5 * plain.time_breakdown_s.exposed_ep_comm);
  EXPECT_LT(merged.step_time_s, 0.95 * plain.step_time_s);
  EXPECT_DOUBLE_EQ(merged.model_flops_per_step, plain.model_flops_per_step);
}

// Where in a merged step the pipeline sends leave, per replayed rank: the gradient
// sends that start while the wgrad of their own micro-batch's attention runs, the
// activation sends that start while the other micro-batch's backward pre-dispatch part
// (the router's or the attention's input gradient) runs, and all sends of each kind.
struct SendPlacement {
  int gradient_under_wgrad = 0, gradients = 0;
  int activation_under_backward = 0, activations = 0;
};

SendPlacement PlaceSends(const Simulation& r, int rank) {
  SendPlacement s;
  auto running = [&](SimTime t, auto pick) {
    for (OpId id : r.program.StreamOps(rank, Stream::kCompute)) {
      const Op op = r.program.op(id);
      if (op.kind == OpKind::kCompute && r.replay.start[id] <= t && t < r.replay.end[id] &&
          pick(op))
        return true;
    }
    return false;
  };
  for (OpId id : r.program.StreamOps(rank, Stream::kSendPrev)) {
    const int mb = r.program.op(id).micro_batch;
    ++s.gradients;
    s.gradient_under_wgrad += running(r.replay.start[id], [mb](const Op& op) {
      return op.tag == Tag::kAttentionWgrad && op.micro_batch == mb;
    });
  }
  for (OpId id : r.program.StreamOps(rank, Stream::kSendNext)) {
    const int mb = r.program.op(id).micro_batch;
    ++s.activations;
    s.activation_under_backward += running(r.replay.start[id], [mb](const Op& op) {
      return (op.tag == Tag::kAttentionBwd || op.tag == Tag::kMoeRouterBwd) && op.micro_batch != mb;
    });
  }
  return s;
}

// Megatron's merged step sends each tensor once it is complete
// (TransformerModelChunkSchedulePlan.run): the input gradient under the delayed wgrad of
// the chunk's first layer, the activation after the forward's last combine, under the
// backward's last pre-dispatch part; not both at the step's end. 16 micro-batches of
// which the warm-up's forwards and the cool-down's backwards (3-5 per rank) do not merge.
TEST(EpOverlap, MergedStepsSendEachTensorOnceComplete) {
  Result<Experiment> e = LoadExperimentFile(
      kExperiment,
      {"cluster.nodes=4", "cluster.host.launch_us=0", "plan.pp=2", "plan.dp=16", "plan.ep=16",
       "plan.schedule=interleaved", "plan.virtual_stages=2", "plan.overlap_p2p=true",
       "plan.global_batch=256", kOverlap, "cluster.network_model=alpha_beta"});
  ASSERT_TRUE(e.ok()) << e.error().ToString();
  const auto r = Simulate(e.value());
  ASSERT_TRUE(r->replay.completed) << r->replay.stall;
  int ranks = 0;
  for (int rank = 0; rank < r->program.Ranks(); ++rank) {
    const SendPlacement s = PlaceSends(*r, rank);
    if (s.gradients + s.activations == 0) continue;  // not replayed
    ++ranks;
    EXPECT_GE(s.gradient_under_wgrad, s.gradients / 2) << "rank " << rank;
    EXPECT_GE(s.activation_under_backward, s.activations / 2) << "rank " << rank;
  }
  EXPECT_GE(ranks, 2);  // both stages
}

// The interleaved order with one extra warm-up forward (Megatron-Core's
// get_pp_rank_microbatches under the overlap): the same steps, one forward moved ahead of
// the first backward on every stage, so no adjacent forward and backward share a
// micro-batch and chunk in the steady state.
TEST(EpOverlap, ExtraWarmupForwardMovesOneForwardAhead) {
  constexpr int kPp = 4, kV = 2, kMicroBatches = 8;
  const auto first_backward = [](const std::vector<PipelineStep>& steps) {
    int i = 0;
    while (steps[i].forward) ++i;
    return i;
  };
  for (int stage = 0; stage < kPp; ++stage) {
    const auto plain = StageOrder(ScheduleKind::kInterleaved, kPp, kV, kMicroBatches, stage);
    const auto extra = StageOrder(ScheduleKind::kInterleaved, kPp, kV, kMicroBatches, stage, 1);
    ASSERT_EQ(extra.size(), plain.size());
    EXPECT_EQ(first_backward(extra), first_backward(plain) + 1) << "stage " << stage;
    for (size_t i = first_backward(extra); i + 1 < extra.size(); ++i) {
      const PipelineStep& a = extra[i];
      const PipelineStep& b = extra[i + 1];
      EXPECT_FALSE(a.forward != b.forward && a.chunk == b.chunk && a.micro_batch == b.micro_batch)
          << "stage " << stage << " step " << i;
    }
  }
}

TEST(EpOverlap, BadInputNamesTheKey) {
  const std::string key = "plan.framework_options.overlap_moe_expert_parallel_comm";
  const std::string ep1 = LoadError({kOverlap, "plan.ep=1"});
  EXPECT_NE(ep1.find(key), std::string::npos) << ep1;
  EXPECT_NE(LoadError({kOverlap, "plan.recompute=full"}).find(key), std::string::npos);
  const std::string one_f_one_b =
      LoadError({kOverlap, "plan.pp=2", "plan.dp=8", "plan.ep=8", "plan.overlap_p2p=true"});
  EXPECT_NE(one_f_one_b.find(key), std::string::npos) << one_f_one_b;
  const std::string blocking_p2p =
      LoadError({kOverlap, "plan.pp=2", "plan.dp=8", "plan.ep=8", "plan.schedule=interleaved",
                 "plan.virtual_stages=2"});
  EXPECT_NE(blocking_p2p.find("plan.overlap_p2p"), std::string::npos) << blocking_p2p;
  EXPECT_EQ(LoadError({kOverlap}), "");
}

}  // namespace
}  // namespace meshsim

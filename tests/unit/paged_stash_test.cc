// Megatron-Core's paged stash (plan.framework_options.moe_paged_stash): the fused grouped
// MLP's saved tensors are copied into a paged buffer after the experts' forward and back
// before their backward, each way twice the saved bytes through HBM. Expected values are
// derived by hand in the comments beside them.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "sim/workload/transformer.h"
#include "tests/unit/experiment_step.h"
#include "tests/unit/kernel_fixtures.h"

namespace meshsim {
namespace {

LayerShape Fused(bool stash) {
  LayerShape s;
  s.seq = 256;
  s.micro_batch = 1;
  s.dtype = Dtype::kFp8;
  s.megatron = true;
  s.moe_dispatcher = MoeDispatcher::kFlex;
  s.fused_grouped_mlp = true;
  s.moe_paged_stash = stash;
  return s;
}

// TinyMoe (hidden 128, SwiGLU experts of 64, top 4), 256 tokens at EP 1: 1,024 received
// copies, each saving 128 + 4 bytes of FC1's MXFP8 input (data, one scale per 32), 64 + 2
// of FC2's, 2 x 64 x 2 of FC1's BF16 output and a 4-byte probability: 458 bytes, 469,000
// bytes in all, copied out (read and write) forward and back backward.
TEST(PagedStash, CopiesTheFusedMlpSavedTensorsOutAndBack) {
  const ModelSpec m = testing::TinyMoe();
  const MoeCost without = MoeLayerCost(m, Fused(false), 1);
  const MoeCost with = MoeLayerCost(m, Fused(true), 1);
  const double saved = 1024.0 * (128 * 33.0 / 32 + 64 * 33.0 / 32 + 2 * 64 * 2 + 4);
  EXPECT_DOUBLE_EQ(saved, 1024.0 * 458);
  EXPECT_DOUBLE_EQ(with.stash_bytes, 2 * saved);
  EXPECT_DOUBLE_EQ(without.stash_bytes, 0);
  // One copy kernel per saved tensor each way (six tensors).
  EXPECT_EQ(with.stash_kernels, 6);
  // Not in the experts' own ops: the side stream runs them (moe_blocks.cc).
  EXPECT_DOUBLE_EQ(with.extra_fwd_bytes, without.extra_fwd_bytes);
  EXPECT_DOUBLE_EQ(with.extra_bwd_bytes, without.extra_bwd_bytes);
  EXPECT_EQ(with.extra_fwd_kernels, without.extra_fwd_kernels);
  // What is kept for backward is unchanged: the copy replaces the original tensor.
  EXPECT_DOUBLE_EQ(with.experts.stored_act_bytes, without.experts.stored_act_bytes);
  // GroupedLinear's experts mark nothing as grouped: no stash.
  LayerShape unfused = Fused(true);
  unfused.fused_grouped_mlp = false;
  EXPECT_DOUBLE_EQ(MoeLayerCost(m, unfused, 1).stash_bytes, 0);
}

const std::string kExperiment = std::string(MESHSIM_SOURCE_DIR) +
                                "/workloads/experiments/public-gb200-bridge-qwen3-30b-a3b.yaml";
const std::string kKey = "plan.framework_options.moe_paged_stash";

// In a run (Qwen3-30B-A3B on GB200): the copies lengthen the step.
TEST(PagedStash, LengthensTheStepOfAFusedRun) {
  const StepSummary off = testing::ExperimentStep(kExperiment, {kKey + "=false"});
  const StepSummary on = testing::ExperimentStep(kExperiment, {kKey + "=true"});
  EXPECT_GT(on.step_time_s, 1.02 * off.step_time_s);
}

std::unique_ptr<Simulation> SimulateWith(std::vector<std::string> sets) {
  sets.push_back("cluster.network_model=alpha_beta");
  Result<Experiment> e = LoadExperimentFile(kExperiment, sets);
  EXPECT_TRUE(e.ok()) << e.error().ToString();
  return Simulate(e.value());
}

std::vector<OpId> Ops(const Program& p, Stream stream, Tag tag) {
  std::vector<OpId> out;
  for (OpId id : p.StreamOps(0, stream)) {
    if (p.Info(id).tag == tag) out.push_back(id);
  }
  return out;
}

// Megatron-Core copies out and back on a side stream (paged_stash.py @ core_v0.19.0):
// Qwen3-30B-A3B, 48 MoE layers and 16 micro-batches a rank: every layer but the last of
// each micro-batch, whose backward follows its forward (remove_paged_tensor_from_stash),
// is copied out and back, 2 x 47 x 16 copies, none on the compute stream; the experts'
// forward op no longer holds them (their launches come after it).
TEST(PagedStash, CopiesRunOnTheSideStream) {
  for (const std::string overlap : {"true", "false"}) {
    const auto on = SimulateWith(
        {kKey + "=true", "plan.framework_options.overlap_moe_expert_parallel_comm=" + overlap});
    const auto off = SimulateWith(
        {kKey + "=false", "plan.framework_options.overlap_moe_expert_parallel_comm=" + overlap});
    ASSERT_TRUE(on->replay.completed) << on->replay.stall;
    const Program& p = on->program;
    const std::vector<OpId> copies = Ops(p, Stream::kSideCompute, Tag::kMoeStash);
    EXPECT_EQ(copies.size(), 2u * 47 * 16) << overlap;
    EXPECT_TRUE(Ops(p, Stream::kCompute, Tag::kMoeStash).empty());
    for (OpId id : copies) EXPECT_NE(p.Info(id).layer, 47);
    const OpId fwd_on = Ops(p, Stream::kCompute, Tag::kMoeExpertsFwd)[0];
    const OpId fwd_off = Ops(off->program, Stream::kCompute, Tag::kMoeExpertsFwd)[0];
    EXPECT_EQ(p.WorkOf(p.op(fwd_on)), off->program.WorkOf(off->program.op(fwd_off)));
    // Each copy gates an experts' op: the next forward waits for a copy out, the backward
    // for its copy back.
    for (OpId id : copies) {
      bool gates = false;
      for (const OpId* d = p.DependentsBegin(id); d != p.DependentsEnd(id); ++d) {
        const Tag t = p.Info(*d).tag;
        gates = gates || t == Tag::kMoeExpertsFwd || t == Tag::kMoeExpertsBwd;
      }
      EXPECT_TRUE(gates) << "copy of layer " << p.Info(id).layer;
    }
  }
}

// Bad input names the key: without the fused grouped MLP, without HybridEP, or under full
// recomputation.
TEST(PagedStash, NeedsTheFusedMlpAndHybridEp) {
  EXPECT_EQ(testing::ExperimentLoadError(kExperiment, {kKey + "=true"}), "");
  for (const std::string& other :
       {std::string("plan.framework_options.fused_grouped_mlp=false"),
        std::string("plan.moe_flex_backend=deepep"), std::string("plan.recompute=full")}) {
    std::vector<std::string> sets = {kKey + "=true", other};
    if (other.find("fused_grouped_mlp") != std::string::npos) {
      sets.push_back("plan.framework_options.fused_grouped_mlp_cluster_margin=0");
    }
    if (other.find("recompute") != std::string::npos) {
      sets.push_back("plan.framework_options.overlap_moe_expert_parallel_comm=false");
    }
    const std::string e = testing::ExperimentLoadError(kExperiment, sets);
    EXPECT_NE(e.find(kKey), std::string::npos) << other << ": " << e;
  }
}

}  // namespace
}  // namespace meshsim

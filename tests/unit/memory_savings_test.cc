// The memory savings of published recipes, each against its hand computation: FP8 primary
// weights (training.fp8_param_gather), bf16 optimizer moments (training.moments_dtype), no
// master weights (training.master_weights) and
// activation offloading (plan.cpu_offload_layers), in the model states, the replayed peak
// and the memory bound.
#include <gtest/gtest.h>

#include <string>

#include "sim/engine/simulation.h"
#include "sim/plan/validate.h"
#include "sim/schedule/memory_bound.h"
#include "sim/schedule/model_states.h"
#include "sim/workload/transformer.h"
#include "tests/unit/test_fixtures.h"

namespace meshsim {
namespace {

TrainingSpec Fp8Current() {
  TrainingSpec t;
  t.dtype = Dtype::kFp8;
  t.fp8_recipe = Fp8Recipe::kCurrent;
  return t;
}

// TE keeps FP8 weights row-wise and transposed (2 bytes) beside the 16-bit weights (2):
// 4 bytes per parameter; as primary weights only the FP8 ones: 2.
TEST(MemorySavings, Fp8PrimaryWeightsDropThe16BitCopy) {
  TrainingSpec t = Fp8Current();
  EXPECT_DOUBLE_EQ(ModelStates(1e9, 1, 0, t).weights, 4e9);
  t.fp8_param_gather = true;
  EXPECT_DOUBLE_EQ(ModelStates(1e9, 1, 0, t).weights, 2e9);
  // Sharded by ZeRO-3 (Megatron-FSDP) over 64 ranks.
  EXPECT_DOUBLE_EQ(ModelStates(64e9, 64, 3, t).weights, 2e9);
  // Read only with dtype fp8.
  TrainingSpec bf16;
  bf16.fp8_param_gather = true;
  EXPECT_DOUBLE_EQ(ModelStates(1e9, 1, 0, bf16).weights, 2e9);
}

// The optimizer step no longer writes a 16-bit copy (2 bytes) and its FP8 cast reads the
// fp32 master (4 bytes) instead of the 16-bit copy (2), twice with current scaling (the
// amax pass and the cast): 4 + 2 - 2 * 2 = 2 bytes less per parameter.
TEST(MemorySavings, Fp8PrimaryWeightsOptimizerTraffic) {
  TrainingSpec t = Fp8Current();
  const double with_copy = OptimizerTrafficPerParam(t);
  t.fp8_param_gather = true;
  EXPECT_DOUBLE_EQ(with_copy - OptimizerTrafficPerParam(t), 2.0);
}

// Megatron's parameter all-gathers move FP8 data (1 byte) with FP8 primary weights, but
// MXFP8's, which run in 16 bits through the gradient buffer.
TEST(MemorySavings, Fp8ParamGatherBytes) {
  TrainingSpec t = Fp8Current();
  EXPECT_DOUBLE_EQ(GatheredWeightBytesPerParam(t), 2);
  t.fp8_param_gather = true;
  EXPECT_DOUBLE_EQ(GatheredWeightBytesPerParam(t), 1);
  t.fp8_recipe = Fp8Recipe::kMxfp8;
  EXPECT_DOUBLE_EQ(GatheredWeightBytesPerParam(t), 2);
}

// Precision-aware optimizer: fp32 master (4) + two bf16 moments (2 + 2) = 8 bytes for
// Adam, 4 + 2 = 6 for SGD; the ZeRO-1 shard divides them.
TEST(MemorySavings, Bf16MomentsAreEightBytesForAdam) {
  TrainingSpec t;
  t.moments_dtype = MomentsDtype::kBf16;
  EXPECT_DOUBLE_EQ(OptimizerBytesPerParam(t), 8);
  EXPECT_DOUBLE_EQ(ModelStates(32e9, 32, 1, t).optimizer, 8e9);
  t.optimizer = Optimizer::kSgd;
  EXPECT_DOUBLE_EQ(OptimizerBytesPerParam(t), 6);
}

// Without master weights (PyTorch's Adam on bf16 parameters) the state is the moments
// alone: 8 bytes per parameter in fp32, 4 in bf16; with 16-bit gradients and weights the
// model states are 8 bytes per parameter, half of mixed precision's 16. The optimizer step
// reads and writes the weights instead of copying the master into them.
TEST(MemorySavings, NoMasterWeightsKeepsOnlyTheMoments) {
  TrainingSpec t;
  t.master_weights = false;
  EXPECT_DOUBLE_EQ(OptimizerBytesPerParam(t), 8);
  t.moments_dtype = MomentsDtype::kBf16;
  EXPECT_DOUBLE_EQ(OptimizerBytesPerParam(t), 4);
  EXPECT_DOUBLE_EQ(ModelStates(30e9, 8, 3, t).Total(), 30e9 * 8 / 8);
  TrainingSpec mixed;
  mixed.moments_dtype = MomentsDtype::kBf16;
  // Mixed: g + g + 2g + (g + 2*8) + (4 + 2) + g with g = 2: 34; without master:
  // g + g + 2g + (g + 2*4) + (2 + 2) + g: 24.
  EXPECT_DOUBLE_EQ(OptimizerTrafficPerParam(mixed), 34);
  EXPECT_DOUBLE_EQ(OptimizerTrafficPerParam(t), 24);
}

// The small model on one GPU, two micro-batches, no recomputation.
Experiment OneGpu() {
  Experiment e;
  e.name = "savings";
  e.model = testing::SmallModel();
  e.cluster = testing::OneNode(1);
  e.plan.global_batch = 2;
  e.training.flash_attention = true;
  return e;
}

double ReplayPeak(const Experiment& e) {
  const auto sim = Simulate(e, SimulationOptions{}, testing::FakeModels());
  EXPECT_TRUE(sim->replay.completed) << sim->replay.stall;
  return sim->replay.memory[0].peak_bytes;
}

// bf16 moments save 4 bytes per parameter of the replayed peak, to the byte. (The step
// program's model states leave out the final norm's `hidden` parameters, as
// StageCosts::StageParams counts them.)
TEST(MemorySavings, Bf16MomentsInReplayedPeak) {
  Experiment e = OneGpu();
  const double fp32 = ReplayPeak(e);
  e.training.moments_dtype = MomentsDtype::kBf16;
  const double held = TotalParams(e.model) - static_cast<double>(e.model.hidden);
  EXPECT_DOUBLE_EQ(fp32 - ReplayPeak(e), 4 * held);
}

// Dropping the fp32 master weights saves 4 bytes per parameter of the replayed peak, to
// the byte; with FP8 primary weights (cast from the master) it is bad input naming the key.
TEST(MemorySavings, NoMasterWeightsInReplayedPeak) {
  Experiment e = OneGpu();
  const double mixed = ReplayPeak(e);
  e.training.master_weights = false;
  const double held = TotalParams(e.model) - static_cast<double>(e.model.hidden);
  EXPECT_DOUBLE_EQ(mixed - ReplayPeak(e), 4 * held);
  e.training.dtype = Dtype::kFp8;
  e.training.fp8_param_gather = true;
  e.cluster.gpu.peak_tflops_fp8 = 2 * e.cluster.gpu.peak_tflops_bf16;
  const Status bad = ValidatePlan(e.plan, e.training, e.model, e.cluster);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().ToString().find("training.master_weights"), std::string::npos);
}

// TE's synchronizer keeps at most L - k layers' activations on the GPU: offloading k of
// the L = 8 layers lowers the replayed peak by k layers' stored activations (Korthikanti
// et al.'s per-layer bytes with flash attention), and the memory bound by as much.
TEST(MemorySavings, OffloadedLayersLeaveThePeak) {
  Experiment e = OneGpu();
  const double layer = StoredActivationBytesPerLayer(e.model, LayerShape{.seq = e.model.seq_len,
                                                                         .micro_batch = 1,
                                                                         .recompute_modules = {},
                                                                         .flash_attention = true});
  ASSERT_GT(layer, 0);
  const double peak = ReplayPeak(e);
  const double bound = EstimatePeakMemory(e).Total();
  for (int k : {1, 3, 7}) {
    e.plan.cpu_offload_layers = k;
    ASSERT_TRUE(ValidatePlan(e.plan, e.training, e.model, e.cluster).ok());
    EXPECT_NEAR(peak - ReplayPeak(e), k * layer, 1e-9 * peak) << k << " layers";
    const double offloaded_bound = EstimatePeakMemory(e).Total();
    EXPECT_NEAR(bound - offloaded_bound, k * layer, 1e-9 * peak) << k << " layers";
    EXPECT_LE(offloaded_bound, ReplayPeak(e) * (1 + 1e-12)) << k << " layers";
  }
}

// As Megatron-Core allows it: fewer layers than the model's, pp = 1, no recomputation.
TEST(MemorySavings, OffloadLimits) {
  Experiment e = OneGpu();
  const auto key = [&e] {
    const Status s = ValidatePlan(e.plan, e.training, e.model, e.cluster);
    return s.ok() ? std::string() : s.error().key;
  };
  e.plan.cpu_offload_layers = 8;
  EXPECT_EQ(key(), "plan.cpu_offload_layers");
  e.plan.cpu_offload_layers = -1;
  EXPECT_EQ(key(), "plan.cpu_offload_layers");
  e.plan.cpu_offload_layers = 2;
  e.plan.recompute = Recompute::kFull;
  EXPECT_EQ(key(), "plan.cpu_offload_layers");
  e = testing::SmallPipeline(2, 4, ScheduleKind::kOneFOneB);
  e.plan.cpu_offload_layers = 2;
  EXPECT_EQ(key(), "plan.cpu_offload_layers");
}

}  // namespace
}  // namespace meshsim

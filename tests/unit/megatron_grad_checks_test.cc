// Megatron-Core's gradient work outside the GEMMs, sized by hand on a small model and
// replayed by the event engine: before each bucket's reduction (start_grad_sync in
// param_and_grad_buffer.py @ core_r0.8.0) the NaN check of Megatron-LM's
// --check-for-nan-in-loss-and-grad (a norm kernel the host waits for; the loss's check per
// micro-batch) and the 1/dp scaling unless average_in_collective; and the word embedding's
// dense gradient, filled and added to the main gradient every micro-batch.
#include <gtest/gtest.h>

#include <vector>

#include "sim/engine/simulation.h"
#include "tests/unit/test_fixtures.h"

namespace meshsim {
namespace {

// SmallModel (8 layers of 12,584,960 parameters, 25,169,920 bf16 gradient bytes each) with
// a 32000-token vocabulary (embedding and untied output layer 65,536,000 bytes each), ZeRO-1
// over one node of 8 GPUs, two micro-batches; gradient buckets of 25 MB: every unit fills
// one alone, 10 reduce-scatters in the last micro-batch's backward.
Experiment Zero1(bool check, bool average) {
  Experiment e;
  e.name = "grad-checks";
  e.model = testing::SmallModel();
  e.model.vocab = 32000;
  e.cluster = testing::OneNode(8);
  e.cluster.host.launch_us = 10;  // host ops on, so that synchronisations are ops
  e.plan.dp = 8;
  e.plan.zero = 1;
  e.plan.global_batch = 16;
  e.plan.framework = Framework::kMegatron;
  e.plan.framework_options.check_for_nan_in_loss_and_grad = check;
  e.plan.framework_options.average_in_collective = average;
  return e;
}

constexpr double kLayerBytes = 25'169'920;
constexpr double kEmbeddingBytes = 65'536'000;

std::vector<OpId> Ops(const Simulation& sim, Stream stream, Tag tag) {
  std::vector<OpId> out;
  for (OpId id : sim.program.StreamOps(0, stream)) {
    if (sim.program.op(id).tag == tag) out.push_back(id);
  }
  return out;
}

double Bytes(const Simulation& sim, OpId id) {
  return sim.program.WorkOf(sim.program.op(id)).bytes;
}

TEST(MegatronGradChecks, EachBucketIsNormedThenScaledBeforeItsReduceScatter) {
  const auto sim = Simulate(Zero1(true, false), {}, testing::FakeModels());
  const Simulation& s = *sim;
  const std::vector<OpId> reduces = Ops(s, Stream::kDp, Tag::kDpGradReduce);
  const std::vector<OpId> prep = Ops(s, Stream::kCompute, Tag::kGradPrepare);
  ASSERT_EQ(reduces.size(), 10u);
  ASSERT_EQ(prep.size(), 2 * reduces.size());
  for (size_t i = 0; i < reduces.size(); ++i) {
    const double bucket = s.program.comms()[s.program.op(reduces[i]).comm].bytes;
    EXPECT_TRUE(bucket == kLayerBytes || bucket == kEmbeddingBytes) << bucket;
    const OpId norm = prep[2 * i], scale = prep[2 * i + 1];
    EXPECT_EQ(Bytes(s, norm), bucket);       // grad_data.norm(): reads the bucket
    EXPECT_EQ(Bytes(s, scale), 2 * bucket);  // grad_data *= 1/dp: reads and writes it
    EXPECT_GE(s.replay.start[scale], s.replay.end[norm]);
    EXPECT_GE(s.replay.start[reduces[i]], s.replay.end[scale]) << i;
  }
}

TEST(MegatronGradChecks, TheHostWaitsForEachBucketsNormAndEachLoss) {
  const auto checked = Simulate(Zero1(true, false), {}, testing::FakeModels());
  const auto plain = Simulate(Zero1(false, false), {}, testing::FakeModels());
  const std::vector<OpId> syncs = Ops(*checked, Stream::kHost, Tag::kHostSync);
  // 10 buckets and 2 micro-batches' losses.
  EXPECT_EQ(syncs.size(), Ops(*plain, Stream::kHost, Tag::kHostSync).size() + 10 + 2);
  // The last bucket's sync waits for its norm (the second-last prepare op), and the host
  // issues the scaling kernel only after it.
  const std::vector<OpId> prep = Ops(*checked, Stream::kCompute, Tag::kGradPrepare);
  ASSERT_EQ(prep.size(), 20u);
  const OpId last_norm = prep[18], last_scale = prep[19];
  EXPECT_GE(checked->replay.start[syncs.back()], checked->replay.end[last_norm]);
  EXPECT_GE(checked->replay.start[last_scale], checked->replay.end[syncs.back()]);
}

TEST(MegatronGradChecks, AveragingInTheCollectiveDropsTheScaling) {
  const auto sim = Simulate(Zero1(false, true), {}, testing::FakeModels());
  EXPECT_TRUE(Ops(*sim, Stream::kCompute, Tag::kGradPrepare).empty());
  const auto scaled = Simulate(Zero1(false, false), {}, testing::FakeModels());
  EXPECT_EQ(Ops(*scaled, Stream::kCompute, Tag::kGradPrepare).size(), 10u);
}

// On the roofline's HBM time the checks and the scaling cost the step time: 3 bytes per
// gradient byte of the last micro-batch's buckets, on the compute stream.
TEST(MegatronGradChecks, TheChecksLengthenTheStep) {
  const Experiment on = Zero1(true, false), off = Zero1(false, true);
  EXPECT_GT(Simulate(on)->replay.step_time, Simulate(off)->replay.step_time);
}

// The embedding's backward per micro-batch: the rows of its 1 x 1024 tokens (4 x 1024 x
// 1024 x 2 bytes = 8,388,608, as before) and, under Megatron-Core, the dense bf16 gradient
// of its 32000 x 1024 = 32,768,000 parameters: zero-filled (2 bytes each), read by the add
// (2) and added to the bf16 main gradient (read 2, write 2): 262,144,000 bytes more.
TEST(MegatronGradChecks, TheEmbeddingsDenseGradientIsFilledAndAddedEachMicroBatch) {
  Experiment e = Zero1(false, true);
  const auto megatron = Simulate(e, {}, testing::FakeModels());
  const std::vector<OpId> bwd = Ops(*megatron, Stream::kCompute, Tag::kEmbeddingBwd);
  ASSERT_EQ(bwd.size(), 2u);  // two micro-batches
  for (OpId id : bwd) EXPECT_EQ(Bytes(*megatron, id), 8'388'608 + 262'144'000.0);
  e.plan.framework = Framework::kFsdp;  // FULL_SHARD
  e.plan.zero = 3;
  e.plan.framework_options = {};
  const auto fsdp = Simulate(e, {}, testing::FakeModels());
  for (OpId id : Ops(*fsdp, Stream::kCompute, Tag::kEmbeddingBwd)) {
    EXPECT_EQ(Bytes(*fsdp, id), 8'388'608.0);
  }
}

}  // namespace
}  // namespace meshsim

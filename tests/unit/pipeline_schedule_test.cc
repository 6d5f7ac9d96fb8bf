// The pipeline bubble, the staircase and the in-flight activation peak must emerge from
// replaying the schedule (shared/validation: closed forms).
#include <gtest/gtest.h>

#include "sim/config/loader.h"
#include "sim/engine/simulation.h"
#include "sim/schedule/pipeline_order.h"
#include "tests/unit/test_fixtures.h"

namespace meshsim {
namespace {

using testing::SmallPipeline;

// The step on FLOPs-only compute and a free network (testing::FakeModels).
std::unique_ptr<Simulation> ReplayExperiment(const Experiment& e) {
  return Simulate(e, {}, testing::FakeModels());
}

double ClosedFormBubble(int p, int m, int v = 1) {
  return static_cast<double>(p - 1) / (v * m + p - 1);
}

TEST(PipelineBubble, GpipeMatchesClosedForm) {
  const auto r = ReplayExperiment(SmallPipeline(4, 8, ScheduleKind::kGpipe));
  ASSERT_TRUE(r->replay.completed) << r->replay.stall;
  EXPECT_NEAR(r->stats.bubble_fraction, ClosedFormBubble(4, 8), 0.01 * ClosedFormBubble(4, 8));
}

TEST(PipelineBubble, OneFOneBMatchesClosedForm) {
  const auto r = ReplayExperiment(SmallPipeline(4, 8, ScheduleKind::kOneFOneB));
  ASSERT_TRUE(r->replay.completed) << r->replay.stall;
  EXPECT_NEAR(r->stats.bubble_fraction, ClosedFormBubble(4, 8), 0.01 * ClosedFormBubble(4, 8));
}

TEST(PipelineBubble, InterleavedMatchesClosedForm) {
  const auto r = ReplayExperiment(SmallPipeline(4, 8, ScheduleKind::kInterleaved, 2));
  ASSERT_TRUE(r->replay.completed) << r->replay.stall;
  EXPECT_NEAR(r->stats.bubble_fraction, ClosedFormBubble(4, 8, 2),
              0.01 * ClosedFormBubble(4, 8, 2));
  EXPECT_LT(r->stats.bubble_fraction, ClosedFormBubble(4, 8));
}

TEST(PipelineBubble, ShrinksWithMoreMicroBatches) {
  const double few =
      ReplayExperiment(SmallPipeline(4, 4, ScheduleKind::kOneFOneB))->stats.bubble_fraction;
  const double many =
      ReplayExperiment(SmallPipeline(4, 16, ScheduleKind::kOneFOneB))->stats.bubble_fraction;
  EXPECT_NEAR(few, ClosedFormBubble(4, 4), 0.01 * ClosedFormBubble(4, 4));
  EXPECT_NEAR(many, ClosedFormBubble(4, 16), 0.01 * ClosedFormBubble(4, 16));
}

TEST(PipelineBubble, StepTimeIsMPlusPMinusOneStageTimes) {
  // Equal stages, free network: the pipeline ends after (m + p - 1) * (t_f + t_b).
  const Experiment e = SmallPipeline(4, 8, ScheduleKind::kOneFOneB);
  const auto r = ReplayExperiment(e);
  SimTime stage_busy = SimTime::Zero();
  for (OpId id : r->program.StreamOps(1, Stream::kCompute)) {
    const Op& op = r->program.op(id);
    if (op.kind == OpKind::kCompute) stage_busy += r->replay.end[id] - r->replay.start[id];
  }
  const double per_micro_batch = stage_busy.seconds() / 8;
  EXPECT_NEAR(r->stats.pipeline_end_s, (8 + 4 - 1) * per_micro_batch,
              1e-3 * r->stats.pipeline_end_s);
}

// The first forward of stage s starts after s forward stage-times: the staircase.
TEST(PipelineBubble, ForwardStartsFormAStaircase) {
  const auto r = ReplayExperiment(SmallPipeline(4, 8, ScheduleKind::kGpipe));
  std::vector<double> first_start;
  double forward_time = 0;
  for (int stage = 0; stage < 4; ++stage) {
    bool found = false;
    for (OpId id : r->program.StreamOps(stage, Stream::kCompute)) {
      const Op& op = r->program.op(id);
      if (op.kind != OpKind::kCompute || op.micro_batch != 0) continue;
      if (op.tag == Tag::kAttentionFwd || op.tag == Tag::kMlpFwd) {
        if (!found) first_start.push_back(r->replay.start[id].seconds());
        found = true;
        if (stage == 0) forward_time += (r->replay.end[id] - r->replay.start[id]).seconds();
      }
    }
    ASSERT_TRUE(found);
  }
  for (int stage = 0; stage < 4; ++stage) {
    EXPECT_NEAR(first_start[stage], stage * forward_time, 1e-9) << "stage " << stage;
  }
}

double PeakActivations(const ReplayResult& r, int rank) {
  return r.memory[rank].at_peak[static_cast<int>(MemCategory::kActivations)];
}

double ActivationsPerMicroBatchOnStage(const Experiment& e, int layers_on_stage) {
  LayerShape shape{e.model.seq_len,          e.plan.micro_batch, e.plan.tp,
                   e.plan.sequence_parallel, e.plan.recompute,   e.plan.recompute_modules,
                   e.training.dtype};
  return layers_on_stage * StoredActivationBytesPerLayer(e.model, shape);
}

TEST(PipelineMemory, OneFOneBFirstStageHoldsPpMicroBatches) {
  const Experiment e = SmallPipeline(4, 8, ScheduleKind::kOneFOneB);
  const auto r = ReplayExperiment(e);
  const double per_mb = ActivationsPerMicroBatchOnStage(e, 2);
  EXPECT_NEAR(PeakActivations(r->replay, 0) / per_mb, 4.0, 0.01);
  // The last stage runs one forward then its backward: one micro-batch in flight, plus the
  // (tiny) logits.
  EXPECT_NEAR(PeakActivations(r->replay, 3) / per_mb, 1.0, 0.01);
}

TEST(PipelineMemory, GpipeHoldsAllMicroBatches) {
  const Experiment e = SmallPipeline(4, 8, ScheduleKind::kGpipe);
  const auto r = ReplayExperiment(e);
  const double per_mb = ActivationsPerMicroBatchOnStage(e, 2);
  for (int stage = 0; stage < 4; ++stage) {
    EXPECT_NEAR(PeakActivations(r->replay, stage) / per_mb, 8.0, 0.01) << "stage " << stage;
  }
}

TEST(PipelineMemory, InterleavedAddsInFlightChunks) {
  // Korthikanti et al.: interleaving multiplies the first stage's in-flight activations
  // by 1 + (p-1)/(p*v).
  const int p = 4, v = 2;
  const Experiment e = SmallPipeline(p, 8, ScheduleKind::kInterleaved, v);
  const auto r = ReplayExperiment(e);
  const double per_mb_stage = ActivationsPerMicroBatchOnStage(e, 2);  // 8 layers / 4 stages
  const double expected = p * (1.0 + (p - 1.0) / (p * v));
  EXPECT_NEAR(PeakActivations(r->replay, 0) / per_mb_stage, expected, 0.01);
}

TEST(PipelineOrder, EveryStageRunsEachPassOnce) {
  for (ScheduleKind kind :
       {ScheduleKind::kGpipe, ScheduleKind::kOneFOneB, ScheduleKind::kInterleaved}) {
    const int v = kind == ScheduleKind::kInterleaved ? 3 : 1;
    for (int stage = 0; stage < 4; ++stage) {
      const auto steps = StageOrder(kind, 4, v, 8, stage);
      ASSERT_EQ(steps.size(), 2u * 8 * v);
      std::vector<int> fwd(8 * v, 0), bwd(8 * v, 0);
      for (const PipelineStep& s : steps) {
        auto& seen = s.forward ? fwd : bwd;
        ++seen[s.chunk * 8 + s.micro_batch];
        if (!s.forward) {
          EXPECT_EQ(fwd[s.chunk * 8 + s.micro_batch], 1) << "backward before forward";
        }
      }
      for (int i = 0; i < 8 * v; ++i) {
        EXPECT_EQ(fwd[i], 1);
        EXPECT_EQ(bwd[i], 1);
      }
    }
  }
}

TEST(PipelineOrder, OneFOneBWarmupIsPMinusStageMinusOne) {
  const auto steps = StageOrder(ScheduleKind::kOneFOneB, 4, 1, 8, 1);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(steps[i].forward) << i;  // 2 warm-up + first steady
  EXPECT_FALSE(steps[3].forward);
}

// A pipeline send carries a finished tensor: under sequence parallelism the stage's output
// (and its input gradient) is complete once its last TP reduce-scatter is, so every send
// starts after the TP collectives of its micro-batch that started before (or with) it have
// ended.
TEST(PipelineSends, WaitForTheirTensorsTpReduction) {
  Result<Experiment> e = LoadExperimentFile(
      std::string(MESHSIM_SOURCE_DIR) + "/workloads/experiments/llama3-70b-fp8-h100.yaml",
      {"plan.global_batch=32", "cluster.network_model=alpha_beta"});
  ASSERT_TRUE(e.ok()) << e.error().ToString();
  const auto r = Simulate(e.value());
  ASSERT_TRUE(r->replay.completed) << r->replay.stall;
  int sends = 0, early = 0;
  for (int rank = 0; rank < r->program.Ranks(); ++rank) {
    for (Stream s : {Stream::kSendNext, Stream::kSendPrev}) {
      for (OpId send : r->program.StreamOps(rank, s)) {
        ++sends;
        const SimTime start = r->replay.start[send];
        for (OpId tp : r->program.StreamOps(rank, Stream::kTp)) {
          early += r->program.op(tp).micro_batch == r->program.op(send).micro_batch &&
                   r->replay.start[tp] <= start && r->replay.end[tp] > start;
        }
      }
    }
  }
  EXPECT_GT(sends, 0);
  EXPECT_EQ(early, 0) << "of " << sends << " sends";
}

// Megatron overlaps pipeline sends only under the interleaved schedule: asking for it
// with 1F1B is an error that names the key; the interleaved schedule takes it.
TEST(PipelineSends, MegatronOverlapsOnlyInterleavedSends) {
  const std::string path =
      std::string(MESHSIM_SOURCE_DIR) + "/workloads/experiments/llama3-70b-fp8-h100.yaml";
  auto error = [&](const std::vector<std::string>& sets) {
    Result<Experiment> e = LoadExperimentFile(path, sets);
    return e.ok() ? std::string() : e.error().ToString();
  };
  const std::vector<std::string> one_f_one_b = {"plan.schedule=1f1b", "plan.virtual_stages=1"};
  std::vector<std::string> overlapped = one_f_one_b;
  overlapped.push_back("plan.overlap_p2p=true");
  const std::string bad = error(overlapped);
  EXPECT_NE(bad.find("plan.overlap_p2p"), std::string::npos) << bad;
  EXPECT_NE(bad.find("1f1b"), std::string::npos) << bad;
  EXPECT_EQ(error(one_f_one_b), "");
  EXPECT_EQ(error({"plan.overlap_p2p=true"}), "");  // its interleaved schedule
}

}  // namespace
}  // namespace meshsim

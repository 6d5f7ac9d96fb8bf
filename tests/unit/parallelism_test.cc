// TP, DP, ZeRO and recompute replay what Megatron-LM / DeepSpeed do, checked against
// closed forms (shared/validation) on small experiments.
#include <gtest/gtest.h>

#include <algorithm>

#include "sim/engine/simulation.h"
#include "sim/net/alpha_beta.h"
#include "sim/schedule/model_states.h"
#include "sim/workload/transformer.h"
#include "tests/unit/test_fixtures.h"

namespace meshsim {
namespace {

// A small model on `nodes` x 8 GPUs, pure data parallel, one micro-batch per rank.
Experiment DataParallel(int nodes, int zero) {
  Experiment e;
  e.name = "dp";
  e.model = testing::SmallModel();
  e.model.vocab = 32000;
  e.cluster = testing::OneNode(8);
  e.cluster.nodes = nodes;
  e.plan.dp = 8 * nodes;
  e.plan.zero = zero;
  e.plan.global_batch = 8 * nodes;
  return e;
}

// Psi of DataParallel's model, written out: 8 layers of attention 4h^2, GeLU MLP 2 * h *
// 4096 and two norms 2h (h = 1024): 8 * (4,194,304 + 8,388,608 + 2,048) = 100,679,680;
// input and output embeddings 2 * 32000 * 1024 = 65,536,000; the final norm 1024.
constexpr double kPsi = 166216704;
// bf16 weights and gradients (the default training: grad_accum_dtype same).
constexpr double kBytesPerParam = 2;
// The volumes below hold to 1e-5: the final norm's 1024 parameters (6e-6 of Psi) belong to
// no stage's parameters, so their gradients are not reduced.
constexpr double kTolerance = 1e-5;

double SentDp(const Simulation& sim, int rank) {
  return sim.stats.ranks[rank].sent_bytes[static_cast<int>(CommClass::kDp)];
}

TEST(DataParallel, AllReduceVolumeIsTwoPsiTimesNMinusOneOverN) {
  const Experiment e = DataParallel(2, 0);
  const auto sim = Simulate(e);
  const double n = 16;
  const double expected = 2 * kPsi * kBytesPerParam * (n - 1) / n;
  for (int r : {0, 5, 15}) EXPECT_NEAR(SentDp(*sim, r), expected, kTolerance * expected) << r;
}

TEST(DataParallel, ZeroThreeVolumeIsAboutThreePsi) {
  const Experiment e = DataParallel(2, 3);
  const auto sim = Simulate(e);
  const double n = 16;
  // All-gather in forward, all-gather in backward, reduce-scatter of gradients.
  const double expected = 3 * kPsi * kBytesPerParam * (n - 1) / n;
  EXPECT_NEAR(SentDp(*sim, 0), expected, kTolerance * expected);
}

TEST(DataParallel, ZeroOneReduceScattersThenGathersParameters) {
  const Experiment e = DataParallel(1, 1);
  const auto sim = Simulate(e);
  const double n = 8;
  // Reduce-scatter of the bf16 gradients, all-gather of the bf16 parameters.
  const double expected = (kBytesPerParam + kBytesPerParam) * kPsi * (n - 1) / n;
  EXPECT_NEAR(SentDp(*sim, 0), expected, kTolerance * expected);
}

// Spans of one rank's ops with a given predicate.
template <typename Pred>
std::vector<std::pair<double, double>> Spans(const Simulation& sim, int rank, Pred pred) {
  std::vector<std::pair<double, double>> out;
  for (size_t i = 0; i < sim.program.OpCount(); ++i) {
    const Op& op = sim.program.op(static_cast<OpId>(i));
    if (op.rank == rank && pred(op)) {
      out.emplace_back(sim.replay.start[i].seconds(), sim.replay.end[i].seconds());
    }
  }
  return out;
}

bool IsBackwardCompute(const Op& op) {
  return op.kind == OpKind::kCompute && (op.tag == Tag::kAttentionBwd || op.tag == Tag::kMlpBwd ||
                                         op.tag == Tag::kAttentionWgrad ||
                                         op.tag == Tag::kMlpWgrad || op.tag == Tag::kEmbeddingBwd);
}

TEST(DataParallel, GradientBucketsOverlapBackwardAcrossNodes) {
  Experiment e = DataParallel(2, 0);
  e.plan.dp_bucket_bytes = 5'000'000;
  const auto sim = Simulate(e);
  const auto buckets = Spans(*sim, 0, [](const Op& op) { return op.tag == Tag::kDpGradReduce; });
  const auto backward = Spans(*sim, 0, IsBackwardCompute);
  ASSERT_GT(buckets.size(), 3u);
  int overlapping = 0;
  double dp_total = 0;
  for (const auto& [b0, b1] : buckets) {
    dp_total += b1 - b0;
    for (const auto& [c0, c1] : backward) {
      if (b0 < c1 && c0 < b1) {
        ++overlapping;
        break;
      }
    }
  }
  // Every bucket but the last (the embedding's, after the last backward kernel) runs
  // during backward compute.
  EXPECT_GE(overlapping, static_cast<int>(buckets.size()) - 1);
  const double exposed = sim->stats.ranks[0].breakdown.exposed_dp_s;
  EXPECT_LT(exposed, dp_total);
  EXPECT_GT(exposed, 0.0);  // the last bucket cannot hide
}

TEST(Zero3, GathersEveryLayerInForwardAndBackwardWithPrefetch) {
  const Experiment e = DataParallel(1, 3);
  const auto sim = Simulate(e);
  for (int layer = 0; layer < e.model.layers; ++layer) {
    const auto gathers = Spans(
        *sim, 0, [layer](const Op& op) { return op.tag == Tag::kZeroGather && op.layer == layer; });
    EXPECT_EQ(gathers.size(), 2u) << "layer " << layer;  // forward and backward
  }
  // The gather of layer 1 runs while layer 0 computes (one-layer prefetch).
  const auto gather1 =
      Spans(*sim, 0, [](const Op& op) { return op.tag == Tag::kZeroGather && op.layer == 1; });
  const auto layer0 = Spans(*sim, 0, [](const Op& op) {
    return op.kind == OpKind::kCompute && op.layer == 0 && op.tag == Tag::kMlpFwd;
  });
  EXPECT_LT(gather1.front().first, layer0.front().second);
  // The gathered buffers appear in the memory peak, which is at the logits (the end of
  // forward, vocabulary 32000): the output layer's weights gathered for them and, one
  // gather ahead, the same weights gathered again for their backward: 2 x 32000 x 1024
  // bf16 parameters (a layer, 4h^2 + 2 * h * 4096 + 2h = 12,584,960, is smaller).
  EXPECT_DOUBLE_EQ(sim->replay.memory[0].at_peak[static_cast<int>(MemCategory::kBuffers)],
                   2 * 32000.0 * 1024 * 2);
}

TEST(Zero, PeakMemoryOrderedByStage) {
  double previous = 1e300;
  for (int zero = 0; zero <= 3; ++zero) {
    const auto sim = Simulate(DataParallel(1, zero));
    EXPECT_LT(sim->replay.memory[0].peak_bytes, previous) << "stage " << zero;
    previous = sim->replay.memory[0].peak_bytes;
  }
}

Experiment TensorParallel(bool sp, Recompute rc) {
  Experiment e;
  e.name = "tp";
  e.model = testing::SmallModel();
  e.cluster = testing::OneNode(4);
  e.plan.tp = 4;
  e.plan.sequence_parallel = sp;
  e.plan.recompute = rc;
  e.plan.global_batch = 1;
  return e;
}

int CountComm(const Simulation& sim, int rank, CommOp op, int layer) {
  int n = 0;
  for (const Op& o : sim.program.ops()) {
    if (o.rank == rank && o.kind == OpKind::kComm && o.stream == Stream::kTp && o.layer == layer &&
        sim.program.comms()[o.comm].op == op) {
      ++n;
    }
  }
  return n;
}

TEST(TensorParallel, TwoAllReducesPerLayerEachWay) {
  const auto sim = Simulate(TensorParallel(false, Recompute::kNone));
  for (int layer : {0, 3, 7}) {
    EXPECT_EQ(CountComm(*sim, 0, CommOp::kAllReduce, layer), 4) << layer;
    EXPECT_EQ(CountComm(*sim, 0, CommOp::kAllGather, layer), 0) << layer;
  }
}

TEST(TensorParallel, SequenceParallelUsesGatherAndScatter) {
  const auto sim = Simulate(TensorParallel(true, Recompute::kNone));
  // Forward: all-gather + reduce-scatter per block; backward: all-gather of the output
  // gradient, re-gather of the input, reduce-scatter of the input gradient.
  EXPECT_EQ(CountComm(*sim, 0, CommOp::kAllReduce, 2), 0);
  EXPECT_EQ(CountComm(*sim, 0, CommOp::kReduceScatter, 2), 4);
  EXPECT_EQ(CountComm(*sim, 0, CommOp::kAllGather, 2), 6);
}

TEST(TensorParallel, FullRecomputeRepeatsForwardCollectives) {
  const auto sim = Simulate(TensorParallel(false, Recompute::kFull));
  EXPECT_EQ(CountComm(*sim, 0, CommOp::kAllReduce, 4), 6);
}

TEST(Recompute, FullAddsAForwardOfFlopsAndCutsActivations) {
  const auto none = Simulate(TensorParallel(false, Recompute::kNone));
  const auto full = Simulate(TensorParallel(false, Recompute::kFull));
  const auto sel = Simulate(TensorParallel(false, Recompute::kSelective));
  const RankStats& n = none->stats.ranks[0];
  const RankStats& f = full->stats.ranks[0];
  const RankStats& s = sel->stats.ranks[0];
  EXPECT_DOUBLE_EQ(n.recompute_flops, 0.0);
  // Full recompute re-runs the layers' forward: about a third of the model FLOPs.
  EXPECT_NEAR(f.recompute_flops / f.model_flops, 1.0 / 3, 0.01);
  // Selective recompute re-runs the attention core: 4 * b * s^2 * h / t FLOPs a layer
  // (scores and context, s = h = 1024, t = 4), 8 layers.
  EXPECT_DOUBLE_EQ(s.recompute_flops, 8 * 4.0 * 1024 * 1024 * 1024 / 4);
  EXPECT_LT(s.recompute_flops, f.recompute_flops);
  EXPECT_GT(full->replay.step_time, sel->replay.step_time);
  EXPECT_GT(sel->replay.step_time, none->replay.step_time);
  const int act = static_cast<int>(MemCategory::kActivations);
  EXPECT_LT(full->replay.memory[0].at_peak[act], sel->replay.memory[0].at_peak[act]);
  EXPECT_LT(sel->replay.memory[0].at_peak[act], none->replay.memory[0].at_peak[act]);
}

TEST(AlphaBeta, LargeAllReduceReachesBusBandwidth) {
  ClusterSpec c = testing::OneNode(8);
  c.efficiency.network = 1.0;
  AlphaBetaCollectiveModel model(c);
  const std::vector<int> gpus{0, 1, 2, 3, 4, 5, 6, 7};
  const double bytes = 1 << 30;
  const double t = model.Cost(CommOp::kAllReduce, gpus, bytes).duration.seconds();
  const double busbw = bytes / t * 2 * 7 / 8;
  EXPECT_NEAR(busbw / 1e9, c.intra_node.gbps_per_gpu, 0.01 * c.intra_node.gbps_per_gpu);
}

TEST(AlphaBeta, CrossNodeAllReduceIsHierarchicalAndNicBound) {
  ClusterSpec c = testing::OneNode(8);
  c.nodes = 2;
  c.efficiency.network = 1.0;
  AlphaBetaCollectiveModel model(c, NcclOptions{AllReduceAlgorithm::kHierarchical});
  std::vector<int> gpus(16);
  for (int i = 0; i < 16; ++i) gpus[i] = i;
  const double bytes = 1 << 30;
  const CollectiveCost cost = model.Cost(CommOp::kAllReduce, gpus, bytes);
  // Intra: reduce-scatter + all-gather over NVLink; inter: 2-node all-reduce of 1/8 each
  // over one NIC per GPU.
  const double nvl = c.intra_node.gbps_per_gpu * 1e9, nic = c.inter_node.gbps_per_nic * 1e9;
  const double expected = 2 * (7.0 / 8) * bytes / nvl + 2 * 0.5 * (bytes / 8) / nic;
  EXPECT_NEAR(cost.duration.seconds(), expected, 0.01 * expected);
  EXPECT_NEAR(cost.inter_node_bytes, 16 * 2 * 0.5 * bytes / 8, 1.0);
}

}  // namespace
}  // namespace meshsim

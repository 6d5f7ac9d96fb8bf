// plan.framework: each framework's DP/ZeRO collectives, counted and sized by hand on a
// small model, replayed by the event engine; framework_options decoding and errors; the
// summary's latency/bandwidth split of the DP collectives.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <vector>

#include "sim/config/loader.h"
#include "sim/engine/simulation.h"
#include "sim/report/step_summary.h"
#include "sim/schedule/dp_policy.h"
#include "sim/schedule/stage_costs.h"
#include "tests/unit/test_fixtures.h"

namespace meshsim {
namespace {

// SmallModel (8 layers, h 1024, 16 heads, GeLU ffn 4096) with a 32000-token vocabulary,
// pure data parallel over one node of 8 GPUs, one micro-batch.
//   layer:     attention 4h^2 = 4,194,304 (QKV 3,145,728, output 1,048,576), MLP 2 * 1024 *
//              4096 = 8,388,608 (up 4,194,304, down 4,194,304), two norms 2,048:
//              12,584,960 parameters, 25,169,920 bf16 bytes;
//   embedding: 32000 * 1024 = 32,768,000 parameters, 65,536,000 bytes; the untied output
//              layer the same (pp 1: the unit gathered for the embedding and for the logits).
Experiment Dp8(Framework framework, int zero) {
  Experiment e;
  e.name = "frameworks";
  e.model = testing::SmallModel();
  e.model.vocab = 32000;
  e.cluster = testing::OneNode(8);
  e.plan.dp = 8;
  e.plan.zero = zero;
  e.plan.global_batch = 8;
  e.plan.framework = framework;
  return e;
}

constexpr double kLayerBytes = 25'169'920;
constexpr double kEmbeddingBytes = 65'536'000;

// Rank 0's collectives with `tag`, in issue order: op and bytes.
std::vector<std::pair<CommOp, double>> Collectives(const Simulation& sim, Tag tag) {
  std::vector<std::pair<CommOp, double>> out;
  for (Stream s : {Stream::kDp, Stream::kDpGather}) {
    for (OpId id : sim.program.StreamOps(0, s)) {
      const Op& op = sim.program.op(id);
      if (op.kind == OpKind::kComm && op.tag == tag) {
        const Comm& c = sim.program.comms()[op.comm];
        out.emplace_back(c.op, c.bytes);
        EXPECT_GE(sim.replay.end[id], sim.replay.start[id]);  // replayed
      }
    }
  }
  return out;
}

// Bytes -> how many collectives of that size.
std::map<double, int> Sizes(const std::vector<std::pair<CommOp, double>>& list, CommOp op) {
  std::map<double, int> sizes;
  for (const auto& [o, bytes] : list) {
    EXPECT_EQ(o, op);
    ++sizes[bytes];
  }
  return sizes;
}

int Count(const Simulation& sim, Tag tag) {
  int n = 0;
  for (OpId id : sim.program.StreamOps(0, Stream::kCompute)) n += sim.program.op(id).tag == tag;
  return n;
}

TEST(Frameworks, FsdpGathersEachUnitTwiceAndReduceScattersItOnce) {
  const auto sim = Simulate(Dp8(Framework::kFsdp, 3), {}, testing::FakeModels());
  // FULL_SHARD: forward gathers the embedding, 8 layers, the logits' unit (10); backward
  // the logits' unit, 8 layers, the embedding (10).
  EXPECT_EQ(Sizes(Collectives(*sim, Tag::kZeroGather), CommOp::kAllGather),
            (std::map<double, int>{{kLayerBytes, 16}, {kEmbeddingBytes, 4}}));
  // One reduce-scatter per unit after its backward: the output layer, 8 layers, the
  // embedding.
  EXPECT_EQ(Sizes(Collectives(*sim, Tag::kDpGradReduce), CommOp::kReduceScatter),
            (std::map<double, int>{{kLayerBytes, 8}, {kEmbeddingBytes, 2}}));
  EXPECT_EQ(Count(*sim, Tag::kParamCopy), 0);
}

TEST(Frameworks, FsdpShardGradOpGathersOnlyInForward) {
  const auto sim = Simulate(Dp8(Framework::kFsdp, 2), {}, testing::FakeModels());
  EXPECT_EQ(Sizes(Collectives(*sim, Tag::kZeroGather), CommOp::kAllGather),
            (std::map<double, int>{{kLayerBytes, 8}, {kEmbeddingBytes, 2}}));
  EXPECT_EQ(Collectives(*sim, Tag::kDpGradReduce).size(), 10u);
}

TEST(Frameworks, Fsdp2CopiesOutEveryGatherAndCopiesInEveryReduction) {
  const auto sim = Simulate(Dp8(Framework::kFsdp2, 3), {}, testing::FakeModels());
  EXPECT_EQ(Collectives(*sim, Tag::kZeroGather).size(), 20u);
  EXPECT_EQ(Collectives(*sim, Tag::kDpGradReduce).size(), 10u);
  EXPECT_EQ(Count(*sim, Tag::kParamCopy), 20 + 10);
}

TEST(Frameworks, DeepSpeedZero3FetchesCoalescedSubmodules) {
  Experiment e = Dp8(Framework::kDeepSpeed, 3);
  // 5e6: QKV + output projection (4,194,304) fit; the up projection would not (8.4e6), nor
  // up + down: three fetches of 4,194,304 parameters (8,388,608 bytes) per layer; the
  // norms (1,024 each) are under the persistence threshold. The embedding unit
  // (32,768,000) is larger than the bucket: one fetch of its own.
  e.plan.framework_options.stage3_prefetch_bucket_size = 5e6;
  // 3e7 elements = 6e7 bytes of gradients per reduction. Backward hands over the output
  // layer (65,536,000 bytes: full at once), then layers of 25,169,920 bytes: three fill a
  // bucket (75,509,760) twice; the last two layers (50,339,840) and the embedding
  // (65,536,000) are flushed together: 115,875,840.
  e.plan.framework_options.reduce_bucket_size = 3e7;
  const auto sim = Simulate(e, {}, testing::FakeModels());
  EXPECT_EQ(Sizes(Collectives(*sim, Tag::kZeroGather), CommOp::kAllGather),
            (std::map<double, int>{{8'388'608, 2 * 8 * 3}, {kEmbeddingBytes, 4}}));
  EXPECT_EQ(Sizes(Collectives(*sim, Tag::kDpGradReduce), CommOp::kReduceScatter),
            (std::map<double, int>{{65'536'000, 1}, {75'509'760, 2}, {115'875'840, 1}}));
}

TEST(Frameworks, DeepSpeedZero1GathersParametersInAllgatherBuckets) {
  Experiment e = Dp8(Framework::kDeepSpeed, 1);
  // Parameters: 8 layers, the embedding and the output layer, 100,679,680 + 2 * 32,768,000
  // = 166,215,680 (332,431,360 bytes); 1e8 elements per all-gather = 2e8 bytes:
  // 200,000,000 and 132,431,360.
  e.plan.framework_options.allgather_bucket_size = 1e8;
  const auto sim = Simulate(e, {}, testing::FakeModels());
  EXPECT_EQ(Sizes(Collectives(*sim, Tag::kZeroGather), CommOp::kAllGather),
            (std::map<double, int>{{200'000'000, 1}, {132'431'360, 1}}));
  // Default reduce bucket 5e8 elements = 1e9 bytes > all gradients: one reduce-scatter.
  EXPECT_EQ(Sizes(Collectives(*sim, Tag::kDpGradReduce), CommOp::kReduceScatter),
            (std::map<double, int>{{332'431'360, 1}}));
}

TEST(Frameworks, MegatronOverlapParamGatherCutsTheGatherIntoBuckets) {
  Experiment e = Dp8(Framework::kMegatron, 1);
  const auto plain = Simulate(e, {}, testing::FakeModels());
  // One all-gather of every parameter after the optimizer.
  EXPECT_EQ(Sizes(Collectives(*plain, Tag::kZeroGather), CommOp::kAllGather),
            (std::map<double, int>{{332'431'360, 1}}));
  e.plan.framework_options.overlap_param_gather = true;
  const auto sim = Simulate(e, {}, testing::FakeModels());
  // Buckets of dp_bucket_mb 25 MB / 2 bytes = 12.5e6 parameters in forward order: the
  // embedding (32.8e6) alone, each layer (12.58e6) alone, the output layer alone.
  EXPECT_EQ(Sizes(Collectives(*sim, Tag::kZeroGather), CommOp::kAllGather),
            (std::map<double, int>{{kLayerBytes, 8}, {kEmbeddingBytes, 2}}));
}

// Rank 0's ops on `stream` with `tag`, in issue order.
std::vector<OpId> Ops(const Simulation& sim, Stream stream, Tag tag) {
  std::vector<OpId> out;
  for (OpId id : sim.program.StreamOps(0, stream)) {
    if (sim.program.op(id).tag == tag) out.push_back(id);
  }
  return out;
}

// Megatron-Core's forward pre-hooks (distributed_data_parallel.py, finish_param_sync in
// param_and_grad_buffer.py): the first bucket's all-gather at the step's start; a bucket's
// first use waits for its gather, then issues the next bucket's: one bucket ahead.
TEST(Frameworks, MegatronOverlapParamGatherRunsOneBucketAheadOfTheForward) {
  Experiment e = Dp8(Framework::kMegatron, 1);
  e.plan.framework_options.overlap_param_gather = true;
  const auto sim = Simulate(e, {}, testing::FakeModels());
  const Simulation& s = *sim;
  // Buckets (25 MB / 2 bytes = 12.5e6 parameters, each unit larger): the embedding, the 8
  // layers, the output layer, gathered in forward order.
  const std::vector<OpId> gathers = Ops(s, Stream::kDpGather, Tag::kZeroGather);
  ASSERT_EQ(gathers.size(), 10u);
  const auto bytes = [&](OpId id) { return s.program.comms()[s.program.op(id).comm].bytes; };
  EXPECT_EQ(bytes(gathers[0]), kEmbeddingBytes);
  for (int i = 1; i <= 8; ++i) EXPECT_EQ(bytes(gathers[i]), kLayerBytes);
  EXPECT_EQ(bytes(gathers[9]), kEmbeddingBytes);
  // The embedding's forward waits for its own bucket only, not for the output layer's
  // (the same slot before); the logits wait for the output layer's.
  const OpId embedding = Ops(s, Stream::kCompute, Tag::kEmbeddingFwd).front();
  const OpId logits = Ops(s, Stream::kCompute, Tag::kLogitsFwd).front();
  EXPECT_GE(s.replay.start[embedding], s.replay.end[gathers[0]]);
  EXPECT_LT(s.replay.start[embedding], s.replay.end[gathers[9]]);
  EXPECT_GE(s.replay.start[logits], s.replay.end[gathers[9]]);
  // Layer l's bucket (gather l + 1) is issued by layer l - 1's pre-hook: after the compute
  // before layer l - 1's first forward op (layer 8: the output layer's bucket). Layer 0's
  // by the embedding's, at the start.
  const StreamRange stream = s.program.StreamOps(0, Stream::kCompute);
  const std::vector<OpId> compute(stream.begin(), stream.end());
  for (int layer = 1; layer <= 8; ++layer) {
    const auto first = std::find_if(compute.begin(), compute.end(), [&](OpId id) {
      return s.program.op(id).layer == layer - 1 && s.program.op(id).micro_batch == 0;
    });
    ASSERT_NE(first, compute.begin());
    EXPECT_GE(s.replay.start[gathers[layer + 1]], s.replay.end[*(first - 1)]) << layer;
  }
}

// The one forward and one backward loss op of rank 0's single micro-batch (Dp8), and their work.
struct LossWork {
  KernelWork forward, backward;
};
LossWork LossWorkOf(const Simulation& sim) {
  const std::vector<OpId> fwd = Ops(sim, Stream::kCompute, Tag::kLogitsFwd);
  const std::vector<OpId> bwd = Ops(sim, Stream::kCompute, Tag::kLogitsBwd);
  EXPECT_EQ(fwd.size(), 1u);
  EXPECT_EQ(bwd.size(), 1u);
  if (fwd.empty() || bwd.empty()) return {};
  return {sim.program.WorkOf(sim.program.op(fwd[0])), sim.program.WorkOf(sim.program.op(bwd[0]))};
}

// The loss over the fp32 logits as Megatron-Core's fused cross entropy runs it: Dp8's
// micro-batch of 1 x 1024 tokens over a 32000-token vocabulary (tp 1) is 32,768,000
// logits; forward 26 bytes each = 851,968,000, backward 14 = 458,752,000.
TEST(Frameworks, TheLossMovesTheLogitsAsTheFusedCrossEntropyDoes) {
  const auto sim = Simulate(Dp8(Framework::kMegatron, 1), {}, testing::FakeModels());
  const LossWork loss = LossWorkOf(*sim);
  EXPECT_EQ(loss.forward.bytes, 851'968'000);
  EXPECT_EQ(loss.backward.bytes, 458'752'000);
  // FLOPs: 2 * 1024 * 1024 * 32000 forward, twice that backward.
  EXPECT_EQ(loss.forward.flops, 67'108'864'000);
  EXPECT_EQ(loss.backward.flops, 134'217'728'000);
}

// Megatron-LM's default, unfused cross entropy (training.cross_entropy_fusion false) makes
// separate in-place passes over the fp32 logits: forward 38 bytes each = 1,245,184,000;
// backward as fused, 14 = 458,752,000.
TEST(Frameworks, TheUnfusedLossMovesTwelveMoreBytesPerLogitForward) {
  Experiment e = Dp8(Framework::kMegatron, 1);
  e.training.cross_entropy_fusion = false;
  const auto sim = Simulate(e, {}, testing::FakeModels());
  const LossWork loss = LossWorkOf(*sim);
  EXPECT_EQ(loss.forward.bytes, 1'245'184'000);
  EXPECT_EQ(loss.backward.bytes, 458'752'000);
}

// Transformer Engine's cross entropy (training.cross_entropy_fusion_impl te, Megatron-Bridge's
// recipes) reads the bf16 logits twice and writes their gradient over them: forward 6 bytes
// per logit = 196,608,000, backward (the in-place scaling) 4 = 131,072,000; the loss keeps
// the bf16 logits (2 bytes each) for backward instead of fp32 ones (4).
TEST(Frameworks, TransformerEnginesLossOverwritesTheBf16LogitsWithTheirGradient) {
  Experiment e = Dp8(Framework::kMegatron, 1);
  e.training.cross_entropy_impl = CrossEntropyImpl::kTe;
  const auto sim = Simulate(e, {}, testing::FakeModels());
  const LossWork loss = LossWorkOf(*sim);
  EXPECT_EQ(loss.forward.bytes, 196'608'000);
  EXPECT_EQ(loss.backward.bytes, 131'072'000);
  EXPECT_EQ(loss.forward.flops, 67'108'864'000);
  EXPECT_EQ(StageCosts(e.model, e.plan, e.training).LogitBytes(), 2.0 * 32'768'000);
  const Experiment native = Dp8(Framework::kMegatron, 1);
  EXPECT_EQ(StageCosts(native.model, native.plan, native.training).LogitBytes(), 4.0 * 32'768'000);
  // Unfused, the implementation is not read: the fp32 passes of Megatron-Core's loss.
  e.training.cross_entropy_fusion = false;
  EXPECT_EQ(StageCosts(e.model, e.plan, e.training).LogitBytes(), 4.0 * 32'768'000);
}

TEST(Frameworks, TransformerEnginesLossNeedsTheFusedLoss) {
  const std::string text =
      "name: x\nmodel: ../models/llama3-8b.yaml\ncluster: ../../topologies/dgx-h100.yaml\n"
      "cluster_overrides: {nodes: 1}\nplan: {tp: 8, global_batch: 8}\n"
      "training: {cross_entropy_fusion: false, cross_entropy_fusion_impl: te}\n";
  const std::string path = std::string(MESHSIM_SOURCE_DIR) + "/workloads/experiments/test.yaml";
  Result<Experiment> e = LoadExperimentText(text, path, {});
  ASSERT_FALSE(e.ok());
  const std::string message = e.error().ToString();
  EXPECT_NE(message.find("training.cross_entropy_fusion_impl"), std::string::npos) << message;
  std::string fused = text;
  fused.replace(fused.find("false"), 5, "true");
  Result<Experiment> ok = LoadExperimentText(fused, path, {});
  ASSERT_TRUE(ok.ok()) << ok.error().ToString();
  EXPECT_EQ(ok.value().training.cross_entropy_impl, CrossEntropyImpl::kTe);
}

// PyTorch's F.cross_entropy, as NeMo-Automodel's MaskedCrossEntropy calls it
// (training.cross_entropy_fusion_impl torch: fp32_upcast false): log_softmax reads each
// bf16 logit three times and writes it once (cunn_SoftMaxForward: the vocabulary row is too
// long for the shared-memory kernel), 8 bytes = 262,144,000; backward nll_loss zero-fills
// its gradient (2) and cunn_SoftMaxBackward reads three times and writes once (8): 10 =
// 327,680,000. The loss keeps the bf16 logits and log_softmax's bf16 output: 4 bytes each.
// torch_fp32 (fp32_upcast true) runs the same kernels on fp32 (16 and 4 + 16) with the cast
// (6 forward, its backward 6): 22 = 720,896,000 and 26 = 851,968,000, keeping 2 + 4 bytes.
TEST(Frameworks, PyTorchsCrossEntropyReadsEachLogitThreeTimes) {
  Experiment e = Dp8(Framework::kFsdp2, 3);
  e.training.cross_entropy_impl = CrossEntropyImpl::kTorch;
  const auto sim = Simulate(e, {}, testing::FakeModels());
  const LossWork loss = LossWorkOf(*sim);
  EXPECT_EQ(loss.forward.bytes, 262'144'000);
  EXPECT_EQ(loss.backward.bytes, 327'680'000);
  EXPECT_EQ(loss.forward.flops, 67'108'864'000);
  EXPECT_EQ(loss.backward.flops, 134'217'728'000);
  EXPECT_EQ(StageCosts(e.model, e.plan, e.training).LogitBytes(), 4.0 * 32'768'000);
  e.training.cross_entropy_impl = CrossEntropyImpl::kTorchFp32;
  const auto fp32 = Simulate(e, {}, testing::FakeModels());
  const LossWork upcast = LossWorkOf(*fp32);
  EXPECT_EQ(upcast.forward.bytes, 720'896'000);
  EXPECT_EQ(upcast.backward.bytes, 851'968'000);
  EXPECT_EQ(StageCosts(e.model, e.plan, e.training).LogitBytes(), 6.0 * 32'768'000);
  // Megatron-Core's fused loss over fp32 logits, meshsim's default, moves 26 and 14.
  const auto native = Simulate(Dp8(Framework::kFsdp2, 3), {}, testing::FakeModels());
  EXPECT_EQ(LossWorkOf(*native).forward.bytes, 851'968'000);
  EXPECT_EQ(LossWorkOf(*native).backward.bytes, 458'752'000);
}

TEST(Frameworks, PyTorchsCrossEntropyIsReadFromYaml) {
  const std::string text =
      "name: x\nmodel: ../models/llama3-8b.yaml\ncluster: ../../topologies/dgx-h100.yaml\n"
      "cluster_overrides: {nodes: 1}\nplan: {tp: 8, global_batch: 8}\n"
      "training: {cross_entropy_fusion: false, cross_entropy_fusion_impl: torch}\n";
  const std::string path = std::string(MESHSIM_SOURCE_DIR) + "/workloads/experiments/test.yaml";
  Result<Experiment> e = LoadExperimentText(text, path, {});
  ASSERT_FALSE(e.ok());
  const std::string message = e.error().ToString();
  EXPECT_NE(message.find("training.cross_entropy_fusion_impl"), std::string::npos) << message;
  std::string fused = text;
  fused.replace(fused.find("false"), 5, "true");
  Result<Experiment> ok = LoadExperimentText(fused, path, {});
  ASSERT_TRUE(ok.ok()) << ok.error().ToString();
  EXPECT_EQ(ok.value().training.cross_entropy_impl, CrossEntropyImpl::kTorch);
  fused.replace(fused.find("impl: torch"), 11, "impl: torch_fp32");
  Result<Experiment> upcast = LoadExperimentText(fused, path, {});
  ASSERT_TRUE(upcast.ok()) << upcast.error().ToString();
  EXPECT_EQ(upcast.value().training.cross_entropy_impl, CrossEntropyImpl::kTorchFp32);
}

TEST(Frameworks, MegatronByDefaultIsTheOriginalProgram) {
  // Megatron's ZeRO-3: one gather per layer, the same collectives as FSDP's FULL_SHARD.
  const auto sim = Simulate(Dp8(Framework::kMegatron, 3), {}, testing::FakeModels());
  EXPECT_EQ(Sizes(Collectives(*sim, Tag::kZeroGather), CommOp::kAllGather),
            (std::map<double, int>{{kLayerBytes, 16}, {kEmbeddingBytes, 4}}));
  // Gradients in 25 MB buckets: a layer (25,169,920 bytes) fills one alone.
  EXPECT_EQ(Collectives(*sim, Tag::kDpGradReduce).size(), 10u);
}

TEST(Frameworks, FsdpPrefetchWindowShapesOverlap) {
  // With the default network, BACKWARD_PRE hides more of backward's gathers than
  // BACKWARD_POST, which gathers the next unit only after the current one's gradients.
  Experiment e = Dp8(Framework::kFsdp, 3);
  e.cluster.nodes = 2;
  e.cluster.inter_node.gbps_per_nic = 12.5;
  e.plan.dp = 16;
  e.plan.global_batch = 16;
  const double pre = Simulate(e)->replay.step_time.seconds();
  e.plan.framework_options.backward_prefetch = BackwardPrefetch::kBackwardPost;
  const double post = Simulate(e)->replay.step_time.seconds();
  EXPECT_LT(pre, post);
}

TEST(SubmoduleFetches, CoalescesInOrderAndSkipsPersistentOnes) {
  DpPolicy p;
  p.fetch_bucket_params = 10;
  p.persistence_threshold = 2;
  // 1 is persistent; 4 + 5 <= 10; 6 opens a new fetch; 12 > 10 alone; 3 + 1(skipped).
  EXPECT_EQ(SubmoduleFetches({1, 4, 5, 6, 12, 3, 1}, p), (std::vector<double>{9, 6, 12, 3}));
}

TEST(DpComm, Zero3On1024RanksSplitsLatencyAndBandwidth) {
  // DeepSpeed ZeRO-3 on 128 nodes of 8: dp 1024. Every layer's fetch (25 MB) is cut into
  // 1024 shards, so latency-bound ring steps weigh more than on 16 ranks.
  const auto share = [](int nodes) {
    Experiment e = Dp8(Framework::kDeepSpeed, 3);
    e.cluster.nodes = nodes;
    e.cluster.network_model = NetworkModelKind::kAlphaBeta;
    e.plan.dp = 8 * nodes;
    e.plan.global_batch = 8 * nodes;
    const auto sim = Simulate(e);
    const StepSummary s = SummarizeStep(*sim, {.reproducible = true, .devices = false});
    EXPECT_TRUE(s.dp_comm.has_value());
    const DpCommSummary& d = *s.dp_comm;
    // Per layer: one fetch (12,582,912 <= 5e7) in forward and backward; the embedding
    // unit twice in each; one reduce-scatter (all gradients < 1e9 bytes).
    EXPECT_EQ(d.collectives, 2 * (8 + 2) + 1);
    EXPECT_NEAR(d.latency_s + d.bandwidth_s, d.busy_s, 1e-12);
    EXPECT_GT(d.latency_s, 0);
    EXPECT_GT(d.bandwidth_s, 0);
    return d.latency_s / d.busy_s;
  };
  const double at16 = share(2);
  const double at1024 = share(128);
  EXPECT_GT(at1024, at16);
}

TEST(DpComm, AbsentForMegatronBelowZero3) {
  const auto sim = Simulate(Dp8(Framework::kMegatron, 1), {}, testing::FakeModels());
  EXPECT_FALSE(SummarizeStep(*sim).dp_comm.has_value());
}

// ---- decoding ----

const std::string kPath = std::string(MESHSIM_SOURCE_DIR) + "/workloads/experiments/x.yaml";

std::string Yaml(const std::string& framework, const std::string& options) {
  return "name: x\n"
         "model: ../models/llama2-7b.yaml\n"
         "cluster: ../../topologies/dgx-h100.yaml\n"
         "plan:\n"
         "  dp: 64\n"
         "  zero: 3\n"
         "  global_batch: 64\n"
         "  framework: " +
         framework +
         "\n"
         "  framework_options:\n" +
         options;
}

TEST(FrameworkOptions, DecodesEachFrameworksKnobs) {
  Result<Experiment> e = LoadExperimentText(
      Yaml("deepspeed", "    reduce_bucket_size: 2e8\n    stage3_max_live_parameters: 3e8\n"),
      kPath);
  ASSERT_TRUE(e.ok()) << e.error().ToString();
  EXPECT_EQ(e.value().plan.framework, Framework::kDeepSpeed);
  EXPECT_EQ(e.value().plan.framework_options.reduce_bucket_size, 2e8);
  EXPECT_EQ(e.value().plan.framework_options.stage3_max_live_parameters, 3e8);
  EXPECT_EQ(e.value().plan.framework_options.allgather_bucket_size, 5e8);  // default
  e = LoadExperimentText(Yaml("fsdp", "    backward_prefetch: backward_post\n"), kPath);
  ASSERT_TRUE(e.ok()) << e.error().ToString();
  EXPECT_EQ(e.value().plan.framework_options.backward_prefetch, BackwardPrefetch::kBackwardPost);
}

TEST(FrameworkOptions, BadOptionsNameTheKeyAndItsPlace) {
  // Another framework's option: line 10 ("    limit_all_gathers: true"), at the value.
  Result<Experiment> e =
      LoadExperimentText(Yaml("deepspeed", "    limit_all_gathers: true\n"), kPath);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().key, "plan.framework_options.limit_all_gathers");
  EXPECT_EQ(e.error().file, kPath);
  EXPECT_EQ(e.error().line, 10);
  EXPECT_EQ(e.error().column, 24);  // the value
  EXPECT_EQ(e.error().message,
            "expected an option of framework deepspeed, found an option of framework fsdp");
  // No such option.
  e = LoadExperimentText(Yaml("fsdp", "    prefetch_depth: 2\n"), kPath);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().key, "plan.framework_options.prefetch_depth");
  EXPECT_EQ(e.error().line, 10);
  // Wrong type.
  e = LoadExperimentText(Yaml("deepspeed", "    reduce_bucket_size: big\n"), kPath);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().key, "plan.framework_options.reduce_bucket_size");
  e = LoadExperimentText(Yaml("fsdp", "    limit_all_gathers: 3\n"), kPath);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().key, "plan.framework_options.limit_all_gathers");
  // Unknown framework; FSDP has no ZeRO-1.
  e = LoadExperimentText(Yaml("colossal", "    {}\n"), kPath);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().key, "plan.framework");
  e = LoadExperimentText(Yaml("fsdp", "    {}\n") + "", kPath, {"plan.zero=1"});
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().key, "plan.zero");
}

}  // namespace
}  // namespace meshsim

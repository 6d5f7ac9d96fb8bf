// Context parallelism (ring attention) and expert parallelism (MoE all-to-all), checked
// against closed forms on small experiments and on the bundled long-context plan.
#include <gtest/gtest.h>

#include "sim/config/loader.h"
#include "sim/engine/simulation.h"
#include "sim/plan/validate.h"
#include "sim/workload/transformer.h"
#include "tests/unit/test_fixtures.h"

namespace meshsim {
namespace {

Experiment ContextParallel(int cp) {
  Experiment e;
  e.name = "cp";
  e.model = testing::SmallModel();
  e.model.seq_len = 8192;
  e.model.kv_heads = 4;  // grouped-query attention: K/V are 1/4 of Q
  e.cluster = testing::OneNode(8);
  e.plan.cp = cp;
  e.plan.dp = 8 / cp;
  e.plan.global_batch = 8 / cp;
  e.training.flash_attention = true;
  return e;
}

double PeakActivations(const Simulation& sim) {
  return sim.replay.memory[0].at_peak[static_cast<int>(MemCategory::kActivations)];
}

TEST(ContextParallel, ActivationMemoryFallsAsOneOverCp) {
  const double one = PeakActivations(*Simulate(ContextParallel(1)));
  for (int cp : {2, 4, 8}) {
    EXPECT_NEAR(PeakActivations(*Simulate(ContextParallel(cp))), one / cp, 0.01 * one / cp) << cp;
  }
}

TEST(ContextParallel, RingShiftsOverlapAttentionBlocks) {
  const auto sim = Simulate(ContextParallel(4));
  const Program& p = sim->program;
  int shifts = 0, overlapped = 0;
  for (size_t i = 0; i < p.OpCount(); ++i) {
    const Op& op = p.op(static_cast<OpId>(i));
    if (op.rank != 0 || op.tag != Tag::kCpComm) continue;
    ++shifts;
    // Exactly the K/V of the rank's chunk (GQA: kv_heads of them), forward; twice that
    // (K/V and their gradients) backward.
    const double kv = 2.0 * (8192 / 4) * 1024 * 4 / 16 * 2;
    EXPECT_TRUE(p.WorkOf(op).bytes == kv || p.WorkOf(op).bytes == 2 * kv) << p.WorkOf(op).bytes;
    for (size_t j = 0; j < p.OpCount(); ++j) {
      const Op& c = p.op(static_cast<OpId>(j));
      if (c.rank != 0 || c.kind != OpKind::kCompute ||
          (c.tag != Tag::kAttentionFwd && c.tag != Tag::kAttentionBwd)) {
        continue;
      }
      if (sim->replay.start[j] < sim->replay.end[i] && sim->replay.start[i] < sim->replay.end[j]) {
        ++overlapped;
        break;
      }
    }
  }
  // 3 shifts per layer forward and backward over 8 layers.
  EXPECT_EQ(shifts, 8 * 2 * 3);
  EXPECT_EQ(overlapped, shifts);
}

// Each ring block merges its partial result into the rank's running one (Transformer
// Engine's output correction forward, the dQ and dK/dV updates backward): with cp 4 a rank's
// chunk is 2048 tokens; forward 3 x 2 bytes x 2048 x (16 heads x 64) = 12,582,912 bytes,
// backward 3 x 2 x 2048 x (16 x 64 + 4 x 128) = 18,874,368, on each of the 4 blocks of the
// 8 layers' one micro-batch (FlashAttention: the blocks move nothing else through HBM).
TEST(ContextParallel, RingBlocksMergeTheirPartialResults) {
  const auto sim = Simulate(ContextParallel(4));
  const Program& p = sim->program;
  int forward = 0, backward = 0;
  for (size_t i = 0; i < p.OpCount(); ++i) {
    const Op& op = p.op(static_cast<OpId>(i));
    if (op.rank != 0 || op.kind != OpKind::kCompute) continue;
    const double bytes = p.WorkOf(op).bytes;
    forward += op.tag == Tag::kAttentionFwd && bytes == 12582912.0;
    backward += op.tag == Tag::kAttentionBwd && bytes == 18874368.0;
  }
  EXPECT_EQ(forward, 8 * 4);
  EXPECT_EQ(backward, 8 * 4);
}

TEST(ContextParallel, Llama3At128kFitsOnlyWithCp16) {
  const std::string path =
      std::string(MESHSIM_SOURCE_DIR) + "/workloads/experiments/llama3-405b-128k-cp16.yaml";
  // No compute-communication interference: it slows the stages unequally (the last
  // micro-batches' backward overlaps the gradient reduce-scatter), and the bubble's closed
  // form below assumes equal stages.
  const std::vector<std::string> fast = {"cluster.network_model=alpha_beta",
                                         "cluster.efficiency.comm_interference=0"};
  Result<Experiment> with_cp = LoadExperimentFile(path, fast);
  ASSERT_TRUE(with_cp.ok()) << with_cp.error().ToString();
  std::vector<std::string> no_cp = fast;
  no_cp.insert(no_cp.end(), {"plan.cp=1", "cluster.nodes=14"});
  Result<Experiment> without_cp = LoadExperimentFile(path, no_cp);
  ASSERT_TRUE(without_cp.ok()) << without_cp.error().ToString();
  const auto fits = Simulate(with_cp.value());
  const auto over = Simulate(without_cp.value());
  const double gib = 1024.0 * 1024 * 1024;
  EXPECT_EQ(with_cp.value().cluster.gpu.memory_gib, 80);
  // Llama-3 405B: h 16384, 126 layers, 128 heads, 8 KV heads of 128, SwiGLU f 53248,
  // vocab 128256; tp 8 (SP), pp 14 (9 layers a stage), full recompute, FlashAttention,
  // ZeRO-1, fp32 gradients. Per layer 2h^2 + 2h * 1024 + 3hf + 2h = 3,187,703,808
  // parameters; rank 0 holds 9 of them and the embedding 128256 * 16384, all over tp 8:
  // Psi = 3,848,835,072. Weights 2 Psi = 7.169 GiB, fp32 gradients 4 Psi = 14.338 GiB.
  // With cp 16 (s = 131072 / 16 = 8192 tokens a rank, sbh = 8192 * 16384):
  //   optimizer 12 Psi over dp x cp = 16: 2.688 GiB;
  //   stored: each layer's input, 2 sbh / tp, for 9 layers x 14 micro-batches in flight
  //   (1F1B): 4,227,858,432 B = 3.9375 GiB;
  //   recomputed layer in backward: (5 + 2 * (2 + 2/16) + 5 + 3 * 2 * 53248/16384) sbh / 8
  //   = 4.21875 sbh = 566,231,040 B, plus the softmax statistics 128 * 8192 * 4 / 8 =
  //   524,288 B: 0.5278 GiB.
  //   In all 28.661 GiB: fits in 80.
  // Without cp (s = 131072 a rank): the optimizer 12 Psi = 43.013 GiB, stored 16 x 3.9375 =
  // 63.0 GiB, recomputed 16 x 566,231,040 + 16 x 524,288 B = 8.445 GiB: 135.966 GiB.
  EXPECT_NEAR(fits->replay.memory[0].peak_bytes / gib, 28.661, 0.01);
  EXPECT_NEAR(over->replay.memory[0].peak_bytes / gib, 135.966, 0.01);
  // The step is a 1F1B pipeline of p = 14 stages and m = 16 micro-batches: the bubble is
  // (p - 1) / (m + p - 1) = 13/29 (stages are not quite equal: the first holds the
  // embedding, the last the output layer).
  EXPECT_NEAR(fits->stats.bubble_fraction, 13.0 / 29, 0.01 * 13 / 29);
}

Experiment Moe(int ep, double skew = 1.0) {
  Experiment e;
  e.name = "moe";
  e.model = testing::SmallModel();
  e.model.experts = 8;
  e.model.top_k = 2;
  e.model.moe_ffn_hidden = 2048;
  e.model.ffn_kind = FfnKind::kSwiglu;
  e.cluster = testing::OneNode(8);
  e.plan.dp = 8;
  e.plan.ep = ep;
  e.plan.global_batch = 8;
  e.plan.moe_skew = skew;
  return e;
}

TEST(ExpertParallel, AllToAllVolumeMatchesTokensTopKHiddenBytes) {
  const auto sim = Simulate(Moe(8));
  const double tokens = 1024, ep = 8;
  const double per_a2a = tokens * 2 * 1024 * 2 * (ep - 1) / ep;  // tokens*top_k*h*bytes*(ep-1)/ep
  // Dispatch and combine in forward, their gradients in backward: 4 per layer.
  const double expected = 4 * per_a2a * 8;
  const double sent = sim->stats.ranks[0].sent_bytes[static_cast<int>(CommClass::kEp)];
  EXPECT_NEAR(sent, expected, 0.01 * expected);
}

TEST(ExpertParallel, ExpertGradientsReduceOverExpertDataGroupOnly) {
  Experiment e = Moe(4);
  const auto sim = Simulate(e);
  const Mesh& mesh = sim->mesh;
  EXPECT_EQ(mesh.ExpertGroup(0), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(mesh.ExpertDataGroup(1), (std::vector<int>{1, 5}));
  bool seen_expert_group = false;
  for (const Op& op : sim->program.ops()) {
    if (op.rank == 0 && op.tag == Tag::kDpGradReduce) {
      const auto& group = sim->program.groups()[sim->program.comms()[op.comm].group];
      seen_expert_group = seen_expert_group || group == std::vector<int>{0, 4};
    }
  }
  EXPECT_TRUE(seen_expert_group);
}

// Megatron-Core folds EP over the TP ranks too (expert tensor parallelism 1): with tp 2,
// dp 4 the stage's ranks 0..7 in rank order form EP groups of `ep`, and the ranks at the
// same place in their EP group reduce the experts' gradients.
TEST(ExpertParallel, FoldsOverTensorParallelRanks) {
  Experiment e = Moe(4);
  e.plan.tp = 2;
  e.plan.dp = 4;
  e.plan.sequence_parallel = true;
  ASSERT_TRUE(ValidatePlan(e.plan, e.training, e.model, e.cluster).ok());
  SimulationOptions every_rank;  // rank 1's program: symmetric replay replays rank 0's
  every_rank.full_replay = true;
  const auto sim = Simulate(e, every_rank);
  const Mesh& mesh = sim->mesh;
  EXPECT_EQ(mesh.ExpertGroup(5), (std::vector<int>{4, 5, 6, 7}));  // tp 0-1 of dp 2-3
  EXPECT_EQ(mesh.ExpertDataGroup(1), (std::vector<int>{1, 5}));
  EXPECT_EQ(mesh.CoordsOf(6).ep, 2);
  // The all-to-all runs over that group; the expert gradients over {1, 5}.
  bool a2a_over_tp = false, grads_over_edp = false;
  for (const Op& op : sim->program.ops()) {
    if (op.rank != 1 || op.comm < 0) continue;
    const auto& group = sim->program.groups()[sim->program.comms()[op.comm].group];
    a2a_over_tp = a2a_over_tp || (op.tag == Tag::kEpComm && group == std::vector<int>{0, 1, 2, 3});
    grads_over_edp =
        grads_over_edp || (op.tag == Tag::kDpGradReduce && group == std::vector<int>{1, 5});
  }
  EXPECT_TRUE(a2a_over_tp);
  EXPECT_TRUE(grads_over_edp);
  // ep 8 = tp x dp: one EP group per stage, nothing left to reduce expert gradients over;
  // ep must divide tp x dp x cp.
  e.plan.ep = 8;
  EXPECT_TRUE(ValidatePlan(e.plan, e.training, e.model, e.cluster).ok());
  EXPECT_EQ(Mesh(e.plan).ExpertDataGroup(3), (std::vector<int>{3}));
  e.plan.ep = 16;
  e.model.experts = 16;
  const Status bad = ValidatePlan(e.plan, e.training, e.model, e.cluster);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("does not divide tp*dp*cp = 8"), std::string::npos);
}

// With tp > 1 and no EP the experts are still whole on every TP rank, so their gradients
// reduce over the whole stage (tp x dp), the dense ones over dp only.
TEST(ExpertParallel, ExpertGradientsReduceOverTensorParallelRanksToo) {
  Experiment e = Moe(1);
  e.plan.tp = 2;
  e.plan.dp = 4;
  e.plan.sequence_parallel = true;
  const auto sim = Simulate(e);
  EXPECT_EQ(sim->mesh.ExpertGroup(2), (std::vector<int>{2}));
  const std::vector<int> stage{0, 1, 2, 3, 4, 5, 6, 7}, dp{0, 2, 4, 6};
  bool expert_grads = false, dense_grads = false;
  for (const Op& op : sim->program.ops()) {
    if (op.rank != 0 || op.tag != Tag::kDpGradReduce) continue;
    const auto& group = sim->program.groups()[sim->program.comms()[op.comm].group];
    expert_grads = expert_grads || group == stage;
    dense_grads = dense_grads || group == dp;
  }
  EXPECT_TRUE(expert_grads);
  EXPECT_TRUE(dense_grads);
}

TEST(ExpertParallel, SkewSlowsTheStepAndNamesTheBusiestRank) {
  const auto even = Simulate(Moe(8));
  const auto skewed = Simulate(Moe(8, 2.0));
  EXPECT_GT(skewed->replay.step_time, even->replay.step_time);
  int busiest = 0;
  for (int r = 1; r < 8; ++r) {
    if (skewed->stats.ranks[r].compute_busy_s > skewed->stats.ranks[busiest].compute_busy_s)
      busiest = r;
  }
  EXPECT_EQ(skewed->mesh.CoordsOf(busiest).ep, 0);  // holds the hot expert
  EXPECT_GT(skewed->stats.ranks[busiest].compute_busy_s,
            1.2 * skewed->stats.ranks[1].compute_busy_s);
}

TEST(ExpertParallel, MoeParameterCountsTotalAndActive) {
  const ModelSpec m = Moe(1).model;
  const double expert = 3.0 * 1024 * 2048;
  // Q, K, V and the output projection, 16 heads of 64 (no GQA): 4 h^2; two norms 2h.
  const double attention = 4.0 * 1024 * 1024 + 2 * 1024;
  const double router = 1024.0 * 8;
  const double embed = 2.0 * 8 * 1024 + 1024;  // input, output, final norm
  EXPECT_DOUBLE_EQ(TotalParams(m), 8 * (attention + router + 8 * expert) + embed);
  EXPECT_DOUBLE_EQ(ActiveParams(m), 8 * (attention + router + 2 * expert) + embed);
}

}  // namespace
}  // namespace meshsim

// JAX-style plans (plan.mesh, plan.rules): decoding, the equivalent PlanSpec that
// sim/plan/sharding.h derives, equivalence with explicit Megatron/FSDP plans, and bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "sim/config/loader.h"
#include "sim/engine/simulation.h"
#include "sim/plan/mesh.h"
#include "sim/plan/sharding.h"
#include "sim/report/explain.h"
#include "sim/schedule/step_builder.h"
#include "sim/workload/transformer.h"

namespace meshsim {
namespace {

const std::string kPath = std::string(MESHSIM_SOURCE_DIR) + "/workloads/experiments/jax-x.yaml";

// Llama 2 7B on `nodes` DGX H100 nodes with `plan` (YAML lines, each indented two spaces).
std::string Text(int nodes, const std::string& plan) {
  return "name: x\n"
         "model: ../models/llama2-7b.yaml\n"
         "cluster: ../../topologies/dgx-h100.yaml\n"
         "cluster_overrides: {nodes: " +
         std::to_string(nodes) +
         ", network_model: alpha_beta}\n"
         "plan:\n" +
         plan;
}

Result<Experiment> Load(int nodes, const std::string& plan) {
  return LoadExperimentText(Text(nodes, plan), kPath);
}

// tp 2 x pp 4 x dp 2 on 16 GPUs with sequence parallelism, as MaxText would write it:
// stage 2 in a node x 2 nodes, data 2 and tensor 2 in a node.
const std::string kMegatronRules =
    "  mesh:\n"
    "    axes: [stage, data, tensor]\n"
    "    ici: [2, 2, 2]\n"
    "    dcn: [2, 1, 1]\n"
    "  rules:\n"
    "    batch: data\n"
    "    sequence: tensor\n"
    "    heads: tensor\n"
    "    mlp: tensor\n"
    "    vocab: tensor\n"
    "    layers: stage\n"
    "  global_batch: 32\n";
const std::string kMegatronExplicit =
    "  tp: 2\n  pp: 4\n  dp: 2\n  sequence_parallel: true\n  global_batch: 32\n";

// DP + ZeRO-3 (FSDP) on one node of 8.
const std::string kFsdpRules =
    "  mesh: {axes: [fsdp], ici: [8]}\n"
    "  rules: {batch: fsdp, embed: fsdp}\n"
    "  global_batch: 16\n";
const std::string kFsdpExplicit = "  dp: 8\n  zero: 3\n  global_batch: 16\n";

// TP 4 x FSDP 4 on two nodes: fsdp 2 in a node x 2 nodes, tensor 4 in a node.
const std::string kTpFsdpRules =
    "  mesh: {axes: [fsdp, tensor], ici: [2, 4], dcn: [2, 1]}\n"
    "  rules: {batch: fsdp, embed: fsdp, sequence: tensor, heads: tensor, mlp: tensor,\n"
    "          vocab: tensor}\n"
    "  global_batch: 16\n";
const std::string kTpFsdpExplicit =
    "  tp: 4\n  dp: 4\n  zero: 3\n  sequence_parallel: true\n  global_batch: 16\n";

TEST(JaxPlan, MegatronRulesDeriveTpPpDpWithSequenceParallelism) {
  const Result<Experiment> e = Load(2, kMegatronRules);
  ASSERT_TRUE(e.ok()) << e.error().ToString();
  const PlanSpec& p = e.value().plan;
  EXPECT_EQ(std::tie(p.tp, p.pp, p.dp, p.cp, p.ep, p.zero), std::make_tuple(2, 4, 2, 1, 1, 0));
  EXPECT_TRUE(p.sequence_parallel);
  // Innermost first: tensor (ICI 2), data (ICI 2), stage (ICI 2, then DCN 2).
  EXPECT_EQ(p.mesh_order[0], Axis::kTp);
  EXPECT_EQ(p.mesh_order[1], Axis::kDp);
  EXPECT_EQ(p.mesh_order[2], Axis::kPp);
  const std::vector<std::string> names = AxisNames(p.jax);
  EXPECT_EQ(names[static_cast<int>(Axis::kTp)], "tensor");
  EXPECT_EQ(names[static_cast<int>(Axis::kDp)], "data");
  EXPECT_EQ(names[static_cast<int>(Axis::kPp)], "stage");
}

TEST(JaxPlan, FsdpRulesDeriveZeroThree) {
  const Result<Experiment> e = Load(1, kFsdpRules);
  ASSERT_TRUE(e.ok()) << e.error().ToString();
  const PlanSpec& p = e.value().plan;
  EXPECT_EQ(std::tie(p.tp, p.pp, p.dp, p.zero), std::make_tuple(1, 1, 8, 3));
  EXPECT_FALSE(p.sequence_parallel);
}

// ---- Equivalence with the explicit plan (issue 15, item 2) ----

// Every collective of a program: kind, the ranks of its group, bytes; sorted.
using CommKey = std::tuple<int, std::vector<int>, double>;
std::vector<CommKey> Collectives(const Program& program) {
  std::vector<CommKey> out;
  for (const Comm& c : program.comms()) {
    out.emplace_back(static_cast<int>(c.op), program.groups()[c.group], c.bytes);
  }
  std::sort(out.begin(), out.end());
  return out;
}

void ExpectEquivalent(int nodes, const std::string& rules, const std::string& explicit_plan) {
  const Result<Experiment> jax = Load(nodes, rules);
  const Result<Experiment> torch = Load(nodes, explicit_plan);
  ASSERT_TRUE(jax.ok()) << jax.error().ToString();
  ASSERT_TRUE(torch.ok()) << torch.error().ToString();
  const SimulationOptions all{{}, true};  // every rank, so every group is built
  const auto a = Simulate(jax.value(), all);
  const auto b = Simulate(torch.value(), all);
  ASSERT_TRUE(a->replay.completed && b->replay.completed);
  const std::vector<CommKey> ca = Collectives(a->program), cb = Collectives(b->program);
  EXPECT_GT(ca.size(), 0u);
  EXPECT_EQ(ca, cb);  // same kind, same group of ranks, same bytes, as often
  const double ta = a->replay.step_time.seconds(), tb = b->replay.step_time.seconds();
  EXPECT_LE(std::abs(ta - tb), 0.01 * tb) << ta << " s vs " << tb << " s";
}

TEST(JaxPlanEquivalence, MegatronTensorAndSequenceParallel) {
  ExpectEquivalent(2, kMegatronRules, kMegatronExplicit);
}
TEST(JaxPlanEquivalence, DataParallelZeroThree) { ExpectEquivalent(1, kFsdpRules, kFsdpExplicit); }
TEST(JaxPlanEquivalence, TensorParallelTimesFsdp) {
  ExpectEquivalent(2, kTpFsdpRules, kTpFsdpExplicit);
}

// ---- explain: per-device shapes and collectives of a 2 x 4 mesh, checked by hand ----

TEST(Explain, TwoByFourMeshWithMlpOnTensor) {
  const Result<Experiment> loaded = Load(1,
                                         "  mesh: {axes: [data, tensor], ici: [2, 4]}\n"
                                         "  rules: {batch: data, sequence: tensor, heads: tensor,\n"
                                         "          mlp: tensor, vocab: tensor}\n"
                                         "  global_batch: 16\n");
  ASSERT_TRUE(loaded.ok()) << loaded.error().ToString();
  const Experiment& e = loaded.value();
  const Mesh mesh(e.plan);
  const Program program = BuildStepProgram(e.model, e.plan, e.training, mesh, mesh.Pipeline(0));
  // Llama 2 7B, bf16, micro-batch 1: each TP collective moves the block's whole
  // activation, s * b * h * 2 = 4096 * 1 * 4096 * 2 = 33554432 bytes (nccl-tests
  // convention: the gathered output / the scattered input). Sequence parallelism per
  // layer and micro-batch: forward 2 all-gathers + 2 reduce-scatters (attention, MLP),
  // backward 4 all-gathers + 2 reduce-scatters (TensorParallel tests): 6 and 4; with
  // 16 / (1 x dp 2) = 8 micro-batches, 48 and 32 per step, over the 4 tensor ranks.
  std::vector<ExplainedCollective> tp;
  for (const ExplainedCollective& c : CollectivesOf(program, 0)) {
    if (c.layer == 5 && c.stream == Stream::kTp) tp.push_back(c);
  }
  const std::vector<ExplainedCollective> expected = {
      {5, Stream::kTp, CommOp::kAllGather, 4, 33554432.0, 48},
      {5, Stream::kTp, CommOp::kReduceScatter, 4, 33554432.0, 32}};
  EXPECT_EQ(tp, expected);
  EXPECT_EQ(GroupLabel(e.plan, Stream::kTp), "tp [tensor]");
  EXPECT_EQ(GroupLabel(e.plan, Stream::kDp), "dp [data]");
  // MLP weight (layers, embed, mlp): mlp 11008 / 4 = 2752; the residual stream
  // (batch, sequence, embed) of one micro-batch: batch 1 x dp 2 = 2 -> 1, sequence
  // 4096 / 4 (sequence parallel) = 1024.
  const std::vector<DeviceShape> shapes = PerDeviceShapes(e.model, e.plan);
  ASSERT_EQ(shapes[1].array, "MLP weight");
  EXPECT_EQ(shapes[1].global, (std::vector<int64_t>{32, 4096, 11008}));
  EXPECT_EQ(shapes[1].local, (std::vector<int64_t>{32, 4096, 2752}));
  ASSERT_EQ(shapes[3].array, "residual stream");
  EXPECT_EQ(shapes[3].global, (std::vector<int64_t>{2, 4096, 4096}));
  EXPECT_EQ(shapes[3].local, (std::vector<int64_t>{1, 1024, 4096}));
  const std::string text = ExplainText(e, mesh, program);
  EXPECT_NE(text.find("groups: tp = tensor dp = data"), std::string::npos) << text;
  EXPECT_NE(text.find("all_gather      tp [tensor]"), std::string::npos) << text;
}

// ---- XLA's rematerialisation and MaxText's parallel block (calibration, issue 15) ----

// Tensor-parallel all-gathers and reduce-scatters of layer 5 on rank 0, per step.
std::pair<int, int> TpGathersAndScatters(const Experiment& e) {
  const Mesh mesh(e.plan);
  const Program program = BuildStepProgram(e.model, e.plan, e.training, mesh, mesh.Pipeline(0));
  std::pair<int, int> n{0, 0};
  for (const ExplainedCollective& c : CollectivesOf(program, 0)) {
    if (c.layer != 5 || c.stream != Stream::kTp) continue;
    if (c.op == CommOp::kAllGather) n.first += static_cast<int>(c.count);
    if (c.op == CommOp::kReduceScatter) n.second += static_cast<int>(c.count);
  }
  return n;
}

const std::string kTwoByFour =
    "  mesh: {axes: [data, tensor], ici: [2, 4]}\n"
    "  rules: {batch: data, sequence: tensor, heads: tensor, mlp: tensor, vocab: tensor}\n"
    "  global_batch: 16\n";

// Full recomputation, 8 micro-batches. Megatron re-runs each block whole: forward
// AG + RS, recomputation AG + RS, backward AG (output gradient) + AG (input, for wgrad)
// + RS: 4 AG and 3 RS per block, 64 and 48 per step. XLA drops the recomputed reduction
// (dead: only the residual sum reads it) and the backward's input re-gather (the
// recomputed one serves): 3 AG and 2 RS per block, 48 and 32, as without recomputation.
TEST(JaxPlanRemat, FullRecomputationDropsTheDeadTailAndTheReGather) {
  const Result<Experiment> jax = Load(1, kTwoByFour + "  recompute: full\n");
  const Result<Experiment> torch =
      Load(1,
           "  tp: 4\n  dp: 2\n  sequence_parallel: true\n  recompute: full\n"
           "  global_batch: 16\n");
  ASSERT_TRUE(jax.ok()) << jax.error().ToString();
  ASSERT_TRUE(torch.ok()) << torch.error().ToString();
  EXPECT_EQ(TpGathersAndScatters(jax.value()), std::make_pair(48, 32));
  EXPECT_EQ(TpGathersAndScatters(torch.value()), std::make_pair(64, 48));
}

// The recomputed FLOPs: the forward's less each block's last GEMM. Llama 2 7B, tp 4, one
// sequence of 4096: the output projection 2 * 4096 * 4096 * 4096 / 4 and FC2 (SwiGLU's
// down projection) 2 * 4096 * 4096 * 11008 / 4.
TEST(JaxPlanRemat, RecomputedFlopsLeaveOutTheLastGemms) {
  const Result<Experiment> e = Load(1, kTwoByFour);
  ASSERT_TRUE(e.ok()) << e.error().ToString();
  LayerShape shape{4096, 1, 4, true, Recompute::kFull, {}};
  const LayerCost torch = TransformerLayerCost(e.value().model, shape);
  shape.xla_remat = true;
  const LayerCost xla = TransformerLayerCost(e.value().model, shape);
  const double s = 4096, h = 4096, f = 11008;
  EXPECT_DOUBLE_EQ(torch.attention.recompute_flops, torch.attention.fwd_flops);
  EXPECT_DOUBLE_EQ(xla.attention.recompute_flops, xla.attention.fwd_flops - 2 * s * h * h / 4);
  EXPECT_DOUBLE_EQ(xla.mlp.recompute_flops, xla.mlp.fwd_flops - 2 * s * h * f / 4);
  EXPECT_DOUBLE_EQ(xla.mlp.recompute_flops, 2 * s * h * f * 2 / 4);
}

// The parallel block (PaLM; MaxText's decoder_block default): one all-gather and one
// reduce-scatter per layer and pass. Per micro-batch, forward AG + RS (was 2 + 2),
// backward AG (output gradient) + AG (input) + RS (was 4 + 2): 3 AG and 2 RS, 24 and 16
// per step (was 48 and 32). Without sequence parallelism, one all-reduce per pass.
TEST(JaxPlanParallelBlock, OneGatherAndOneReductionPerLayerAndPass) {
  Result<Experiment> e = Load(1, kTwoByFour);
  ASSERT_TRUE(e.ok()) << e.error().ToString();
  EXPECT_EQ(TpGathersAndScatters(e.value()), std::make_pair(48, 32));
  e.value().model.parallel_block = true;
  EXPECT_EQ(TpGathersAndScatters(e.value()), std::make_pair(24, 16));
  // XLA's full recomputation: its gather replaces the backward's re-gather of the input.
  e.value().plan.recompute = Recompute::kFull;
  EXPECT_EQ(TpGathersAndScatters(e.value()), std::make_pair(24, 16));
  Result<Experiment> no_sp = Load(1, "  tp: 4\n  dp: 2\n  global_batch: 16\n");
  ASSERT_TRUE(no_sp.ok()) << no_sp.error().ToString();
  const auto all_reduces = [](const Experiment& x) {
    const Mesh mesh(x.plan);
    const Program p = BuildStepProgram(x.model, x.plan, x.training, mesh, mesh.Pipeline(0));
    int n = 0;
    for (const ExplainedCollective& c : CollectivesOf(p, 0)) {
      if (c.layer == 5 && c.stream == Stream::kTp && c.op == CommOp::kAllReduce) {
        n += static_cast<int>(c.count);
      }
    }
    return n;
  };
  EXPECT_EQ(all_reduces(no_sp.value()), 4 * 8);
  no_sp.value().model.parallel_block = true;
  EXPECT_EQ(all_reduces(no_sp.value()), 2 * 8);
}

// ---- Bad input: the key, file, line and column ----

InputError LoadError(int nodes, const std::string& plan) {
  const Result<Experiment> e = Load(nodes, plan);
  EXPECT_FALSE(e.ok());
  return e.ok() ? InputError{} : e.error();
}

TEST(JaxPlanErrors, AxisUsedTwiceInOneArray) {
  // embed and mlp both on fsdp: the MLP weight (layers, embed, mlp) has fsdp twice.
  const InputError e = LoadError(1,
                                 "  mesh: {axes: [fsdp, tensor], ici: [4, 2]}\n"
                                 "  rules:\n"
                                 "    batch: fsdp\n"
                                 "    embed: fsdp\n"
                                 "    mlp: fsdp\n"
                                 "  global_batch: 16\n");
  EXPECT_EQ(e.key, "plan.rules.mlp");
  EXPECT_EQ(e.file, kPath);
  EXPECT_EQ(e.line, 10);  // 5 lines before plan:, then mesh, rules, batch, embed, mlp
  EXPECT_EQ(e.message,
            "mesh axis 'fsdp' already shards embed of the MLP weight (layers, embed, mlp); an "
            "axis may shard one dimension of an array");
}

TEST(JaxPlanErrors, RuleNamingAnUnknownAxis) {
  const InputError e = LoadError(1,
                                 "  mesh: {axes: [data, tensor], ici: [4, 2]}\n"
                                 "  rules: {batch: data, heads: tensr}\n"
                                 "  global_batch: 16\n");
  EXPECT_EQ(e.key, "plan.rules.heads");
  EXPECT_EQ(e.line, 7);
  EXPECT_EQ(e.message, "expected a mesh axis (one of data, tensor), found 'tensr'");
}

TEST(JaxPlanErrors, MeshSizesThatDoNotMultiplyToTheGpus) {
  const InputError e = LoadError(2,
                                 "  mesh: {axes: [data, tensor], ici: [2, 4], dcn: [4, 1]}\n"
                                 "  rules: {batch: data, heads: tensor, mlp: tensor, vocab: "
                                 "tensor}\n"
                                 "  global_batch: 16\n");
  EXPECT_EQ(e.key, "plan.mesh");
  EXPECT_EQ(e.line, 6);
  EXPECT_EQ(e.message,
            "expected mesh axis sizes (ici x dcn) that multiply to the cluster's 16 GPUs (nodes 2 "
            "x gpus_per_node 8), found data 8 x tensor 4 = 32");
}

TEST(JaxPlanErrors, SliceThatIsNotANode) {
  // 16 GPUs in all, but ICI 16: a slice larger than a node.
  const InputError e = LoadError(2,
                                 "  mesh: {axes: [data, tensor], ici: [4, 4]}\n"
                                 "  rules: {batch: data, heads: tensor, mlp: tensor, vocab: "
                                 "tensor}\n"
                                 "  global_batch: 16\n");
  EXPECT_EQ(e.key, "plan.mesh.ici");
}

TEST(JaxPlanErrors, RulesWithoutAnEquivalentAreRefused) {
  // MLP on another axis than the heads: no single tensor-parallel group.
  InputError e = LoadError(1,
                           "  mesh: {axes: [data, tensor], ici: [4, 2]}\n"
                           "  rules: {batch: data, heads: tensor, mlp: data}\n"
                           "  global_batch: 16\n");
  EXPECT_EQ(e.key, "plan.rules.mlp");  // also the activations (batch, mlp) repeat data
  // HSDP: weights over fsdp only while the batch spans data and fsdp.
  e = LoadError(1,
                "  mesh: {axes: [data, fsdp], ici: [2, 4]}\n"
                "  rules: {batch: [data, fsdp], embed: fsdp}\n"
                "  global_batch: 16\n");
  EXPECT_EQ(e.key, "plan.rules.embed");
  EXPECT_NE(e.message.find("no PlanSpec equivalent yet"), std::string::npos) << e.message;
  // An axis of size 2 that shards nothing.
  e = LoadError(1,
                "  mesh: {axes: [data, extra], ici: [4, 2]}\n"
                "  rules: {batch: data}\n"
                "  global_batch: 16\n");
  EXPECT_EQ(e.key, "plan.mesh");
  // tensor split between ICI and DCN with data in between: its ranks 0-3 and 8-11 are
  // not one block.
  e = LoadError(2,
                "  mesh: {axes: [data, tensor], ici: [2, 4], dcn: [1, 2]}\n"
                "  rules: {batch: data, heads: tensor, mlp: tensor, vocab: tensor}\n"
                "  global_batch: 16\n");
  EXPECT_EQ(e.key, "plan.mesh");
  EXPECT_NE(e.message.find("reorder plan.mesh.axes"), std::string::npos) << e.message;
}

TEST(JaxPlanErrors, DegreeKeysAndHalfPlans) {
  InputError e = LoadError(1,
                           "  mesh: {axes: [data], ici: [8]}\n"
                           "  rules: {batch: data}\n"
                           "  tp: 1\n"
                           "  global_batch: 16\n");
  EXPECT_EQ(e.key, "plan.tp");
  e = LoadError(1, "  rules: {batch: data}\n  global_batch: 16\n");
  EXPECT_EQ(e.key, "plan.mesh");
  e = LoadError(1, "  mesh: {axes: [data, data], ici: [4, 2]}\n  rules: {}\n  global_batch: 16\n");
  EXPECT_EQ(e.key, "plan.mesh.axes[1]");
  e = LoadError(1, "  mesh: {axes: [data], ici: [8, 1]}\n  rules: {}\n  global_batch: 16\n");
  EXPECT_EQ(e.key, "plan.mesh.ici");
  e = LoadError(1,
                "  mesh: {axes: [data], ici: [8]}\n  rules: {tokens: data}\n  global_batch: 16\n");
  EXPECT_EQ(e.key, "plan.rules.tokens");
}

}  // namespace
}  // namespace meshsim

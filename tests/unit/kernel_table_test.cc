// `meshsim explain --kernels` (sim/report/kernel_table.h): a layer's ops and their kernels,
// each timed by the experiment's kernel model. The parts of an op add up to its time, the ops
// take the time a replayed step gives them where nothing interferes, and the kernels' rates
// are the measured ones the topologies hold.
#include "sim/report/kernel_table.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "sim/config/loader.h"
#include "sim/engine/shape_params.h"
#include "sim/engine/simulation.h"
#include "sim/schedule/step_builder.h"

namespace meshsim {
namespace {

Experiment Load(const std::string& name, const std::vector<std::string>& sets = {}) {
  Result<Experiment> e = LoadExperimentFile(
      std::string(MESHSIM_SOURCE_DIR) + "/workloads/experiments/" + name + ".yaml", sets);
  EXPECT_TRUE(e.ok()) << e.error().ToString();
  return e.value();
}

struct Table {
  std::vector<KernelLine> lines;
};

Table KernelsOf(const Experiment& e, int layer, int micro_batch, int rank = 0) {
  const Mesh mesh(e.plan);
  const Program program =
      BuildStepProgram(e.model, e.plan, e.training, mesh, mesh.Pipeline(0), false);
  Experiment gpu_only = e;
  gpu_only.cluster.host.launch_us = 0;
  const std::unique_ptr<ComputeModel> model = MakeComputeModel(gpu_only);
  const ShapeComputeModel shapes(ExperimentShapeParams(e));
  return {LayerKernels(program, *model, &shapes, rank, layer, micro_batch)};
}

// Each op's parts (GEMMs, casts, attention, element-wise traffic, launches) sum to the op's
// time, on a run with every kind of part: FP8 casts, the fused grouped MLP's kernels, measured
// causal attention (GB200 Qwen3 30B-A3B, MXFP8).
TEST(KernelTable, PartsAddUpToEachOp) {
  const Table t = KernelsOf(Load("public-gb200-bridge-qwen3-30b-a3b"), 0, 0);
  ASSERT_FALSE(t.lines.empty());
  int ops = 0, gemms = 0, casts = 0, attention = 0;
  double op_s = -1, parts_s = 0;
  auto close = [&] {
    if (op_s >= 0) EXPECT_NEAR(parts_s, op_s, 1e-12 + 1e-9 * op_s);
  };
  for (const KernelLine& l : t.lines) {
    if (l.kind == KernelLine::Kind::kOp) {
      close();
      op_s = l.seconds;
      parts_s = 0;
      ++ops;
      continue;
    }
    parts_s += l.seconds;
    gemms += l.kind == KernelLine::Kind::kGemm;
    casts += l.kind == KernelLine::Kind::kCast;
    attention += l.kind == KernelLine::Kind::kAttention;
  }
  close();
  // attention fwd, router fwd, experts fwd, two paged-stash copies, experts bwd and wgrad,
  // router bwd, attention bwd and wgrad.
  EXPECT_EQ(ops, 10);
  EXPECT_EQ(gemms, 15);  // two an op but the router forward's one
  EXPECT_GT(casts, 0);
  EXPECT_EQ(attention, 3);  // forward; backward split over the bwd and wgrad ops
}

// The table's attention kernel on GB200 at 4,096 causal keys is cuDNN's measured one
// (gb200-nvl72.yaml's causal curve: 0.5632 of the 2.5 PFLOP/s BF16 peak = 1,408 TFLOP/s,
// cudnn-frontend's llama3.1 GB200 forward at 4k), and the fused MLP's FC1 kernel runs at its
// measured fraction of the FP8 peak carried to this shape.
TEST(KernelTable, KernelRatesAreTheMeasuredOnes) {
  const Table t = KernelsOf(Load("public-gb200-bridge-qwen3-30b-a3b"), 0, 0);
  bool saw_attention = false, saw_fc1 = false;
  for (const KernelLine& l : t.lines) {
    if (l.kind == KernelLine::Kind::kAttention && l.name == "attention, causal fwd") {
      saw_attention = true;
      EXPECT_NEAR(l.flops / l.seconds / 1e12, 1408.0, 0.5);
      EXPECT_EQ(l.shape, "128 x 4096 x 4096, d 128");
      EXPECT_DOUBLE_EQ(l.peak_flops_per_s, 2500e12);
    }
    if (l.kind == KernelLine::Kind::kGemm && l.name == "gemm fp8, fused MLP FC1 + GLU fwd") {
      saw_fc1 = true;
      EXPECT_EQ(l.shape, "8192 x 1536 x 2048 x 16");
      EXPECT_DOUBLE_EQ(l.peak_flops_per_s, 5000e12);
      const double fraction = l.flops / l.seconds / l.peak_flops_per_s;
      EXPECT_GT(fraction, 0.35);  // measured 0.458 at 64 x 4,096 tokens, hidden 2,560
      EXPECT_LT(fraction, 0.46);  // k 2,048 loses more to the k loop than 2,560
    }
  }
  EXPECT_TRUE(saw_attention);
  EXPECT_TRUE(saw_fc1);
}

// On one GPU with nothing to interfere (no communication, no host thread: launch_us 0), the
// replayed step gives every op of layer 0's forward the table's time.
TEST(KernelTable, OpsTakeTheReplayedTime) {
  const Experiment e = Load(
      "default", {"cluster_overrides.nodes=1", "cluster.gpus_per_node=1", "plan.tp=1", "plan.pp=1",
                  "plan.dp=1", "plan.global_batch=2", "cluster.host.launch_us=0"});
  const Table t = KernelsOf(e, 0, 0);
  std::vector<double> table_fwd;
  for (const KernelLine& l : t.lines) {
    if (l.kind == KernelLine::Kind::kOp && l.name.find("fwd") != std::string::npos) {
      table_fwd.push_back(l.seconds);
    }
  }
  ASSERT_EQ(table_fwd.size(), 2u);  // attention fwd, mlp fwd
  const std::unique_ptr<Simulation> s = Simulate(e);
  std::vector<double> replayed_fwd;
  for (OpId id = 0; id < s->program.OpCount(); ++id) {
    const Op op = s->program.op(id);
    if (op.kind != OpKind::kCompute || op.rank != 0 || op.layer != 0 || op.micro_batch != 0 ||
        (op.tag != Tag::kAttentionFwd && op.tag != Tag::kMlpFwd)) {
      continue;
    }
    replayed_fwd.push_back((s->replay.end[id] - s->replay.start[id]).seconds());
  }
  ASSERT_EQ(replayed_fwd.size(), 2u);
  for (size_t i = 0; i < 2; ++i) EXPECT_NEAR(replayed_fwd[i], table_fwd[i], 1e-11) << i;
}

// Ops tied to no layer (--layer -1) sit on the first stage (embedding) and the last (output
// layer and loss); a layer of another stage is on that stage's rank only.
TEST(KernelTable, LayersSitOnTheirStagesRank) {
  const Experiment e = Load("default");  // pp 4, 32 layers: 8 a stage
  const Mesh mesh(e.plan);
  const std::vector<int> pipeline = mesh.Pipeline(0);
  EXPECT_FALSE(KernelsOf(e, -1, 0, pipeline.front()).lines.empty());
  EXPECT_FALSE(KernelsOf(e, -1, 0, pipeline.back()).lines.empty());
  EXPECT_TRUE(KernelsOf(e, 20, 0, pipeline.front()).lines.empty());
  EXPECT_FALSE(KernelsOf(e, 20, 0, pipeline[2]).lines.empty());
  EXPECT_TRUE(KernelsOf(e, 0, 10'000, pipeline.front()).lines.empty());
}

}  // namespace
}  // namespace meshsim

// NeMo-Automodel's routed experts (README "MoE experts: grouped GEMMs"): the library of
// their GEMMs (plan.moe_grouped_gemm: te, gmm, torch_mm) and its FakeBalancedGate routing
// (plan.moe_routing: contiguous). gmm is one cuBLAS GEMM per local expert on 4 streams,
// torch_mm one grouped kernel per GEMM, its tiles laid over the SMs together; both at
// cluster.efficiency.gmm. Expected values are derived by hand in the comments beside them.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "sim/config/loader.h"
#include "sim/engine/simulation.h"
#include "sim/net/expert_dispatch.h"
#include "sim/report/step_summary.h"
#include "sim/schedule/program.h"
#include "sim/workload/layer_kernels.h"
#include "sim/workload/shape_compute_model.h"
#include "sim/workload/transformer.h"
#include "tests/unit/experiment_step.h"
#include "tests/unit/kernel_fixtures.h"

namespace meshsim {
namespace {

ModelSpec Moe(int top_k = 4, int hidden = 128) { return testing::TinyMoe(top_k, hidden); }

LayerShape Shape(MoeGroupedGemm library) {
  LayerShape s;
  s.seq = 256;
  s.micro_batch = 1;
  s.grouped_gemm = library;
  return s;
}

using testing::H100Like;

// gmm: like GroupedLinear, one launch per local expert on min(4, experts) streams, in
// forward, dgrad, wgrad and recomputation, marked as the library's; 2 GEMM slots per 4
// experts (FC1, FC2).
TEST(MoeExpertLibrary, GmmLaunchesOneGemmPerLocalExpert) {
  const MoeKernels k = MoeLayerKernels(Moe(), Shape(MoeGroupedGemm::kGmm), 4);
  for (const KernelShapes* pass : {&k.experts.fwd, &k.experts.dgrad, &k.experts.wgrad}) {
    ASSERT_EQ(pass->gemms.size(), 2u);
    for (const GemmShape& g : pass->gemms) {
      EXPECT_TRUE(g.launches_per_batch);
      EXPECT_TRUE(g.gmm_rate);
      EXPECT_DOUBLE_EQ(g.batch, 4);
      EXPECT_DOUBLE_EQ(g.streams, 4);
    }
  }
  EXPECT_FALSE(MoeLayerKernels(Moe(), Shape(MoeGroupedGemm::kTe), 4).experts.fwd.gemms[0].gmm_rate);
  EXPECT_EQ(MoeLayerCost(Moe(), Shape(MoeGroupedGemm::kGmm), 1).experts.weight_kernels, 8);
}

// torch_mm: each GEMM one kernel over the 4 local experts (batch 4, not launched per
// expert) at the gmm rate, the same FLOPs; 2 GEMM slots whatever the experts; the
// activation stays.
TEST(MoeExpertLibrary, TorchMmIsOneGroupedKernelPerGemm) {
  const LayerShape s = Shape(MoeGroupedGemm::kTorchMm);
  EXPECT_TRUE(s.OneKernelPerExpertGemm());
  const MoeKernels k = MoeLayerKernels(Moe(), s, 4);
  for (const KernelShapes* pass : {&k.experts.fwd, &k.experts.dgrad, &k.experts.wgrad}) {
    for (const GemmShape& g : pass->gemms) {
      EXPECT_FALSE(g.launches_per_batch);
      EXPECT_TRUE(g.gmm_rate);
      EXPECT_DOUBLE_EQ(g.batch, 4);
    }
  }
  const MoeCost te = MoeLayerCost(Moe(), Shape(MoeGroupedGemm::kTe), 1);
  const MoeCost mm = MoeLayerCost(Moe(), s, 1);
  EXPECT_EQ(te.experts.weight_kernels, 8);
  EXPECT_EQ(mm.experts.weight_kernels, 2);
  EXPECT_DOUBLE_EQ(mm.experts.fwd_flops, te.experts.fwd_flops);
  EXPECT_DOUBLE_EQ(mm.experts.fwd_bytes, te.experts.fwd_bytes);
}

// A grouped kernel's time follows the combined problem's tiles and waves: experts of
// 2048 x 384 x 4096 (8 x 3 = 24 tiles of 256 x 128 each; 2 x 2 = 32 the other way). 11
// experts: 264 tiles, 2 waves of 132 SMs; 12: 288 tiles, 3 waves: 1.5x the time (both
// compute-bound: 2 waves x 4096 / 0.970 x 256 x 128 x 2 FLOPs at 989e12 / 132 x 0.8 per SM
// = 92 us against 11 x 21.5 MB at 3350 GB/s x 0.85 = 83 us). Twice the tokens per expert:
// twice the tiles, about twice the time.
TEST(MoeExpertLibrary, GroupedKernelTimeFollowsTheCombinedTiles) {
  const ShapeComputeModel model(H100Like());
  const GemmShape eleven{2048, 384, 4096, 11};
  const GemmShape twelve{2048, 384, 4096, 12};
  EXPECT_NEAR(model.GemmSeconds(twelve) / model.GemmSeconds(eleven), 1.5, 1e-9);
  EXPECT_NEAR(model.GemmSeconds(eleven) * 1e6, 92.4, 0.5);
  const GemmShape longer{4096, 384, 4096, 11};
  EXPECT_NEAR(model.GemmSeconds(longer) / model.GemmSeconds(eleven), 2.0, 1e-9);
}

// cluster.efficiency.gmm scales only the expert GEMMs of Automodel's BF16 libraries:
// compute-bound 16 x (8192 x 1536 x 2048) take 2x as long at 0.5, launched per expert
// (gmm) or as one grouped kernel (torch_mm); GroupedLinear's keep grouped_gemm_efficiency,
// and a grouped kernel at the dense rate (TE's fused MLP, megablox) does not change.
TEST(MoeExpertLibrary, GmmEfficiencyScalesOnlyTheLibrariesGemms) {
  ShapeModelParams half = H100Like();
  half.gmm_efficiency = 0.5;
  const ShapeComputeModel full_model(H100Like()), half_model(half);
  GemmShape gmm{8192, 1536, 2048, 16};
  gmm.launches_per_batch = true;
  gmm.gmm_rate = true;
  gmm.streams = 4;
  EXPECT_NEAR(half_model.GemmSeconds(gmm) / full_model.GemmSeconds(gmm), 2.0, 1e-9);
  GemmShape torch_mm{8192, 1536, 2048, 16};
  torch_mm.gmm_rate = true;
  EXPECT_NEAR(half_model.GemmSeconds(torch_mm) / full_model.GemmSeconds(torch_mm), 2.0, 1e-9);
  GemmShape te = gmm;
  te.gmm_rate = false;
  EXPECT_DOUBLE_EQ(half_model.GemmSeconds(te), full_model.GemmSeconds(te));
  const GemmShape grouped{8192, 1536, 2048, 16};
  EXPECT_DOUBLE_EQ(half_model.GemmSeconds(grouped), full_model.GemmSeconds(grouped));
}

// The FakeBalancedGate: a token takes one aligned block of top_k consecutive experts.
// Qwen3-30B (128 experts, top 8) at EP 8: each GPU holds 16 experts, 2 of the 16 blocks:
// a token reaches one GPU (reach 1/8), not the 1 - C(112, 8) / C(128, 8) = 0.66 of random
// routing. DeepSeek-V3 (256, top 8) at EP 64 on 8 nodes: a GPU holds half a block (1/32),
// a node 4 of the 32 blocks: a token reaches one node, however the model limits groups.
TEST(MoeExpertLibrary, ContiguousRoutingReachesOneBlocksGpus) {
  std::vector<int> gpus(8);
  std::iota(gpus.begin(), gpus.end(), 0);
  const ExpertFanout qwen = FanoutOf(ContiguousRouting(128, 8), gpus, 8);
  EXPECT_DOUBLE_EQ(qwen.rank_reach, 1.0 / 8);
  EXPECT_NEAR(FanoutOf(ExpertRouting{128, 8}, gpus, 8).rank_reach, 0.66, 0.01);
  gpus.resize(64);
  std::iota(gpus.begin(), gpus.end(), 0);
  const ExpertFanout dsv3 = FanoutOf(ContiguousRouting(256, 8), gpus, 8);
  EXPECT_DOUBLE_EQ(dsv3.rank_reach, 1.0 / 32);
  EXPECT_DOUBLE_EQ(dsv3.domains * dsv3.domain_reach, 1.0);
}

const std::string kExperiment = std::string(MESHSIM_SOURCE_DIR) +
                                "/workloads/experiments/public-h100-automodel-qwen3-30b-a3b.yaml";

// One micro-batch per rank (dp 8 x micro_batch 4): a short step.
StepSummary Step(std::vector<std::string> sets) {
  sets.push_back("plan.global_batch=32");
  return testing::ExperimentStep(kExperiment, std::move(sets));
}

// On Qwen3-30B (16 local experts): gmm's and torch_mm's steps follow
// cluster.efficiency.gmm, not grouped_gemm; te's the reverse; torch_mm's 2 launches per
// pass (not gmm's 32) leave the host less to do.
TEST(MoeExpertLibrary, EachLibraryFollowsItsOwnEfficiency) {
  const auto time = [](const std::string& lib, const std::string& knob) {
    return Step({"plan.moe_grouped_gemm=" + lib, knob}).step_time_s;
  };
  const std::string gmm_half = "cluster.efficiency.gmm=0.5", gmm_full = "cluster.efficiency.gmm=1";
  const std::string te_half = "cluster.efficiency.grouped_gemm=0.5";
  const std::string te_full = "cluster.efficiency.grouped_gemm=1";
  for (const std::string lib : {"gmm", "torch_mm"}) {
    EXPECT_GT(time(lib, gmm_half), 1.1 * time(lib, gmm_full)) << lib;
    EXPECT_DOUBLE_EQ(time(lib, te_half), time(lib, te_full)) << lib;
  }
  EXPECT_GT(time("te", te_half), 1.1 * time("te", te_full));
  EXPECT_DOUBLE_EQ(time("te", gmm_half), time("te", gmm_full));
  const std::string slow_host = "cluster.host.launch_us=200";
  EXPECT_LT(Step({"plan.moe_grouped_gemm=torch_mm", slow_host}).time_breakdown_s.host_bound,
            Step({"plan.moe_grouped_gemm=te", slow_host}).time_breakdown_s.host_bound);
}

// The Qwen3-30B step (one micro-batch) simulated, for what its program holds.
std::unique_ptr<Simulation> Simulated(std::vector<std::string> sets) {
  sets.insert(sets.begin(), "plan.global_batch=32");  // a later global_batch wins
  sets.push_back("cluster.network_model=alpha_beta");
  Result<Experiment> e = LoadExperimentFile(kExperiment, sets);
  EXPECT_TRUE(e.ok()) << e.error().ToString();
  return Simulate(e.value());
}

// Kernel launches the host thread of rank 0 issues in the step.
int64_t HostLaunches(const Program& p) {
  int64_t launches = 0;
  for (OpId id : p.StreamOps(0, Stream::kHost)) launches += p.WorkOf(p.op(id)).kernels;
  return launches;
}

// GroupedLinear's per-expert host work units of rank 0's step (HostExpertUnits).
int64_t HostExpertUnitsOf(const Program& p) {
  int64_t units = 0;
  for (OpId id : p.StreamOps(0, Stream::kHost)) units += HostExpertUnits(p.WorkOf(p.op(id)));
  return units;
}

// The grouped_gemm library's per-expert cuBLAS GEMMs are issued by one C++ loop inside one
// PyTorch op (grouped_gemm csrc/grouped_gemm.cu CublasGroupedGemm; Automodel calls ops.gmm
// once per GEMM): one host launch per GEMM, as torch._grouped_mm, and nothing per expert.
// GroupedLinear is one launch per call too, and works per local expert besides: 16 units
// (cluster.host.expert_us each; BF16) per GEMM, for FC1 and FC2, in the forward, its
// recomputation (full), the input gradient and the weight gradient, in 48 layers.
TEST(MoeExpertLibrary, GmmIsOneHostLaunchPerGemm) {
  const auto gmm = Simulated({"plan.moe_grouped_gemm=gmm"});
  const auto torch_mm = Simulated({"plan.moe_grouped_gemm=torch_mm"});
  const auto te = Simulated({"plan.moe_grouped_gemm=te"});
  EXPECT_EQ(HostLaunches(gmm->program), HostLaunches(torch_mm->program));
  EXPECT_EQ(HostLaunches(te->program), HostLaunches(gmm->program));
  EXPECT_EQ(HostExpertUnitsOf(gmm->program), 0);
  EXPECT_EQ(HostExpertUnitsOf(torch_mm->program), 0);
  EXPECT_EQ(HostExpertUnitsOf(te->program), 48 * 4 * 2 * 16);
}

// ZeRO-3 all-gathers of the first MoE layer on rank 0: (group size, bytes) of each.
std::vector<std::pair<size_t, double>> LayerGathers(const Program& p) {
  std::vector<std::pair<size_t, double>> gathers;
  for (OpId id : p.StreamOps(0, Stream::kDpGather)) {
    const Op op = p.op(id);
    if (op.kind != OpKind::kComm || op.layer != 0) continue;
    const Comm& c = p.comms()[static_cast<size_t>(op.comm)];
    gathers.emplace_back(p.groups()[static_cast<size_t>(c.group)].size(), c.bytes);
  }
  return gathers;
}

// FSDP gathers each parameter over the ranks its shards are split over: a MoE layer's
// dense parameters over the 8 data-parallel ranks, its routed experts over the expert
// gradient group (NeMo-Automodel: fully_shard of the experts on the ep_shard mesh, dp /
// ep ranks, and none at ep = dp). At ep 8 each rank's 16 experts are its own: no gather
// holds them (16 x 3 x 2048 x 768 bf16 = 151 MB); at ep 4 its 32 experts (302 MB) are
// gathered over 2 ranks. Forward and backward (reshard_after_forward true) gather alike.
TEST(MoeExpertLibrary, ExpertsAreGatheredOverTheExpertGroupOnly) {
  const std::string regather = "plan.framework_options.reshard_after_forward=true";
  const std::string reshard = "plan.framework_options.reshard_after_backward=true";
  const double expert_bytes = 16.0 * 3 * 2048 * 768 * 2;
  const auto ep8 = LayerGathers(Simulated({regather, reshard})->program);
  ASSERT_EQ(ep8.size(), 2u);
  for (const auto& [ranks, bytes] : ep8) {
    EXPECT_EQ(ranks, 8u);
    EXPECT_LT(bytes, 0.5 * expert_bytes);
  }
  const auto ep4 = LayerGathers(Simulated({regather, reshard, "plan.ep=4"})->program);
  ASSERT_EQ(ep4.size(), 4u);
  EXPECT_EQ(ep4[0].first, 8u);
  EXPECT_DOUBLE_EQ(ep4[0].second, ep8[0].second);
  EXPECT_EQ(ep4[1].first, 2u);
  EXPECT_DOUBLE_EQ(ep4[1].second, 2 * expert_bytes);
}

// Rank 0's gradient reductions (collectives on its DP stream).
int Reductions(const Program& p) {
  int n = 0;
  for (OpId id : p.StreamOps(0, Stream::kDp)) n += p.op(id).kind == OpKind::kComm;
  return n;
}

// NeMo-Automodel's enable_fsdp_optimizations (the experiment's settings: FSDP2's
// set_reshard_after_backward and set_requires_gradient_sync false but in the last
// micro-batch): over 2 micro-batches each unit is gathered once and its gradients
// reduce-scattered once (48 layers, the embedding and the output layer: 50); resharded and
// synchronised every micro-batch, twice each. The deferred gradients accumulate whole: the
// dense parameters' fp32 gradients (~1.5 B parameters: 5.7 GiB) on top of their shards.
TEST(MoeExpertLibrary, FsdpOptimizationsGatherAndReduceOncePerStep) {
  const std::vector<std::string> each = {"plan.global_batch=64",
                                         "plan.framework_options.reshard_after_backward=true",
                                         "plan.framework_options.requires_gradient_sync=true"};
  const auto once = Simulated({"plan.global_batch=64"});
  const auto twice = Simulated(each);
  EXPECT_EQ(LayerGathers(once->program).size(), 1u);
  EXPECT_EQ(LayerGathers(twice->program).size(), 2u);
  EXPECT_EQ(Reductions(once->program), 50);
  EXPECT_EQ(Reductions(twice->program), 100);
  const double extra = SummarizeStep(*once).memory_breakdown_gib.gradients -
                       SummarizeStep(*twice).memory_breakdown_gib.gradients;
  EXPECT_NEAR(extra, 5.7, 0.3);
}

// Contiguous routing sends each token to one GPU instead of ~5: less exposed EP time.
TEST(MoeExpertLibrary, ContiguousRoutingShortensTheDispatch) {
  const StepSummary contiguous = Step({"plan.moe_routing=contiguous"});
  const StepSummary random = Step({"plan.moe_routing=random"});
  EXPECT_LT(contiguous.time_breakdown_s.exposed_ep_comm,
            0.5 * random.time_breakdown_s.exposed_ep_comm);
}

TEST(MoeExpertLibrary, BadInputNamesTheKey) {
  const auto error = [](const std::vector<std::string>& sets) {
    return testing::ExperimentLoadError(kExperiment, sets);
  };
  const std::string unknown = error({"plan.moe_grouped_gemm=cutlass"});
  EXPECT_NE(unknown.find("plan.moe_grouped_gemm"), std::string::npos) << unknown;
  const std::string fp8 = error({"training.dtype=fp8"});
  EXPECT_NE(fp8.find("plan.moe_grouped_gemm"), std::string::npos) << fp8;
  EXPECT_EQ(error({"training.dtype=fp8", "plan.moe_grouped_gemm=te"}), "");
  const std::string blocks = error({"model.top_k=6"});  // 6 does not divide 128 experts
  EXPECT_NE(blocks.find("plan.moe_routing"), std::string::npos) << blocks;
  const std::string routing = error({"plan.moe_routing=fake"});
  EXPECT_NE(routing.find("plan.moe_routing"), std::string::npos) << routing;
  const std::string kept = error({"plan.framework_options.reshard_after_forward=true"});
  EXPECT_NE(kept.find("plan.framework_options.reshard_after_backward"), std::string::npos) << kept;
  const std::string knob = error({"cluster.efficiency.gmm=0"});
  EXPECT_NE(knob.find("cluster.efficiency.gmm"), std::string::npos) << knob;
}

}  // namespace
}  // namespace meshsim

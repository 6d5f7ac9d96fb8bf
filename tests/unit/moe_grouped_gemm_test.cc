// The routed experts' two GEMM paths (README "MoE experts: grouped GEMMs"): Transformer
// Engine's GroupedLinear, one cuBLAS GEMM per local expert at
// cluster.efficiency.grouped_gemm of the GEMM rate, and the fused grouped MLP
// (plan.framework_options.fused_grouped_mlp), one grouped kernel per GEMM: their input
// checks and their effect on a whole step (the per-kernel arithmetic is in
// moe_kernels_test.cc).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sim/config/loader.h"
#include "sim/engine/simulation.h"
#include "sim/schedule/host_launch.h"
#include "sim/workload/compute_model.h"
#include "tests/unit/experiment_step.h"

namespace meshsim {
namespace {

const std::string kSource = MESHSIM_SOURCE_DIR;
// One B200 node, Qwen3-30B-A3B (128 experts, top 8), EP 8: 16 local experts.
const std::string kExperiment =
    kSource + "/workloads/experiments/public-b200-bridge-qwen3-30b-a3b.yaml";

StepSummary Step(std::vector<std::string> sets) {
  sets.push_back("plan.global_batch=64");  // 2 micro-batches per rank: a short test
  return testing::ExperimentStep(kExperiment, std::move(sets));
}

std::string LoadError(const std::vector<std::string>& sets) {
  return testing::ExperimentLoadError(kExperiment, sets);
}

// The expert GEMMs at half the rate lengthen the step by about their time: the step grows,
// by less than twice. No host model: at the fitted launch cost this row is host-bound, and
// the GPU's rate would hide behind its CPU.
TEST(MoeGroupedGemm, LowerGroupedEfficiencyLengthensTheStep) {
  const StepSummary full = Step({"cluster.efficiency.grouped_gemm=1", "cluster.host.launch_us=0"});
  const StepSummary half =
      Step({"cluster.efficiency.grouped_gemm=0.5", "cluster.host.launch_us=0"});
  EXPECT_GT(half.step_time_s, 1.05 * full.step_time_s);
  EXPECT_LT(half.step_time_s, 2 * full.step_time_s);
}

// The fused grouped MLP runs the experts' GEMMs as one kernel each, at its own share of
// the rate (cluster.efficiency.fused_grouped_gemm: a lower one lengthens the step, and
// GroupedLinear's grouped_gemm does not apply); its host launches drop from one per local
// expert (16 x 2 per pass) to 2, and at the same share it is faster than GroupedLinear.
TEST(MoeGroupedGemm, FusedGroupedMlpHasItsOwnEfficiencyAndLaunchesLess) {
  const std::string fused = "plan.framework_options.fused_grouped_mlp=true";
  const std::string full = "cluster.efficiency.fused_grouped_gemm=1";
  const StepSummary a = Step({fused, full, "cluster.efficiency.grouped_gemm=1"});
  const StepSummary b = Step({fused, "cluster.efficiency.fused_grouped_gemm=0.5"});
  EXPECT_GT(b.step_time_s, 1.05 * a.step_time_s);
  EXPECT_LT(b.step_time_s, 2 * a.step_time_s);
  EXPECT_DOUBLE_EQ(Step({fused, full, "cluster.efficiency.grouped_gemm=0.5"}).step_time_s,
                   a.step_time_s);
  const StepSummary unfused = Step({"cluster.efficiency.grouped_gemm=1"});
  EXPECT_LT(a.time_breakdown_s.host_bound, unfused.time_breakdown_s.host_bound);
  EXPECT_LT(a.step_time_s, unfused.step_time_s);
  const StepSummary unfused_half = Step({"cluster.efficiency.grouped_gemm=0.5"});
  EXPECT_LT(b.step_time_s, unfused_half.step_time_s);
}

// GroupedLinear's casts: one call per GEMM whatever the recipe. TE's split_quantize
// quantises the experts' inputs from one Python call, in a C++ loop (one fused kernel under
// delayed scaling, the experts' kernels one by one otherwise: cast.cpp @ v2.14), so the
// host pays the call once, as for a dense GEMM's cast (current scaling: amax and cast).
TEST(MoeGroupedGemm, GroupedLinearCastsTheExpertsInOneCall) {
  KernelShapes grouped;
  GemmShape g{4096, 1536, 2048, 8, /*fp8=*/true, /*casts_a=*/true};
  g.launches_per_batch = true;
  grouped.gemms = {g};
  EXPECT_EQ(Fp8CastLaunches(grouped, Fp8Recipe::kCurrent), 2);
  EXPECT_EQ(Fp8CastLaunches(grouped, Fp8Recipe::kMxfp8), 1);
  EXPECT_EQ(Fp8CastLaunches(grouped, Fp8Recipe::kDelayed), 1);
  KernelShapes dense = grouped;
  dense.gemms[0].launches_per_batch = false;
  EXPECT_EQ(Fp8CastLaunches(dense, Fp8Recipe::kCurrent), 2);
  KernelShapes wgrad = grouped;
  wgrad.gemms[0].casts_a = false;
  EXPECT_EQ(Fp8CastLaunches(wgrad, Fp8Recipe::kMxfp8), 0);
}

// The host work that issues rank 0's routed-expert ops (forward, input and weight
// gradients): its launches, its GroupedLinear calls among them and their expert units
// (HostThread::Issue).
struct HostWork {
  int launches = 0;
  int grouped_calls = 0;
  int expert_units = 0;
};
HostWork HostWorkOf(std::vector<std::string> sets) {
  sets.push_back("plan.global_batch=64");
  sets.push_back("cluster.network_model=alpha_beta");
  Result<Experiment> e = LoadExperimentFile(kExperiment, sets);
  EXPECT_TRUE(e.ok()) << e.error().ToString();
  const auto sim = Simulate(e.value());
  const Program& p = sim->program;
  HostWork h;
  for (OpId id : p.StreamOps(0, Stream::kHost)) {
    if (p.Info(id).tag != Tag::kHostLaunch) continue;
    bool experts = false;
    for (const OpId* d = p.DependentsBegin(id); d != p.DependentsEnd(id); ++d) {
      const Tag t = p.Info(*d).tag;
      experts = experts || t == Tag::kMoeExpertsFwd || t == Tag::kMoeExpertsBwd ||
                t == Tag::kMoeExpertsWgrad;
    }
    if (!experts) continue;
    const KernelWork& w = p.WorkOf(p.op(id));
    h.launches += w.kernels;
    h.grouped_calls += HostGroupedCalls(w);
    h.expert_units += HostExpertUnits(w);
  }
  return h;
}

// On a step, GroupedLinear's host cost scales with the local experts as its source does:
// each of FC1 and FC2 in each of forward, input gradient and weight gradient is one call
// (one launch) and one unit of per-expert work per local expert (cluster.host.expert_us:
// grouped_linear.py's per-expert weights, saved tensors and hooks, te_general_grouped_gemm's
// per-expert cuBLAS GEMM), under FP8 a unit more per local expert for each call that
// quantises its input (the per-expert quantizers and FP8 weights, split_quantize's
// per-expert quantize), and the MXFP8 casts of the experts' inputs and output gradients
// one split_quantize call (one launch) each, whatever the expert count. EP 8 -> 4 doubles
// the local experts (16 -> 32) on 48 layers and 2 micro-batches: the launches stay, the
// units double.
TEST(MoeGroupedGemm, HostWorkScalesWithLocalExpertsByTheirGemmsNotTheirCasts) {
  const int layers_mbs = 48 * 2;
  const HostWork bf16_16 = HostWorkOf({"training.dtype=bf16"});
  const HostWork bf16_32 = HostWorkOf({"training.dtype=bf16", "plan.ep=4"});
  EXPECT_EQ(bf16_16.expert_units, 6 * 16 * layers_mbs);
  EXPECT_EQ(bf16_32.expert_units, 6 * 32 * layers_mbs);
  EXPECT_EQ(bf16_32.launches, bf16_16.launches);
  const HostWork mx_16 = HostWorkOf({});
  const HostWork mx_32 = HostWorkOf({"plan.ep=4"});
  EXPECT_EQ(mx_16.expert_units, (6 + 4) * 16 * layers_mbs);
  EXPECT_EQ(mx_32.expert_units, (6 + 4) * 32 * layers_mbs);
  // The casts add one launch per call whatever the local experts (one per expert each
  // before): FC1's and FC2's inputs forward, their output gradients backward.
  EXPECT_EQ(mx_16.launches - bf16_16.launches, 4 * layers_mbs);
  EXPECT_EQ(mx_32.launches - bf16_32.launches, 4 * layers_mbs);
  // Six GroupedLinear calls per layer and micro-batch (FC1 and FC2 in forward, input
  // gradient and weight gradient), whatever the precision and the local experts.
  for (const HostWork& h : {bf16_16, bf16_32, mx_16, mx_32}) {
    EXPECT_EQ(h.grouped_calls, 6 * layers_mbs);
  }
}

// A host op's GroupedLinear calls cost cluster.host.call_us each in place of a launch
// (launch_us when unset, the same bits as before the key); its other launches and its
// per-expert units keep their costs; a host op without expert units has no calls.
TEST(MoeGroupedGemm, CallCostReplacesTheCallsLaunches) {
  HostSpec unset;
  unset.launch_us = 7;
  EXPECT_EQ(unset.CallUs(), 7);
  const KernelWork w = HostLaunchWork(/*launches=*/5, /*trailing=*/0, /*expert_units=*/16,
                                      /*grouped_calls=*/2);
  EXPECT_EQ(HostGroupedCalls(w), 2);
  EXPECT_EQ(HostTrailingLaunches(w), 0);
  EXPECT_EQ(HostGroupedCalls(HostLaunchWork(5, 2)), 0);
  EXPECT_EQ(HostTrailingLaunches(HostLaunchWork(5, 2)), 2);
  const auto model = [](double call_s) {
    return HostLaunchComputeModel(std::make_unique<RooflineComputeModel>(1e15, 1e12, 0), 10e-6,
                                  20e-6, call_s);
  };
  EXPECT_EQ(model(-1).Duration(w), SimTime::Seconds(5 * 10e-6 + 16 * 20e-6));
  EXPECT_EQ(model(10e-6).Duration(w), model(-1).Duration(w));
  EXPECT_NEAR(model(500e-6).Duration(w).seconds(), 3 * 10e-6 + 2 * 500e-6 + 16 * 20e-6, 1e-12);
  // On a host-bound step: dearer calls lengthen it; the launch cost as the call cost gives
  // the step without the key, bit for bit.
  const StepSummary unset_step = Step({});
  const StepSummary as_launch = Step({"cluster.host.call_us=60"});
  const StepSummary dear = Step({"cluster.host.call_us=1000"});
  EXPECT_EQ(as_launch.step_time_s, unset_step.step_time_s);
  EXPECT_GT(dear.step_time_s, 1.02 * unset_step.step_time_s);
  EXPECT_NE(LoadError({"cluster.host.call_us=-1"}), "");
}

// The per-expert cost is cluster.host.expert_us (launch_us when unset): a dearer expert
// lengthens this host-bound step, and 0 leaves only the calls' launches.
TEST(MoeGroupedGemm, ExpertHostCostSetsTheStep) {
  HostSpec unset;
  unset.launch_us = 7;
  EXPECT_EQ(unset.ExpertUs(), 7);
  const StepSummary at = Step({"cluster.host.expert_us=50"});
  const StepSummary dear = Step({"cluster.host.expert_us=100"});
  const StepSummary free = Step({"cluster.host.expert_us=0"});
  EXPECT_GT(dear.step_time_s, 1.05 * at.step_time_s);
  EXPECT_LT(free.step_time_s, at.step_time_s);
  EXPECT_NE(LoadError({"cluster.host.expert_us=-1"}), "");
}

TEST(MoeGroupedGemm, BadInputNamesTheKey) {
  const std::string bad = LoadError({"cluster.efficiency.grouped_gemm=1.5"});
  EXPECT_NE(bad.find("cluster.efficiency.grouped_gemm"), std::string::npos) << bad;
  EXPECT_NE(LoadError({"cluster.efficiency.grouped_gemm=0"}), "");
  // The fused grouped MLP is TE's MXFP8 kernel: not under BF16 or FP8 current scaling.
  const std::string fused = "plan.framework_options.fused_grouped_mlp=true";
  EXPECT_NE(LoadError({"cluster.efficiency.fused_grouped_gemm=0"})
                .find("cluster.efficiency.fused_grouped_gemm"),
            std::string::npos);
  EXPECT_NE(LoadError({"cluster.efficiency.fused_grouped_gemm=1.5"}), "");
  const std::string bf16 = LoadError({fused, "training.dtype=bf16"});
  EXPECT_NE(bf16.find("plan.framework_options.fused_grouped_mlp"), std::string::npos) << bf16;
  EXPECT_NE(LoadError({fused, "training.fp8_recipe=current"}), "");
  EXPECT_EQ(LoadError({fused}), "");
  // The measured fused kernels (gpu.fused_grouped_mlp): fractions of the peak, positive
  // sizes.
  const std::string key = "cluster.gpu.fused_grouped_mlp.efficiency.fc2_dgrad";
  const std::string over = LoadError({key + "=1.5"});
  EXPECT_NE(over.find(key), std::string::npos) << over;
  EXPECT_NE(LoadError({"cluster.gpu.fused_grouped_mlp.experts=0"}), "");
}

}  // namespace
}  // namespace meshsim

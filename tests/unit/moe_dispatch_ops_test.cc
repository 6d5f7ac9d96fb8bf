// The flex dispatcher's ops around the experts (moe_blocks.cc): the gradient of the token
// dispatch after the experts' weight gradients (Transformer Engine's GroupedLinear computes
// them before it returns the input gradient), or beside them with Megatron-Core's
// overlap_dispatch_backward_with_experts_wgrad; and HybridEP's all-gather of the routing
// map before each forward dispatch (plan.moe_flex_backend).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sim/engine/step_stats.h"
#include "tests/unit/experiment_step.h"

namespace meshsim {
namespace {

const std::string kSource = MESHSIM_SOURCE_DIR;
// Two H100 nodes, Qwen3-30B-A3B (48 MoE layers), EP 16 over both, HybridEP.
const std::string kExperiment =
    kSource + "/workloads/experiments/public-h100-bridge-qwen3-30b-a3b.yaml";
const std::string kBeside =
    "plan.framework_options.overlap_dispatch_backward_with_experts_wgrad=true";

// One micro-batch per rank, no host model, no interference: every EP op (dispatch and
// combine, forward and backward: four per layer, of equal bytes) is exposed by default.
// Beside the weight gradients, which take longer than an EP op here, the backward's
// second one is hidden: a quarter of the exposed EP time, and as much of the step.
TEST(DispatchBackward, RunsAfterTheExpertsWeightGradientsUnlessOverlapped) {
  const std::vector<std::string> base = {"plan.global_batch=16", "cluster.host.launch_us=0",
                                         "cluster.efficiency.comm_interference=0",
                                         "plan.moe_flex_backend=deepep"};
  std::vector<std::string> beside = base;
  beside.push_back(kBeside);
  const StepSummary after = testing::ExperimentStep(kExperiment, base);
  const StepSummary overlapped = testing::ExperimentStep(kExperiment, beside);
  const double exposed = after.time_breakdown_s.exposed_ep_comm;
  ASSERT_GT(exposed, 0.05 * after.step_time_s);
  EXPECT_NEAR(overlapped.time_breakdown_s.exposed_ep_comm, 0.75 * exposed, 0.01 * exposed);
  EXPECT_NEAR(after.step_time_s - overlapped.step_time_s, 0.25 * exposed, 0.01 * exposed);
  EXPECT_DOUBLE_EQ(after.model_flops_per_step, overlapped.model_flops_per_step);
}

// HybridEP all-gathers the routing map (4,096 tokens x 128 experts, a byte each, from 16
// ranks) before each of the 48 forward dispatches: each rank sends 15/16 of the gathered
// map per layer, and the step grows by about its extra exposed EP time (the dispatch waits
// for the gathers; HybridEP's kernels also run slower per RDMA byte over two domains than
// DeepEP's, net/expert_dispatch.h DomainRateFactor).
TEST(HybridEpRoutingMap, GatheredBeforeEachForwardDispatch) {
  const std::vector<std::string> base = {"plan.global_batch=16", "cluster.host.launch_us=0",
                                         "cluster.efficiency.comm_interference=0"};
  std::vector<std::string> deepep = base, hybridep = base;
  deepep.push_back("plan.moe_flex_backend=deepep");
  hybridep.push_back("plan.moe_flex_backend=hybridep");
  const StepSummary d = testing::ExperimentStep(kExperiment, deepep);
  const StepSummary h = testing::ExperimentStep(kExperiment, hybridep);
  const int ep = static_cast<int>(CommClass::kEp);
  EXPECT_NEAR(h.devices[0].sent_bytes[ep] - d.devices[0].sent_bytes[ep],
              48 * 15.0 / 16 * 4096 * 128 * 16, 1.0);
  const double extra = h.time_breakdown_s.exposed_ep_comm - d.time_breakdown_s.exposed_ep_comm;
  EXPECT_GT(extra, 48 * 10e-6);
  EXPECT_NEAR(h.step_time_s - d.step_time_s, extra, 0.05 * extra);
}

// The flex dispatcher's library runs two kernels (net/expert_dispatch.h DomainRateFactor
// times them apart): forward, a dispatch then a combine; backward, the combine's gradient
// as a dispatch, then the dispatch's gradient as a combine (Megatron-Core fused_a2a.py
// HybridEPCombine.backward / HybridEPDispatch.backward), in each of the 48 layers of each
// micro-batch. The all-to-all dispatcher runs all-to-alls only.
TEST(FlexKernels, DispatchThenCombineInEachPass) {
  const std::vector<std::string> sets = {"plan.global_batch=16",
                                         "cluster.network_model=alpha_beta"};
  Result<Experiment> e = LoadExperimentFile(kExperiment, sets);
  ASSERT_TRUE(e.ok()) << e.error().ToString();
  const std::unique_ptr<Simulation> sim = Simulate(e.value());
  std::vector<CommOp> rank0;
  for (OpId id : sim->program.StreamOps(0, Stream::kEp)) {
    const Op op = sim->program.op(id);
    if (op.kind != OpKind::kComm) continue;
    const CommOp c = sim->program.comms()[op.comm].op;
    if (IsExpertExchange(c)) rank0.push_back(c);
  }
  ASSERT_EQ(rank0.size(), 48u * 4);
  for (size_t i = 0; i < rank0.size(); i += 2) {
    EXPECT_EQ(rank0[i], CommOp::kExpertDispatch) << i;
    EXPECT_EQ(rank0[i + 1], CommOp::kExpertCombine) << i;
  }
}

// Megatron-Core allows one of the two overlaps; an unknown flex backend names its key.
TEST(DispatchBackward, BadInputNamesTheKey) {
  const std::string key = "plan.framework_options.overlap_dispatch_backward_with_experts_wgrad";
  const std::string both = testing::ExperimentLoadError(
      kExperiment, {kBeside, "plan.framework_options.overlap_moe_expert_parallel_comm=true"});
  EXPECT_NE(both.find(key), std::string::npos) << both;
  EXPECT_EQ(testing::ExperimentLoadError(kExperiment, {kBeside}), "");
  const std::string backend =
      testing::ExperimentLoadError(kExperiment, {"plan.moe_flex_backend=nccl"});
  EXPECT_NE(backend.find("plan.moe_flex_backend"), std::string::npos) << backend;
}

}  // namespace
}  // namespace meshsim

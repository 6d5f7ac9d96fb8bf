// The host (CPU) thread of each rank (sim/schedule/host_launch.h): hand-worked timelines
// of kernels it issues, its synchronisations and CUDA graphs, and the step builder's
// host threads on a MoE step.
#include "sim/schedule/host_launch.h"

#include <gtest/gtest.h>

#include "sim/config/loader.h"
#include "sim/engine/replay.h"
#include "sim/engine/simulation.h"
#include "sim/engine/step_stats.h"
#include "tests/unit/test_fixtures.h"

namespace meshsim {
namespace {

constexpr double kLaunchUs = 5;

// 1 us per 1e9 FLOPs on the GPU, kLaunchUs per launch on the host.
std::unique_ptr<ComputeModel> HostModel(double launch_us = kLaunchUs) {
  return std::make_unique<HostLaunchComputeModel>(
      std::make_unique<testing::FlopsOnlyComputeModel>(), launch_us * 1e-6);
}

ReplayResult ReplayChain(const Program& p) {
  testing::FreeNetwork network;
  return Replay(p, *HostModel(), network);
}

// One rank: `n` kernels of `kernel_us` each, each issued in one launch by the host thread;
// after kernel `sync_after` (-1: none) the host waits for it. With `graph`, the kernels are
// one captured CUDA graph.
struct Chain {
  Program program{1};
  std::vector<OpId> kernels;
};
Chain KernelChain(int n, double kernel_us, int sync_after = -1, bool graph = false) {
  Chain c;
  HostThread host(0, true);
  if (graph) host.BeginGraph();
  for (int i = 0; i < n; ++i) {
    const OpId k = c.program.AddCompute(0, Tag::kMlpFwd, KernelWork{kernel_us * 1e9, 0, 1});
    host.Issue(c.program, k, 1);
    c.kernels.push_back(k);
    if (i == sync_after) host.Sync(c.program, {k});
  }
  if (graph) host.EndGraph();
  c.program.Finalize();
  return c;
}

TEST(HostLaunch, ShortKernelsAreHostBound) {
  // 1 us kernels, 5 us launches: each kernel starts as its launch ends; the step is ten
  // launches and the last kernel.
  const Chain c = KernelChain(10, 1);
  const ReplayResult r = ReplayChain(c.program);
  ASSERT_TRUE(r.completed) << r.stall;
  EXPECT_EQ(r.step_time, SimTime::Microseconds(10 * kLaunchUs + 1));
  EXPECT_EQ(r.start[c.kernels[3]], SimTime::Microseconds(4 * kLaunchUs));
}

TEST(HostLaunch, LongKernelsHideTheHost) {
  // 100 us kernels: the host runs ahead; only the first launch shows.
  const Chain c = KernelChain(10, 100);
  const ReplayResult r = ReplayChain(c.program);
  ASSERT_TRUE(r.completed) << r.stall;
  EXPECT_EQ(r.step_time, SimTime::Microseconds(kLaunchUs + 10 * 100));
}

TEST(HostLaunch, ASyncDrainsTheRunAhead) {
  // The host waits for kernel 4 to end before it launches kernel 5: the GPU idles one
  // launch.
  const Chain c = KernelChain(10, 100, 4);
  const ReplayResult r = ReplayChain(c.program);
  ASSERT_TRUE(r.completed) << r.stall;
  EXPECT_EQ(r.start[c.kernels[5]], r.end[c.kernels[4]] + SimTime::Microseconds(kLaunchUs));
  EXPECT_EQ(r.step_time, SimTime::Microseconds(2 * kLaunchUs + 10 * 100));
}

TEST(HostLaunch, TrailingLaunchesRunBehindTheGpu) {
  // One op of ten kernels, 100 us on the GPU in all, issued by an idle host in ten
  // launches of which the last four come after its main kernels (as GPT-OSS's expert
  // biases after FC2's GEMMs): the GPU starts it after six launches and the host launches
  // the other four while it runs (a launch is asynchronous). Without trailing launches it
  // waits for all ten. The op after it is launched after all ten either way.
  for (const int trailing : {0, 4}) {
    Program p(1);
    HostThread host(0, true);
    const OpId op = p.AddCompute(0, Tag::kMlpFwd, KernelWork{100e9, 0, 10});
    host.Issue(p, op, 10, -1, -1, trailing);
    const OpId next = p.AddCompute(0, Tag::kMlpFwd, KernelWork{1e9, 0, 1});
    host.Issue(p, next, 1);
    p.Finalize();
    const ReplayResult r = ReplayChain(p);
    ASSERT_TRUE(r.completed) << r.stall;
    const double start_us = (10 - trailing) * kLaunchUs;
    EXPECT_EQ(r.start[op], SimTime::Microseconds(start_us)) << trailing;
    EXPECT_EQ(r.step_time, SimTime::Microseconds(start_us + 100 + 1)) << trailing;
    // Host-bound time: the GPU idle while the host launches what it waits for.
    EXPECT_NEAR(AnalyzeStep(p, r).ranks[0].breakdown.host_s, start_us * 1e-6, 1e-12) << trailing;
  }
  // A 1 us op whose last four launches trail: the GPU runs out of launched kernels; the
  // op after it waits for its own launch, after all ten (eleven launches and its 1 us),
  // all of it host-bound but the 1 us the short op ran.
  Program q(1);
  HostThread h(0, true);
  const OpId shortop = q.AddCompute(0, Tag::kMlpFwd, KernelWork{1e9, 0, 10});
  h.Issue(q, shortop, 10, -1, -1, 4);
  const OpId after = q.AddCompute(0, Tag::kMlpFwd, KernelWork{1e9, 0, 1});
  h.Issue(q, after, 1);
  q.Finalize();
  const ReplayResult s = ReplayChain(q);
  EXPECT_EQ(s.start[shortop], SimTime::Microseconds(6 * kLaunchUs));
  EXPECT_EQ(s.start[after], SimTime::Microseconds(11 * kLaunchUs));
  EXPECT_EQ(s.step_time, SimTime::Microseconds(11 * kLaunchUs + 1));
  EXPECT_NEAR(AnalyzeStep(q, s).ranks[0].breakdown.host_s, (11 * kLaunchUs - 1) * 1e-6, 1e-12);
}

TEST(HostLaunch, CudaGraphLaunchesOnce) {
  // The ten 1 us kernels as one graph: one launch, then the kernels back to back.
  const Chain c = KernelChain(10, 1, -1, /*graph=*/true);
  const ReplayResult r = ReplayChain(c.program);
  ASSERT_TRUE(r.completed) << r.stall;
  EXPECT_EQ(r.step_time, SimTime::Microseconds(kLaunchUs + 10));
  // A sync inside the graph is dropped (CUDA cannot capture it).
  const Chain synced = KernelChain(10, 1, 4, /*graph=*/true);
  EXPECT_EQ(ReplayChain(synced.program).step_time, r.step_time);
}

TEST(HostLaunch, OffAddsNothing) {
  Program p(1);
  HostThread host(0, false);
  const OpId k = p.AddCompute(0, Tag::kMlpFwd, KernelWork{1e3, 0, 1});
  host.Issue(p, k, 3);
  host.Sync(p, {k});
  EXPECT_EQ(p.OpCount(), 1u);
}

// A MoE step of 8 ranks (ep 8) with short kernels: the host threads' launches and the
// dispatcher's synchronisation per MoE layer decide its time.
Experiment SmallMoe() {
  Experiment e;
  e.name = "moe";
  e.model = testing::SmallModel();
  e.model.experts = 64;
  e.model.top_k = 2;
  e.model.moe_ffn_hidden = 256;
  e.model.ffn_kind = FfnKind::kSwiglu;
  e.model.seq_len = 256;
  e.cluster = testing::OneNode(8);
  e.cluster.host.launch_us = kLaunchUs;
  e.plan.dp = 8;
  e.plan.ep = 8;
  e.plan.global_batch = 8;
  return e;
}

std::unique_ptr<Simulation> SimulateWithHost(const Experiment& e) {
  return Simulate(
      e, {}, Models{HostModel(e.cluster.host.launch_us), std::make_unique<testing::FreeNetwork>()});
}

int CountTag(const Program& p, int rank, Tag tag) {
  int n = 0;
  for (OpId id : p.StreamOps(rank, Stream::kHost)) n += p.Info(id).tag == tag;
  return n;
}

TEST(HostLaunch, MoeStepSynchronisesOncePerMoeLayerForward) {
  const auto sim = SimulateWithHost(SmallMoe());
  ASSERT_TRUE(sim->replay.completed) << sim->replay.stall;
  EXPECT_EQ(CountTag(sim->program, 0, Tag::kHostSync), 8);  // 8 layers, 1 micro-batch
  // Every GPU op of the rank waits for a launch of its host thread.
  int gpu_ops = 0;
  for (int s = 0; s < kStreamCount; ++s) {
    if (static_cast<Stream>(s) == Stream::kHost) continue;
    for (OpId id : sim->program.StreamOps(0, static_cast<Stream>(s))) {
      gpu_ops += sim->program.op(id).kind != OpKind::kMemory;
    }
  }
  EXPECT_EQ(CountTag(sim->program, 0, Tag::kHostLaunch), gpu_ops);
  // The kernels are short: the host bounds the step, and the breakdown says so.
  EXPECT_GT(sim->stats.ranks[0].breakdown.host_s, 0.5 * sim->replay.step_time.seconds());
}

TEST(HostLaunch, LaunchCostSetsTheMoeStepAndGraphsCutIt) {
  Experiment e = SmallMoe();
  const double eager = SimulateWithHost(e)->replay.step_time.seconds();
  e.cluster.host.launch_us = 2 * kLaunchUs;
  const double slower = SimulateWithHost(e)->replay.step_time.seconds();
  EXPECT_NEAR(slower / eager, 2.0, 0.1);  // host-bound: the step scales with the launch cost
  e.training.cuda_graphs.attn = true;
  e.training.cuda_graphs.moe_router = true;
  e.training.cuda_graphs.moe_preprocess = true;
  const double graphed = SimulateWithHost(e)->replay.step_time.seconds();
  EXPECT_LT(graphed, 0.9 * slower);
  e.training.cuda_graphs = CudaGraphScope{};
  e.training.cuda_graphs.full_iteration = true;
  const auto full = SimulateWithHost(e);
  EXPECT_EQ(CountTag(full->program, 0, Tag::kHostLaunch), 1);
  EXPECT_EQ(CountTag(full->program, 0, Tag::kHostSync), 0);
  EXPECT_LT(full->replay.step_time.seconds(), 0.2 * slower);
}

// Transformer Engine's GroupedLinear works per local expert on the host, one call (FC1,
// FC2) after the other: after the dispatcher's sync the GPU starts FC1 once the host has
// done FC1's per-expert work and runs it while the host does FC2's. H100 Qwen3-30B-A3B
// (FP8, EP 16: 8 local experts, 16 units a call with the casts): 10 us more per unit
// delays FC1 by 160 us and FC2 by 320 us after the router; one op waiting for both calls
// would start 320 us later.
struct ExpertStarts {
  double fc1 = 0, fc2 = 0;  // after the router's end, s
};
ExpertStarts FirstMoeLayerStarts(double expert_us) {
  Result<Experiment> e =
      LoadExperimentFile(std::string(MESHSIM_SOURCE_DIR) +
                             "/workloads/experiments/public-h100-bridge-qwen3-30b-a3b.yaml",
                         {"plan.global_batch=16", "cluster.network_model=alpha_beta",
                          "cluster.host.expert_us=" + std::to_string(expert_us)});
  EXPECT_TRUE(e.ok()) << e.error().ToString();
  const auto sim = Simulate(e.value());
  const Program& p = sim->program;
  SimTime router_end;
  std::vector<SimTime> experts;
  for (OpId id : p.StreamOps(0, Stream::kCompute)) {
    const Op op = p.op(id);
    if (op.layer != 0 || op.micro_batch != 0) continue;
    if (op.tag == Tag::kMoeRouterFwd) router_end = sim->replay.end[id];
    if (op.tag == Tag::kMoeExpertsFwd) experts.push_back(sim->replay.start[id]);
  }
  EXPECT_EQ(experts.size(), 2u);  // FC1 (with the permutation and activation), FC2
  if (experts.size() != 2) return {};
  return {(experts[0] - router_end).seconds(), (experts[1] - router_end).seconds()};
}

TEST(HostLaunch, GroupedLinearCallsEachWaitForTheirOwnExpertWork) {
  const ExpertStarts base = FirstMoeLayerStarts(50), more = FirstMoeLayerStarts(60);
  EXPECT_NEAR(more.fc1 - base.fc1, 16 * 10e-6, 1e-9);
  EXPECT_NEAR(more.fc2 - base.fc2, 32 * 10e-6, 1e-9);
  EXPECT_GT(base.fc2, base.fc1);
}

// Transformer Engine's TP communication overlap (plan.tp_comm_overlap) issues a GEMM's
// tp chunks and the ring shifts between them from one C++ loop of one Python call
// (split_overlap_ag / split_overlap_rs): the host pays one launch for the call, not one
// per chunk and per shift. On a TP-8 layer the overlapped step's host then launches what
// the plain step's does less the TP collectives that fold into a chunked GEMM's call:
// forward both blocks' all-gather and reduce-scatter, backward the output gradient's
// all-gather (the input's re-gather and the input gradient's reduce-scatter stay bulk
// collectives). Charged per chunk and per shift it would be 2 x (tp - 1) launches more
// per chunked GEMM.
int HostLaunches(const Program& p, int rank) {
  int n = 0;
  for (OpId id : p.StreamOps(rank, Stream::kHost)) {
    if (p.Info(id).tag == Tag::kHostLaunch) n += p.WorkOf(p.op(id)).kernels;
  }
  return n;
}

TEST(HostLaunch, TeOverlapChunksAndShiftsRideOnOneLaunch) {
  Experiment e;
  e.name = "tp8";
  e.model = testing::SmallModel();
  e.cluster = testing::OneNode(8);
  e.cluster.host.launch_us = kLaunchUs;
  e.plan.tp = 8;
  e.plan.sequence_parallel = true;
  e.plan.global_batch = 1;
  const auto plain = SimulateWithHost(e);
  ASSERT_TRUE(plain->replay.completed) << plain->replay.stall;
  e.plan.tp_comm_overlap = true;
  const auto overlapped = SimulateWithHost(e);
  ASSERT_TRUE(overlapped->replay.completed) << overlapped->replay.stall;
  const int folded = e.model.layers * 2 * (2 + 1);  // layers x blocks x (fwd 2 + bwd 1)
  EXPECT_EQ(HostLaunches(overlapped->program, 0), HostLaunches(plain->program, 0) - folded);
}

TEST(HostLaunch, NoHostModelKeepsTheProgram) {
  Experiment e = SmallMoe();
  e.cluster.host.launch_us = 0;
  const auto sim = Simulate(e, {}, testing::FakeModels());
  EXPECT_TRUE(sim->program.StreamOps(0, Stream::kHost).empty());
}

// A hybrid model's Mamba-2 mixers under training.cuda_graphs mamba (Megatron-Core
// --cuda-graph-scope mamba, as Megatron-Bridge's Nemotron 3 recipes set it): each mixer's
// forward and backward is one launch, its other kernels not. On "M*M*" (one micro-batch,
// the tiny hybrid model's Mamba block: in_proj, the scan's kernels, out_proj...) the host
// saves, per Mamba layer, the mixer's kernels less one forward and one backward launch.
TEST(HostLaunch, MambaGraphsLaunchEachMixerOnce) {
  Experiment e;
  e.name = "hybrid";
  e.model = testing::SmallModel();
  e.model.layers = 4;
  e.model.layer_pattern = "M*M*";
  e.model.mamba_heads = 16;
  e.model.mamba_head_dim = 64;
  e.model.mamba_state = 16;
  e.model.mamba_groups = 1;
  e.cluster = testing::OneNode(1);
  e.cluster.host.launch_us = kLaunchUs;
  e.plan.global_batch = 1;
  const auto eager = SimulateWithHost(e);
  ASSERT_TRUE(eager->replay.completed) << eager->replay.stall;
  e.training.cuda_graphs.mamba = true;
  const auto graphed = SimulateWithHost(e);
  ASSERT_TRUE(graphed->replay.completed) << graphed->replay.stall;
  int mixer_kernels = 0;  // the Mamba layers' GPU kernels (attention tags: the sequence mixer)
  for (OpId id : eager->program.StreamOps(0, Stream::kCompute)) {
    const Tag t = eager->program.Info(id).tag;
    const int layer = eager->program.Info(id).layer;
    if ((layer == 0 || layer == 2) &&
        (t == Tag::kAttentionFwd || t == Tag::kAttentionBwd || t == Tag::kAttentionWgrad)) {
      mixer_kernels += eager->program.WorkOf(eager->program.op(id)).kernels;
    }
  }
  ASSERT_GT(mixer_kernels, 4);
  EXPECT_EQ(HostLaunches(graphed->program, 0),
            HostLaunches(eager->program, 0) - (mixer_kernels - 2 * 2));
  EXPECT_LE(graphed->replay.step_time, eager->replay.step_time);
}

Result<Experiment> LoadText(const std::string& training, const std::string& host) {
  const std::string text =
      "name: x\nmodel: ../models/llama3-8b.yaml\ncluster: ../../topologies/dgx-h100.yaml\n"
      "cluster_overrides: {nodes: 1" +
      host +
      "}\nplan: {tp: 8, global_batch: 8}\n"
      "training: {" +
      training + "}\n";
  return LoadExperimentText(text, std::string(MESHSIM_SOURCE_DIR) + "/workloads/experiments/x.yaml",
                            {});
}

TEST(HostLaunch, ConfigReadsScopesAndRejectsUnknownOnes) {
  Result<Experiment> e =
      LoadText("cuda_graphs: [attn, moe_router, moe_preprocess]", ", host: {launch_us: 7}");
  ASSERT_TRUE(e.ok()) << e.error().ToString();
  EXPECT_EQ(e.value().cluster.host.launch_us, 7);
  const CudaGraphScope& g = e.value().training.cuda_graphs;
  EXPECT_TRUE(g.attn && g.moe_router && g.moe_preprocess);
  EXPECT_FALSE(g.mlp || g.full_iteration);
  Result<Experiment> mamba = LoadText("cuda_graphs: [attn, mamba]", "");
  ASSERT_TRUE(mamba.ok()) << mamba.error().ToString();
  EXPECT_TRUE(mamba.value().training.cuda_graphs.mamba && mamba.value().training.cuda_graphs.attn);
  Result<Experiment> full = LoadText("cuda_graphs: full_iteration", "");
  ASSERT_TRUE(full.ok()) << full.error().ToString();
  EXPECT_TRUE(full.value().training.cuda_graphs.full_iteration);
  for (const auto& [training, key] : std::vector<std::pair<std::string, std::string>>{
           {"cuda_graphs: [attn, moe]", "training.cuda_graphs[1]"},
           {"cuda_graphs: [moe_preprocess]", "training.cuda_graphs"},
           {"cuda_graphs: everything", "training.cuda_graphs"}}) {
    Result<Experiment> bad = LoadText(training, "");
    ASSERT_FALSE(bad.ok()) << training;
    EXPECT_NE(bad.error().ToString().find(key), std::string::npos) << bad.error().ToString();
  }
  Result<Experiment> negative = LoadText("", ", host: {launch_us: -1}");
  ASSERT_FALSE(negative.ok());
  EXPECT_NE(negative.error().ToString().find("cluster.host.launch_us"), std::string::npos);
}

}  // namespace
}  // namespace meshsim

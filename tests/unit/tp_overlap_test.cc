// plan.tp_comm_overlap (sim/schedule/tp_overlap.cc): hand-derived timelines on fake
// models, and the op structure the step builder emits.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>

#include "sim/engine/simulation.h"
#include "sim/report/step_summary.h"
#include "sim/schedule/step_builder.h"
#include "tests/unit/test_fixtures.h"

namespace meshsim {
namespace {

// A collective or transfer of `bytes` takes `bytes` picoseconds (1 us per MB).
class BytesNetwork final : public Network {
 public:
  void Start(Simulator& sim, CommOp, std::span<const int>, double bytes, std::function<void()> done,
             std::span<const std::vector<int>>) override {
    sim.Schedule(SimTime::Picoseconds(static_cast<int64_t>(bytes)), std::move(done));
  }
  std::vector<LinkUsage> Usage(double) const override { return {}; }
  double IntraNodeBytes() const override { return 0; }
  double InterNodeBytes() const override { return 0; }
};

// SmallModel (8 layers, h = 1024, 16 heads, ffn 4096, s = 1024, GeLU, unfused attention)
// on 2 GPUs: tp 2 with sequence parallelism, one micro-batch, no interference.
Experiment TwoWayTp(bool overlap) {
  Experiment e = testing::SmallPipeline(1, 1, ScheduleKind::kOneFOneB);
  e.cluster = testing::OneNode(2);
  e.cluster.efficiency.comm_interference = CommInterference{0, 0, 0, 0, 0};
  e.plan.tp = 2;
  e.plan.sequence_parallel = true;
  e.plan.tp_comm_overlap = overlap;
  return e;
}

StepSummary SimulateTp(const Experiment& e) {
  Models models{std::make_unique<testing::FlopsOnlyComputeModel>(),
                std::make_unique<BytesNetwork>()};
  const auto sim = Simulate(e, SimulationOptions{}, std::move(models));
  return SummarizeStep(*sim);
}

// Per rank and layer (T = 1024 tokens, 1 us per 1e9 FLOPs, 1 us per MB):
//   TP collective: the full activation, T x h x 2 B = 2,097,152 B = 2.097152 us; a ring
//   shift carries half of it, 1.048576 us.
//   attention: QKV 2*T*h*1536 = 3.221 GFLOP (chunk 1.611 us), proj 2*T*512*h = 1.074
//   GFLOP (chunk 0.536871 us); MLP: FC1 and FC2 4.295 GFLOP each (chunk 2.147 us).
// Without overlap the forward exposes 4 collectives and the backward the two output-
// gradient all-gathers (the input's re-gather hides under dgrad, the reduce-scatter
// under wgrad): 6 x 2.097152 = 12.582912 us.
// With overlap a shift hides under every chunk longer than it: the exposed parts are
// the attention's reduce-scatter (shift beside the second proj chunk) and its output-
// gradient all-gather (shift beside the first proj-dgrad chunk): 2 x (1.048576 -
// 0.536871) = 1.023410 us. Everything outside the layers is the same in both runs.
TEST(TpCommOverlap, TwoWayTpExposesOnlyTheShiftsLongerThanTheirChunk) {
  const StepSummary off = SimulateTp(TwoWayTp(false));
  const StepSummary on = SimulateTp(TwoWayTp(true));
  const double per_layer_us = 12.582912 - 1.023410;
  EXPECT_NEAR((off.time_breakdown_s.exposed_tp_comm - on.time_breakdown_s.exposed_tp_comm) * 1e6,
              8 * per_layer_us, 1e-3);
  // The step shortens by the same amount: the compute (the same FLOPs, cut in chunks)
  // does not change.
  EXPECT_NEAR((off.step_time_s - on.step_time_s) * 1e6, 8 * per_layer_us, 1e-3);
}

// The ring shifts are p2p transfers to the interference model: a chunk beside a shift runs
// at 1 / 1.25 with p2p = 0.25. Per layer four chunks outlast their shift (the QKV chunk
// under the forward all-gather, FC1's and FC2's chunks, FC2's first dgrad chunk) and end
// 1.048576 x 0.25 / 1.25 = 0.2097152 us late; the proj chunks sit inside their shifts,
// which stay on the critical path. 8 layers x 4 x 0.2097152 us.
TEST(TpCommOverlap, ChunksBesideAShiftSlowByTheP2pFactor) {
  Experiment slowed = TwoWayTp(true);
  slowed.cluster.efficiency.comm_interference.p2p = 0.25;
  const StepSummary base = SimulateTp(TwoWayTp(true));
  const StepSummary s = SimulateTp(slowed);
  EXPECT_NEAR((s.step_time_s - base.step_time_s) * 1e6, 8 * 4 * 0.2097152, 1e-3);
  EXPECT_GT(s.time_breakdown_s.comm_interference, 0);
}

// Full recomputation re-runs the forward with its exchanges; under context parallelism the
// attention block overlaps around its ring-attention core. Both replay to the end and hide
// TP time.
TEST(TpCommOverlap, ComposesWithFullRecomputeAndContextParallelism) {
  for (const bool cp : {false, true}) {
    Experiment off = TwoWayTp(false), on = TwoWayTp(true);
    for (Experiment* e : {&off, &on}) {
      if (cp) {
        e->cluster = testing::OneNode(4);
        e->plan.cp = 2;
      } else {
        e->plan.recompute = Recompute::kFull;
      }
    }
    const StepSummary a = SimulateTp(off), b = SimulateTp(on);
    EXPECT_LT(b.time_breakdown_s.exposed_tp_comm, a.time_breakdown_s.exposed_tp_comm) << cp;
    EXPECT_LT(b.step_time_s, a.step_time_s) << cp;
  }
}

// Context parallelism 2 (4 GPUs): each rank holds T = 512 tokens, so a TP collective is
// 1.048576 us and a ring shift 0.524288; the QKV chunk 0.805 us, the proj chunk 0.268435,
// the MLP's chunks 1.073742. Without overlap the forward exposes its 4 TP collectives and
// the backward its 2 output-gradient all-gathers: 6 x 1.048576 us per layer. With it, as
// without context parallelism, only the proj's exchanges outlast their chunks: the
// forward reduce-scatter and the output gradient's all-gather, 2 x (0.524288 - 0.268435).
TEST(TpCommOverlap, RingAttentionOverlapsItsProjectionsUnderContextParallelism) {
  Experiment off = TwoWayTp(false), on = TwoWayTp(true);
  for (Experiment* e : {&off, &on}) {
    e->cluster = testing::OneNode(4);
    e->cluster.efficiency.comm_interference = CommInterference{0, 0, 0, 0, 0};
    e->plan.cp = 2;
  }
  const StepSummary a = SimulateTp(off), b = SimulateTp(on);
  const double per_layer_us = 6 * 1.048576 - 2 * (0.524288 - 0.268435);
  EXPECT_NEAR((a.time_breakdown_s.exposed_tp_comm - b.time_breakdown_s.exposed_tp_comm) * 1e6,
              8 * per_layer_us, 1e-3);
  EXPECT_NEAR((a.step_time_s - b.step_time_s) * 1e6, 8 * per_layer_us, 1e-3);
  // The program: as without context parallelism, 6 ring shifts on the TP group per layer.
  const Program p = BuildStepProgram(on.model, on.plan, on.training, Mesh(on.plan));
  int tp_shifts = 0;
  for (OpId id : p.StreamOps(0, Stream::kTp)) {
    tp_shifts += p.comms()[p.op(id).comm].op == CommOp::kRingShift;
  }
  EXPECT_EQ(tp_shifts, 8 * 6);
}

// Without sequence parallelism (all-reduces) or with tp 1 the knob changes nothing.
TEST(TpCommOverlap, NoEffectWithoutSequenceParallelism) {
  Experiment a = TwoWayTp(false), b = TwoWayTp(true);
  a.plan.sequence_parallel = b.plan.sequence_parallel = false;
  EXPECT_EQ(SimulateTp(a).step_time_s, SimulateTp(b).step_time_s);
}

// The program: each layer's forward runs its first and last GEMMs in 2 chunks each, and
// each all-gather / reduce-scatter of the forward becomes one ring shift (tp - 1).
TEST(TpCommOverlap, ChunksAndRingShiftsInTheProgram) {
  const Experiment e = TwoWayTp(true);
  const Program p = BuildStepProgram(e.model, e.plan, e.training, Mesh(e.plan));
  int shifts = 0, gathers = 0;
  for (const Comm& c : p.comms()) {
    shifts += c.op == CommOp::kRingShift;
    gathers += c.op == CommOp::kAllGather;
  }
  // Per layer: forward 2 blocks x 2 shifts, backward 2 blocks x 1 shift (output gradient).
  EXPECT_EQ(shifts, 8 * 6);
  // Per layer the all-gathers of the forward (2) and of the output gradients (2) become
  // shifts; the input's re-gathers for wgrad (2) stay, as does what lies outside layers.
  const Experiment plain = TwoWayTp(false);
  const Program q = BuildStepProgram(plain.model, plain.plan, plain.training, Mesh(plain.plan));
  int plain_gathers = 0;
  for (const Comm& c : q.comms()) plain_gathers += c.op == CommOp::kAllGather;
  EXPECT_EQ(plain_gathers - gathers, 8 * 4);
}

// The GEMM chunks of a Transformer Engine overlap run on min(3, tp) streams at once
// (GemmShape::streams); XLA's collective matmul runs its steps one at a time.
int ChunkStreams(const Experiment& e) {
  const Program p = BuildStepProgram(e.model, e.plan, e.training, Mesh(e.plan));
  double streams = 0;
  int chunks = 0;
  for (const OpWork& w : p.works()) {
    const KernelShapes* shapes = p.ShapesOf(w.work);
    if (shapes == nullptr) continue;
    for (const GemmShape& g : shapes->gemms) {
      if (g.m != 1024.0 / 2) continue;  // a chunk: T / tp tokens (or a wgrad as wide)
      streams = std::max(streams, g.streams);
      ++chunks;
    }
  }
  EXPECT_GT(chunks, 0);
  return static_cast<int>(streams);
}

Experiment TwoWayXla();

TEST(TpCommOverlap, TransformerEngineRunsChunksOnSeveralStreams) {
  EXPECT_EQ(ChunkStreams(TwoWayTp(true)), 2);
  EXPECT_EQ(ChunkStreams(TwoWayXla()), 1);
}

// XLA's collective matmul (a JAX-style plan): each step is two shifts of half the slice,
// one each way round the ring (the reverse on the tp comm back stream), at once. With 1 us
// per MB each takes 0.524288 us, shorter than every chunk (the proj chunk 0.536871 us), so
// no step outlasts its chunk: the step saves all 6 x 2.097152 = 12.582912 us per layer.
Experiment TwoWayXla() {
  Experiment e = TwoWayTp(true);
  e.plan.jax.axes = {MeshAxisSpec{"tensor", 2, 1}};
  e.plan.jax.xla.collective_matmul = true;
  return e;
}

TEST(TpCommOverlap, XlaCollectiveMatmulShiftsHalvesBothWays) {
  const StepSummary off = SimulateTp(TwoWayTp(false));
  const StepSummary on = SimulateTp(TwoWayXla());
  EXPECT_NEAR((off.step_time_s - on.step_time_s) * 1e6, 8 * 12.582912, 1e-3);
  EXPECT_NEAR(on.time_breakdown_s.exposed_tp_comm, 0, 1e-12);
  const Experiment e = TwoWayXla();
  const Program p = BuildStepProgram(e.model, e.plan, e.training, Mesh(e.plan));
  int forward = 0, back = 0;
  for (const Comm& c : p.comms()) {
    if (c.op != CommOp::kRingShift) continue;
    EXPECT_DOUBLE_EQ(c.bytes, 2097152.0 / 2 / 2);
    (p.groups()[c.group] == std::vector<int>{1, 0} ? back : forward)++;
  }
  EXPECT_EQ(forward, 8 * 6);
  EXPECT_EQ(back, 8 * 6);
  int back_ops = 0;
  for (const OpId id : p.StreamOps(0, Stream::kTpBack))
    back_ops += p.ops()[id].kind == OpKind::kComm;
  EXPECT_EQ(back_ops, 8 * 6);
}

}  // namespace
}  // namespace meshsim

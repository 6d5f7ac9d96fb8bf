#include "sim/engine/simulation.h"

#include <algorithm>
#include <cassert>
#include <chrono>
#include <set>

#include "sim/engine/expert_mirrors.h"
#include "sim/engine/kernel_interference.h"
#include "sim/engine/shape_params.h"
#include "sim/net/alpha_beta.h"
#include "sim/net/flow_collectives.h"
#include "sim/plan/run_routing.h"
#include "sim/schedule/step_builder.h"
#include "sim/workload/shape_compute_model.h"

namespace meshsim {

namespace {

std::unique_ptr<ComputeModel> MakeGpuModel(const Experiment& e) {
  if (e.cluster.efficiency.kernel_model == KernelModelKind::kShapes) {
    return std::make_unique<ShapeComputeModel>(ExperimentShapeParams(e));
  }
  const GpuSpec& gpu = e.cluster.gpu;
  const EfficiencySpec& eff = e.cluster.efficiency;
  const double flops = gpu.PeakTflops(e.training.dtype) * 1e12 *
                       (e.training.dtype == Dtype::kFp8 ? eff.MatmulFp8() : eff.matmul);
  const double bytes = gpu.hbm_gbps * 1e9 * e.cluster.efficiency.memory;
  return std::make_unique<RooflineComputeModel>(flops, bytes,
                                                e.cluster.efficiency.kernel_overhead_us * 1e-6);
}

}  // namespace

std::unique_ptr<ComputeModel> MakeComputeModel(const Experiment& e) {
  if (!HostThreads(e)) return MakeGpuModel(e);
  return std::make_unique<HostLaunchComputeModel>(MakeGpuModel(e), e.cluster.host.launch_us * 1e-6,
                                                  e.cluster.host.ExpertUs() * 1e-6,
                                                  e.cluster.host.CallUs() * 1e-6);
}

Result<std::unique_ptr<Network>> MakeNetwork(const Experiment& e) {
  // Collectives see each NVLink domain as one node (ClusterSpec::NetworkView).
  const ClusterSpec c = e.cluster.NetworkView();
  if (c.network_model == NetworkModelKind::kAlphaBeta) {
    const double intra = c.TotalGpus() * c.intra_node.gbps_per_gpu * 1e9;
    const double inter =
        c.nodes > 1 ? c.nodes * c.inter_node.nics_per_node * c.inter_node.gbps_per_nic * 1e9 : 0;
    return std::unique_ptr<Network>(std::make_unique<CostModelNetwork>(
        std::make_unique<AlphaBetaCollectiveModel>(c, NcclOptions{e.plan.allreduce_algorithm},
                                                   RunRouting(e.plan, e.model),
                                                   e.plan.moe_flex_backend),
        intra, inter));
  }
  Result<std::shared_ptr<const Topology>> topology = Topology::Build(c);
  if (!topology.ok()) return topology.error();
  return std::unique_ptr<Network>(std::make_unique<FlowCollectiveNetwork>(
      c, topology.value(), NcclOptions{e.plan.allreduce_algorithm}, RunRouting(e.plan, e.model),
      e.plan.moe_flex_backend));
}

namespace {

// For each program group, its translates along tp, cp and dp that contain no replayed rank:
// the symmetric copies whose traffic the network must carry alongside.
std::vector<int> Translate(const Mesh& mesh, const std::vector<int>& group, int a, int b, int d) {
  const int T = mesh.Degree(Axis::kTp), C = mesh.Degree(Axis::kCp), D = mesh.Degree(Axis::kDp);
  std::vector<int> moved;
  moved.reserve(group.size());
  for (int r : group) {
    const Coords& c = mesh.CoordsOf(r);
    moved.push_back(mesh.RankOf((c.tp + a) % T, (c.cp + b) % C, (c.dp + d) % D, c.pp));
  }
  return moved;
}

// Whether the group is the same set once moved by one step along an axis (a data-parallel
// group along dp): then every translate along that axis repeats the one before it.
bool Invariant(const Mesh& mesh, const std::vector<int>& group, int a, int b, int d) {
  std::vector<int> moved = Translate(mesh, group, a, b, d), same = group;
  std::sort(moved.begin(), moved.end());
  std::sort(same.begin(), same.end());
  return moved == same;
}

// With several replayed pipelines (traced ranks), a group that is a mirror of two replayed
// groups (a translate of both, or of the same expert family) runs its collectives once:
// it stays a mirror of the first only. Groups listed in another order (a send and its
// receive) are other collectives and stay.
void DropSharedMirrors(std::vector<std::vector<std::vector<int>>>* mirrors) {
  std::set<std::vector<int>> claimed;
  for (std::vector<std::vector<int>>& of_group : *mirrors) {
    std::erase_if(of_group, [&](const std::vector<int>& m) { return !claimed.insert(m).second; });
  }
}

std::vector<std::vector<std::vector<int>>> Mirrors(const Mesh& mesh, const Program& program,
                                                   const std::vector<bool>& replayed) {
  const int T = mesh.Degree(Axis::kTp), C = mesh.Degree(Axis::kCp), D = mesh.Degree(Axis::kDp);
  std::vector<std::vector<std::vector<int>>> out(program.groups().size());
  for (size_t g = 0; g < program.groups().size(); ++g) {
    const std::vector<int>& group = program.groups()[g];
    // Expert groups are blocks of a stage, not translates (expert_mirrors.h).
    const ExpertFamily family = FamilyOf(mesh, group);
    if (family != ExpertFamily::kNone) {
      out[g] = ExpertMirrors(mesh, group, family, replayed);
      continue;
    }
    // Translates along an axis the group is invariant on are repeats of an earlier one
    // (in this loop order), which `seen` would drop: skip them without building them.
    const int as = Invariant(mesh, group, 1, 0, 0) ? 1 : T;
    const int bs = Invariant(mesh, group, 0, 1, 0) ? 1 : C;
    const int ds = Invariant(mesh, group, 0, 0, 1) ? 1 : D;
    std::set<std::vector<int>> seen;
    for (int a = 0; a < as; ++a) {
      for (int b = 0; b < bs; ++b) {
        for (int d = 0; d < ds; ++d) {
          std::vector<int> moved = Translate(mesh, group, a, b, d);
          const bool has_replayed =
              std::any_of(moved.begin(), moved.end(), [&](int m) { return replayed[m]; });
          std::vector<int> key = moved;
          std::sort(key.begin(), key.end());
          if (!seen.insert(key).second || has_replayed) continue;
          out[g].push_back(std::move(moved));
        }
      }
    }
  }
  const auto replayed_ranks = std::count(replayed.begin(), replayed.end(), true);
  if (replayed_ranks > mesh.Degree(Axis::kPp)) DropSharedMirrors(&out);
  return out;
}

ReplayOptions MakeReplayOptions(const Experiment& e, const SimulationOptions& options,
                                const Mesh& mesh, const Program& program,
                                const std::vector<bool>& is_simulated, bool full) {
  ReplayOptions ro;
  ro.memory_curve_ranks = options.memory_curve_ranks;
  for (int r : options.memory_curve_ranks) {
    const int node = r / e.cluster.GpusPerDomain();  // the network's nodes are NVLink domains
    if (std::find(ro.nic_nodes.begin(), ro.nic_nodes.end(), node) == ro.nic_nodes.end()) {
      ro.nic_nodes.push_back(node);
    }
  }
  if (e.cluster.NetworkView().nodes == 1) ro.nic_nodes.clear();
  if (!full) ro.mirrors = Mirrors(mesh, program, is_simulated);
  const CommInterference& ci = e.cluster.efficiency.comm_interference;
  if (!ci.Off()) {
    // Kinds whose slowdown follows each collective's kernel (kFromKernel) get theirs from
    // comm_slowdown; their per-kind value is unused.
    for (int op = 0; op < kCommOpCount; ++op) {
      ro.comm_interference[op] = std::max(0.0, ci.Of(static_cast<CommOp>(op)));
    }
    ro.comm_slowdown =
        CommSlowdowns(e.cluster.NetworkView(), NcclOptions{e.plan.allreduce_algorithm}, program);
    // The flex dispatcher's kernels hold the SMs the plan gives them (FrameworkOptions::
    // moe_flex_dispatcher_num_sms); the compute beside them runs on the others.
    const double sms = e.plan.framework_options.moe_flex_dispatcher_num_sms;
    if (sms > 0) {
      for (CommOp op : {CommOp::kExpertDispatch, CommOp::kExpertCombine})
        ro.comm_interference[static_cast<int>(op)] =
            CommInterference::OfHeldSms(sms, e.cluster.gpu.sms);
    }
  }
  if (!e.cluster.what_if.stragglers.empty()) {
    ro.compute_slowdown.assign(mesh.Size(), 1.0);
    for (const Straggler& s : e.cluster.what_if.stragglers)
      ro.compute_slowdown[s.gpu] *= s.slowdown;
  }
  return ro;
}

// Gives every rank that was not replayed the results of its representative, and takes
// the bubble fraction over every rank.
void Spread(const std::vector<int>& representative, ReplayResult& replay, StepStats& stats) {
  const int ranks = static_cast<int>(representative.size());
  for (int r = 0; r < ranks; ++r) {
    const int rep = representative[r];
    if (rep == r) continue;
    stats.ranks[r] = stats.ranks[rep];
    replay.memory[r].peak_bytes = replay.memory[rep].peak_bytes;
    replay.memory[r].at_peak = replay.memory[rep].at_peak;
  }
  // The mean over every rank, summed in rank order, so that a full replay and a
  // symmetric one give the same bits.
  if (stats.pipeline_end_s > 0) {
    double idle = 0;
    for (const RankStats& r : stats.ranks) idle += r.pipeline_idle_s;
    stats.bubble_fraction = idle / ranks / stats.pipeline_end_s;
  }
}

double SecondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

std::vector<int> SimulatedRanks(const Mesh& mesh, const std::vector<int>& extra, bool full) {
  std::vector<bool> chosen(mesh.Size(), full);
  for (int seed : extra) {
    for (int r : mesh.Pipeline(seed)) chosen[r] = true;
  }
  for (int r : mesh.Pipeline(0)) chosen[r] = true;
  std::vector<int> ranks;
  for (int r = 0; r < mesh.Size(); ++r) {
    if (chosen[r]) ranks.push_back(r);
  }
  return ranks;
}

bool NeedsFullReplay(const Experiment& e, const SimulationOptions& options) {
  if (options.full_replay || !e.cluster.what_if.Empty()) return true;
  if (e.model.IsMoe() && e.plan.moe_skew != 1.0) return true;
  // Expert groups mirror each other when they sit alike on the NVLink domains (the
  // network's nodes); a torus routes by coordinates, which blocks of ranks do not keep.
  return e.plan.ep > 1 &&
         (e.cluster.Torus() || !ExpertGroupsAlike(Mesh(e.plan), e.cluster.GpusPerDomain()));
}

Models DefaultModels(const Experiment& e) {
  Result<std::unique_ptr<Network>> network = MakeNetwork(e);
  assert(network.ok() && "LoadExperimentFile validates the topology");
  return Models{MakeComputeModel(e), std::move(network.value())};
}

std::unique_ptr<Simulation> Simulate(const Experiment& e, const SimulationOptions& options,
                                     Models models) {
  assert(models.compute && models.network);
  const auto t0 = std::chrono::steady_clock::now();
  Mesh mesh(e.plan);
  const bool full = NeedsFullReplay(e, options);
  const std::vector<int> simulated = SimulatedRanks(mesh, options.memory_curve_ranks, full);
  std::vector<int> representative(mesh.Size());
  std::vector<bool> is_simulated(mesh.Size(), false);
  for (int r : simulated) is_simulated[r] = true;
  for (int r = 0; r < mesh.Size(); ++r) {
    representative[r] = is_simulated[r] ? r : mesh.RankOf(0, 0, 0, mesh.CoordsOf(r).pp);
  }
  Program program = BuildStepProgram(e.model, e.plan, e.training, mesh, simulated, HostThreads(e));
  const ReplayOptions ro = MakeReplayOptions(e, options, mesh, program, is_simulated, full);
  ReplayResult replay = Replay(program, *models.compute, *models.network, ro);
  StepStats stats = AnalyzeStep(program, replay, simulated);
  Spread(representative, replay, stats);
  auto sim = std::unique_ptr<Simulation>(new Simulation{e, std::move(mesh), std::move(program),
                                                        std::move(replay), std::move(stats),
                                                        simulated, std::move(representative), 0});
  sim->wall_s = SecondsSince(t0);
  return sim;
}

std::unique_ptr<Simulation> Simulate(const Experiment& e, const SimulationOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  Models models = DefaultModels(e);
  const double building_s = SecondsSince(t0);
  std::unique_ptr<Simulation> sim = Simulate(e, options, std::move(models));
  sim->wall_s += building_s;
  return sim;
}

}  // namespace meshsim

#include "sim/engine/resource_estimate.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>

#include "sim/hw/topology.h"
#include "sim/schedule/step_builder.h"

namespace meshsim {
namespace {

// Measured on GPT-1T (results/scale.md), rounded up: resident bytes and seconds per
// replayed op, per rank of the mesh (per-rank results; the summary's JSON), per directed
// link of the flow network's topology (its graph, link state and routes) and per GPU
// whose mirrored traffic the symmetric flow network carries. Bytes per op: full replay of
// GPT-1T peaks at 524 MiB for 8.3 M ops on 3,072 GPUs and 2,743 MiB for 44 M ops on 16,384
// (maximum resident set from /usr/bin/time, alpha-beta; the program then held 40 bytes per
// op and the replay 16): about 65-67 bytes, rounded up to 80. Since the program keeps 21
// bytes per op (a lone dependent in its record, stage infos once) the same runs peak at 344
// and 1,777 MiB (results/bench.md, 2026-12-03): 43 and 42 bytes per op with everything else,
// priced at 56 (a third over, for a plan whose ops keep more dependents lists); the flow
// network adds little per op (345 MiB on 3,072 GPUs), priced at 60. Seconds per op, full
// replay (one core of this VM, 2026-12-03, results/bench.md and its reruns at load < 1):
// alpha-beta 1.0-2.0 s for 8.3 M ops on 3,072 GPUs and 8.1-9.4 s for 44 M on 16,384,
// 0.12-0.24 us an op, priced at 0.3 (was 0.6, which read 5 s for a 1.7 s run); the flow
// network 1.5-2.2 s on 3,072 GPUs, 0.18-0.27 us, priced at 0.4 (was 1.2). Seconds per mirrored GPU:
// with cluster.mirror_traffic full as measured before near; with near, GPT-1T's default mode takes
// 0.77 s on 16,384 GPUs and 5.2 s on 98,304 (results/bench.md): about 50 us per mirrored GPU with
// everything else, rounded up to 70.
constexpr double kBaseBytes = 24e6;
constexpr double kBytesPerOpAlphaBeta = 56;
constexpr double kBytesPerOpFlow = 60;
constexpr double kBytesPerLink = 200;
constexpr double kBytesPerRank = 4400;  // per rank of the mesh: results and summary
constexpr double kBytesPerMirroredGpu = 400;
constexpr double kSecondsPerOpAlphaBeta = 0.3e-6;
constexpr double kSecondsPerOpFlow = 0.4e-6;
constexpr double kSecondsPerLink = 0.4e-6;
constexpr double kSecondsPerMirroredGpu = 350e-6;
constexpr double kSecondsPerMirroredGpuNear = 70e-6;
constexpr double kSecondsPerRank = 10e-6;

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

struct Costs {
  double bytes = 0;
  double seconds = 0;
};

// What replaying `ops` costs, on a cluster of `gpus` with `links` flow-network links
// (0: alpha-beta), `mirrored` of whose GPUs are not replayed, each costing
// `seconds_per_mirrored`.
Costs CostOf(int64_t ops, int64_t links, int64_t mirrored, int64_t ranks,
             double seconds_per_mirrored = kSecondsPerMirroredGpu) {
  const bool flow = links > 0;
  Costs c;
  c.bytes = kBaseBytes +
            static_cast<double>(ops) * (flow ? kBytesPerOpFlow : kBytesPerOpAlphaBeta) +
            static_cast<double>(links) * kBytesPerLink +
            static_cast<double>(mirrored) * kBytesPerMirroredGpu +
            static_cast<double>(ranks) * kBytesPerRank;
  c.seconds = static_cast<double>(ops) * (flow ? kSecondsPerOpFlow : kSecondsPerOpAlphaBeta) +
              static_cast<double>(links) * kSecondsPerLink +
              static_cast<double>(mirrored) * seconds_per_mirrored +
              static_cast<double>(ranks) * kSecondsPerRank;
  return c;
}

std::string Gib(double bytes) { return fmt::format("{:.2f} GiB", bytes / kGiB); }

// The first number in a file ("max" or no file: -1).
double ReadNumber(const std::string& path) {
  std::ifstream in(path);
  double v = -1;
  if (!(in >> v)) return -1;
  return v;
}

// What a cgroup limit leaves (-1: no limit found). v1 writes a huge number for none.
double CgroupLeft(const std::string& dir, std::string* source) {
  const double v2 = ReadNumber(dir + "/memory.max");
  if (v2 >= 0) {
    *source = "cgroup " + dir + "/memory.max less memory.current";
    return std::max(0.0, v2 - std::max(0.0, ReadNumber(dir + "/memory.current")));
  }
  const double v1 = ReadNumber(dir + "/memory/memory.limit_in_bytes");
  if (v1 >= 0 && v1 < 1e18) {
    *source = "cgroup " + dir + "/memory/memory.limit_in_bytes less usage";
    return std::max(0.0, v1 - std::max(0.0, ReadNumber(dir + "/memory/memory.usage_in_bytes")));
  }
  return -1;
}

}  // namespace

ResourceEstimate EstimateResources(const Experiment& e, const SimulationOptions& options) {
  ResourceEstimate est;
  const Mesh mesh(e.plan);
  const int pp = mesh.Degree(Axis::kPp);
  est.ranks = mesh.Size();
  est.full_replay = NeedsFullReplay(e, options);
  SimulationOptions plain;
  est.full_replay_forced = NeedsFullReplay(e, plain);
  std::vector<int> pipeline = mesh.Pipeline(0);
  std::sort(pipeline.begin(), pipeline.end());
  est.ops_per_pipeline = static_cast<int64_t>(
      BuildStepProgram(e.model, e.plan, e.training, mesh, pipeline, HostThreads(e)).OpCount());
  est.replayed_ranks = static_cast<int64_t>(
      SimulatedRanks(mesh, options.memory_curve_ranks, est.full_replay).size());
  est.ops = est.ops_per_pipeline * (est.replayed_ranks / pp);
  if (e.cluster.network_model == NetworkModelKind::kFlow) {
    int64_t vertices = 0;
    Topology::Count(e.cluster, &vertices, &est.topology_links);
  }
  const int64_t links = est.topology_links;
  auto mirrored = [&](int64_t replayed) { return links > 0 ? est.ranks - replayed : 0; };
  const double per_mirrored = e.cluster.mirror_traffic == MirrorTraffic::kNear
                                  ? kSecondsPerMirroredGpuNear
                                  : kSecondsPerMirroredGpu;
  const Costs run = CostOf(est.ops, links, mirrored(est.replayed_ranks), est.ranks, per_mirrored);
  const Costs symmetric =
      CostOf(est.ops_per_pipeline, links, mirrored(pp), est.ranks, per_mirrored);
  est.bytes = run.bytes;
  est.seconds = run.seconds;
  est.symmetric_bytes = symmetric.bytes;
  est.symmetric_seconds = symmetric.seconds;
  est.bytes_per_pipeline = CostOf(est.ops_per_pipeline, 0, 0, 0).bytes - kBaseBytes;
  return est;
}

AvailableMemory ReadAvailableMemory(const std::string& meminfo, const std::string& cgroup) {
  AvailableMemory out;
  std::ifstream in(meminfo);
  std::string key, unit;
  double kib = 0;
  while (in >> key >> kib >> unit) {
    if (key == "MemAvailable:") {
      out.bytes = kib * 1024;
      out.source = "MemAvailable of " + meminfo;
      break;
    }
  }
  std::string source;
  const double left = CgroupLeft(cgroup, &source);
  if (left >= 0 && (out.bytes <= 0 || left < out.bytes)) {
    out.bytes = left;
    out.source = source;
  }
  return out;
}

std::string GuardConfiguration(const Experiment& e, double limit, const std::string& source) {
  if (limit <= 0) return "";
  SimulationOptions options;
  if (!NeedsFullReplay(e, options) && Mesh(e.plan).Size() < kGuardMinRanks) return "";
  const ResourceEstimate est = EstimateResources(e, options);
  return est.bytes > limit ? DescribeOverLimit(est, limit, source) : "";
}

std::string DescribeOverLimit(const ResourceEstimate& est, double limit,
                              const std::string& source) {
  std::string what = fmt::format(
      "expected a run that fits in {} ({}), found an estimate of {} and {:.0f} s ({} "
      "replay of {} of {} ranks: {} ops",
      Gib(limit), source, Gib(est.bytes), est.seconds, est.full_replay ? "full" : "symmetric",
      est.replayed_ranks, est.ranks, est.ops);
  if (est.topology_links > 0) what += fmt::format("; flow network of {} links", est.topology_links);
  what += ")";
  const int64_t pp = est.replayed_ranks > 0 && est.ops > 0
                         ? est.replayed_ranks * est.ops_per_pipeline / est.ops
                         : 1;
  const bool traced_extra = est.ops > est.ops_per_pipeline;
  std::string fits;
  if (est.symmetric_bytes <= limit && traced_extra && !est.full_replay_forced) {
    const int64_t pipelines = static_cast<int64_t>((limit - est.symmetric_bytes) /
                                                   std::max(1.0, est.bytes_per_pipeline)) +
                              1;
    fits = fmt::format(
        "; would fit: symmetric replay without --full-replay ({}, {:.0f} s), tracing ranks of "
        "at most {} pipeline(s) of {} ranks (--trace-ranks, or --no-trace)",
        Gib(est.symmetric_bytes), est.symmetric_seconds, pipelines, pp);
  } else if (est.full_replay_forced && est.symmetric_bytes <= limit) {
    fits =
        "; would fit: the same cluster without the what-if changes, expert parallelism or "
        "skewed MoE routing that force a full replay (" +
        Gib(est.symmetric_bytes) + ")";
  } else {
    fits = "; would not fit even in symmetric replay (" + Gib(est.symmetric_bytes) +
           "): use network_model: alpha_beta, fewer GPUs, or more memory";
  }
  return what + fits;
}

}  // namespace meshsim

// What a simulation will cost the host, estimated before anything large is built.
//
// The estimate builds the step program of one pipeline (cheap: what a symmetric replay
// replays anyway) and counts the topology from the cluster's shape; memory and time are
// then linear in the replayed ops, the topology's links and, for the flow network in
// symmetric mode, the GPUs whose mirrored traffic it carries. The per-item constants
// were measured on GPT-1T runs (results/scale.md); they aim a little high so that a run
// the guard lets through is not killed by the kernel.
#pragma once

#include <cstdint>
#include <string>

#include "sim/engine/simulation.h"

namespace meshsim {

struct ResourceEstimate {
  int64_t ranks = 0;           // in the mesh
  int64_t replayed_ranks = 0;  // symmetric: whole pipelines; full: every rank
  bool full_replay = false;
  bool full_replay_forced = false;  // NeedsFullReplay without --full-replay (what-ifs...)
  int64_t ops = 0;                  // replayed
  int64_t ops_per_pipeline = 0;
  int64_t topology_links = 0;  // directed; 0 on the alpha-beta model
  double bytes = 0;            // peak resident memory
  double seconds = 0;          // wall time on one core of the reference machine
  // The same run in symmetric replay with no extra traced pipelines (what fits when the
  // run does not); equal to the above when the run is symmetric already.
  double symmetric_bytes = 0;
  double symmetric_seconds = 0;
  double bytes_per_pipeline = 0;  // what each replayed pipeline adds
};

// Preconditions: the experiment passed ValidatePlan; options' ranks are in the mesh.
ResourceEstimate EstimateResources(const Experiment& experiment, const SimulationOptions& options);

// Memory this process may still take, in bytes, and what says so: the host's MemAvailable
// (`meminfo`, /proc/meminfo), lowered to what a cgroup memory limit leaves (cgroup v2:
// `cgroup`/memory.max minus memory.current; v1: memory/memory.limit_in_bytes minus
// memory.usage_in_bytes) when one is set. bytes 0: unknown (no file could be read).
struct AvailableMemory {
  double bytes = 0;
  std::string source;  // "MemAvailable of /proc/meminfo" or "cgroup memory.max ..."
};
AvailableMemory ReadAvailableMemory(const std::string& meminfo = "/proc/meminfo",
                                    const std::string& cgroup = "/sys/fs/cgroup");

// The guard of sweeps and the planner, which simulate many configurations, most of them
// small: the estimate is made only for a full replay or a mesh of kGuardMinRanks ranks or
// more (it builds one pipeline's program, which a symmetric replay of a small mesh
// builds again; such a run needs little memory). Returns why the configuration would
// not fit in `limit_bytes` (DescribeOverLimit), or an empty string.
constexpr int kGuardMinRanks = 1024;
std::string GuardConfiguration(const Experiment& experiment, double limit_bytes,
                               const std::string& limit_source);

// Why `estimate` does not fit in `limit_bytes`, and what would: "expected a run that fits
// in 2.0 GiB (available memory), found an estimate of 6.1 GiB ...; would fit: ...".
std::string DescribeOverLimit(const ResourceEstimate& estimate, double limit_bytes,
                              const std::string& limit_source);

}  // namespace meshsim

// Replays a Program on simulated GPUs and links, event by event.
//
// Each (rank, stream) queue runs its ops in order: the head op starts once every op it
// depends on has finished. Compute ops take the ComputeModel's time; a collective starts
// when all participants have reached it and ends for all of them at once, after the
// CollectiveModel's time; memory ops apply instantly and move the device's running
// totals. Bubbles, overlap and the memory peak are consequences of this replay.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/time.h"
#include "sim/net/network.h"
#include "sim/schedule/program.h"
#include "sim/workload/compute_model.h"

namespace meshsim {

struct ReplayOptions {
  // Ranks whose memory is recorded over time (for trace counters); others keep only
  // their peak. Empty: none.
  std::vector<int> memory_curve_ranks;
  // Nodes whose NIC throughput is recorded over time (for trace counters).
  std::vector<int> nic_nodes;
  // Per-rank slowdown of compute (1 = nominal); empty means all nominal.
  std::vector<double> compute_slowdown;
  // Compute-communication interference, per CommOp: while communication ops run on a
  // rank, its running compute op progresses at 1 / (1 + the sum of their values). All
  // zero: no interference (and no bookkeeping).
  std::array<double, kCommOpCount> comm_interference{};
  // Per signature of the program (index into Program::signatures(): collectives of one
  // kind, group and bytes): the slowdown their kernel causes, in place of their kind's
  // comm_interference value; < 0: their kind's value. Empty: every collective takes its
  // kind's (CommSlowdowns, kernel_interference.h, fills it).
  std::vector<float> comm_slowdown;
  // While an op of the side compute stream (Stream::kSideCompute) and one of the compute
  // stream run together on a rank, each progresses at 1 / (1 + side_stream_slowdown) of
  // its own rate (the compute op's besides any communication's slowdown). 1: the two
  // share the GPU evenly, as two kernels that each need all of its HBM bandwidth would;
  // a side op running alone (the compute stream idle) runs at its own rate.
  double side_stream_slowdown = 1.0;
  // Per program group: the groups that run the same collectives at the same time without
  // being replayed (symmetric copies); the network carries their traffic too. Empty: none.
  std::vector<std::vector<std::vector<int>>> mirrors;
};

struct MemoryPoint {
  SimTime time;
  double bytes;  // total allocated after the change
};

struct DeviceMemory {
  double peak_bytes = 0;
  std::array<double, kMemCategoryCount> at_peak{};  // breakdown at the first peak instant
  std::vector<MemoryPoint> curve;                   // only for memory_curve_ranks
};

struct ReplayResult {
  bool completed = true;       // false: some op could never start (a bug in the program)
  std::string stall;           // what was stuck, when !completed
  SimTime step_time;           // end of the last op
  std::vector<SimTime> start;  // per op: when it began running (collectives: all arrived)
  std::vector<SimTime> end;    // per op: when it finished
  // Per rank: the end of its last pass, i.e. the latest end of its compute stream's compute
  // ops but the optimizer step's (ps; 0: none), gathered as they finish, so that the step
  // analysis need not read every op's end for it (AnalyzeStep).
  std::vector<int64_t> last_pass_end;
  std::vector<DeviceMemory> memory;  // per rank
  // Compute-communication interference (ReplayOptions::comm_interference and
  // comm_slowdown): whether it was
  // modelled, and what ComputeTime needs: per entry of the program's works its
  // ComputeModel time (-1 ps where no compute op has it), and per rank its compute
  // slowdown (ReplayOptions::compute_slowdown; empty: all 1).
  bool interference_on = false;
  std::vector<SimTime> work_times;
  std::vector<double> compute_slowdown;
  // The time compute op `id` of the replayed program takes alone: its work's
  // ComputeModel time, times its rank's slowdown.
  SimTime ComputeTime(const Program& program, OpId id) const;
  // How much longer op `id` ran than ComputeTime because communication ran beside it:
  // zero for other ops and when interference is off. Worked out from the op's start and
  // end, so that a full replay keeps no array for it.
  SimTime Interference(const Program& program, OpId id) const;
  double intra_node_bytes = 0;
  double inter_node_bytes = 0;
  std::vector<LinkUsage> links;  // per link class, then the busiest links
  Reroutes rerouted;             // traffic moved by what-if link failures
  struct NicSample {
    std::string nic;
    SimTime t;
    double bytes_per_s;
  };
  std::vector<NicSample> nic_samples;  // NIC throughput changes of options.nic_nodes
  uint64_t events = 0;
};

// When a host op of `launches` kernel launches that takes `d` (sim/schedule/host_launch.h)
// releases the GPU ops it issues: after all but its `trailing` launches, d x (launches -
// trailing) / launches (d without trailing launches). The trailing ones are launched while
// the GPU runs what came before: a kernel launch is asynchronous, the kernel queued on its
// stream runs as soon as the stream is free (CUDA C++ Programming Guide, "Asynchronous
// Concurrent Execution"; PyTorch "CUDA semantics", "Asynchronous execution").
inline SimTime HostRelease(SimTime d, int32_t launches, int32_t trailing) {
  if (trailing <= 0 || launches <= 0) return d;
  return SimTime::Picoseconds(d.picoseconds() * std::max(launches - trailing, 1) / launches);
}

// `t` times rank's entry of `slowdown` (empty: 1), as the replay times a compute op.
SimTime SlowedBy(SimTime t, const std::vector<double>& slowdown, int rank);

ReplayResult Replay(const Program& program, const ComputeModel& compute, Network& network,
                    const ReplayOptions& options = {});

}  // namespace meshsim

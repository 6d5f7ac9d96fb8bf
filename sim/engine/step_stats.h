// Figures derived from a replay: utilisation per rank, pipeline bubble, and the split of
// the step time into compute, exposed communication, bubble and optimizer.
#pragma once

#include <array>
#include <string_view>
#include <vector>

#include "sim/engine/replay.h"
#include "sim/schedule/program.h"

namespace meshsim {

// Where one rank's step time went. Each instant is counted once, in priority order:
// optimizer, other compute, then (compute idle) TP, CP, EP, PP, DP communication, then
// (no GPU stream busy) the host thread launching kernels that a GPU op waits for (host_s:
// host-bound time), then idle (bubble). The parts add up to the step time. interference_s: the time
// compute kernels (optimizer included) ran longer because communication kernels ran beside them
// (ReplayResult::interference); it is taken out of compute_s and optimizer_s.
struct TimeBreakdown {
  double compute_s = 0;
  double interference_s = 0;
  double exposed_tp_s = 0;
  double exposed_cp_s = 0;
  double exposed_ep_s = 0;
  double exposed_pp_s = 0;
  double exposed_dp_s = 0;
  double host_s = 0;
  double bubble_s = 0;
  double optimizer_s = 0;
};

// Communication classes, as in the summary's time breakdown.
enum class CommClass : uint8_t { kTp, kCp, kEp, kPp, kDp };
constexpr int kCommClassCount = 5;
std::string_view CommClassName(CommClass c);
CommClass CommClassOf(Stream s);
// Bytes one member sends in a collective of `n` ranks over a buffer of `bytes`. An expert
// dispatch (one copy of the member's tokens) sends a copy to each other member its tokens
// go to: (n - 1) x `rank_reach` (net/expert_dispatch.h RankReach) copies; the NVLink
// forwards on the way are the forwarder's traffic, not counted here.
double SentBytes(CommOp op, int n, double bytes, bool is_first_member, double rank_reach = 0);

struct RankStats {
  double compute_busy_s = 0;   // time the compute stream runs a kernel
  double comm_busy_s = 0;      // time at least one communication stream runs
  double pipeline_idle_s = 0;  // idle time (nothing runs) before the pipeline ends
  // Bytes this rank sent per communication class (ring algorithms: all-reduce 2(n-1)/n of
  // the buffer, all-gather / reduce-scatter / all-to-all (n-1)/n; expert dispatch: see
  // SentBytes; a transfer counts for its sender). Indexed by CommClass.
  std::array<double, 5> sent_bytes{};
  double model_flops = 0;      // FLOPs of this rank's kernels, without recomputation
  double recompute_flops = 0;  // FLOPs this rank re-ran by recomputation
  TimeBreakdown breakdown;
};

struct StepStats {
  std::vector<RankStats> ranks;
  // End of the last forward/backward kernel over all ranks (the optimizer follows).
  double pipeline_end_s = 0;
  // Mean over the analysed ranks of pipeline_idle_s / pipeline_end_s.
  double bubble_fraction = 0;
  // The rank whose last forward/backward kernel ends last (lowest rank on ties): its
  // breakdown is the step's critical path.
  int critical_rank = 0;
};

// Analyses the listed ranks (all when empty); the others keep empty RankStats.
StepStats AnalyzeStep(const Program& program, const ReplayResult& replay,
                      const std::vector<int>& ranks = {});

}  // namespace meshsim

// Collectives on a FlowNetwork: each collective's phases (flow_phases.h) routed over the
// topology and run as flows. The transfers of a phase that carry equal bytes run as one
// coflow (flow_plan.h).
//
// With failed what-if links, each transfer's route is compared once (when its collective
// is first planned) with the route it takes in the healthy fabric; the bytes of those
// that differ are counted as they run (Rerouted). Without failures nothing is compared.
//
// Mirror traffic (Network::Start's `mirrors`, cluster.mirror_traffic). `full`: every mirror
// coflow runs as a flow. `near` (the default): only those that meet replayed traffic
// (mirror_traffic.h); the others are counted.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <tuple>
#include <unordered_map>

#include "sim/core/collective_kinds.h"
#include "sim/core/expert_routing.h"
#include "sim/hw/cluster_spec.h"
#include "sim/net/flow_network.h"
#include "sim/net/flow_phases.h"
#include "sim/net/flow_plan.h"
#include "sim/net/group_memo.h"
#include "sim/net/mirror_traffic.h"
#include "sim/net/nccl_tuner.h"
#include "sim/net/network.h"

namespace meshsim {

class FlowCollectiveNetwork final : public Network {
 public:
  // `nccl`: what the tuner may choose (kAuto, 0) and what it must use. `routing`: the MoE
  // router behind expert dispatches and combines (IsExpertExchange, expert_dispatch.h);
  // `backend`: the library that runs them.
  FlowCollectiveNetwork(const ClusterSpec& cluster, std::shared_ptr<const Topology> topology,
                        const NcclOptions& nccl, const ExpertRouting& routing = {},
                        MoeFlexBackend backend = MoeFlexBackend::kDeepEp);
  ~FlowCollectiveNetwork() override;
  void Start(Simulator& sim, CommOp op, std::span<const int> gpus, double bytes,
             std::function<void()> done, std::span<const std::vector<int>> mirrors) override;
  std::vector<LinkUsage> Usage(double step_s) const override;
  void WatchNics(const std::vector<int>& nodes) override;
  const std::vector<RateSample>& RateSamples() const override { return samples_; }
  std::string LinkName(int link) const override;
  Reroutes Rerouted() const override;
  double IntraNodeBytes() const override;
  double InterNodeBytes() const override;
  FlowNetwork& flows() { return flows_; }
  // How an all-reduce, all-gather or reduce-scatter of `bytes` over `gpus` runs (the
  // tuner's choice under this network's overrides). Precondition: 2+ GPUs, bytes > 0.
  NcclChoice ChoiceFor(CommOp op, std::span<const int> gpus, double bytes) const;

 private:
  struct Running;
  using PlanKey = std::tuple<int, std::vector<int>, double>;

  // The routed phases of a collective's mirrored groups, memoised by where the replay
  // keeps the groups (the same span for every collective of a program group) and checked
  // against where each group is stored (Network::Start's contract): one lookup per
  // collective instead of one per mirror, and no comparison of members. Per phase index
  // the coflows of every mirror (mirror by mirror), their routes in one buffer: not
  // copied once built.
  struct MirrorPlans {
    std::vector<std::span<const int>> groups;
    std::vector<std::vector<Coflow>> phases;
    std::vector<int> links;
    NearMirrors::Split split;
  };
  using MirrorKey = std::tuple<const void*, int, double>;
  struct MirrorKeyHash {
    size_t operator()(const MirrorKey& k) const;
  };
  MirrorPlans* MirrorPlansFor(CommOp op, std::span<const std::vector<int>> mirrors, double bytes,
                              MirrorPlans* scratch);

  // The phases of a collective over `gpus` (CollectivePhases, with the tuner's choice);
  // `launch_s`: the choice's launch cost.
  std::vector<Phase> PhasesOf(CommOp op, std::span<const int> gpus, double bytes,
                              double* launch_s) const;
  // How many GPUs group `to` lies beyond group `from`, member by member, when that is a
  // whole number of nodes and the phases of `op` move with their group (NodeShift in the
  // .cc); 0 otherwise.
  int NodeShift(CommOp op, std::span<const int> from, std::span<const int> to) const;
  // `phases` with every GPU (src, dst, via) moved by `shift`, into `out` (its vectors'
  // room reused).
  static void Shift(const std::vector<Phase>& phases, int shift, std::vector<Phase>* out);
  // Routes a phase's transfers: one coflow per distinct byte count (in order of first
  // appearance) appended to `out`, their routes to `links`.
  void RoutePhase(const Phase& phase, std::vector<int>* links, std::vector<Coflow>* out);
  // Builds the plans of `mirrors` into `out` (empty).
  void BuildMirrorPlans(CommOp op, std::span<const std::vector<int>> mirrors, double bytes,
                        MirrorPlans* out);
  // The routed phases of a collective, memoised by (op, group, bytes); they live as long
  // as this network.
  const RoutedPlan* PlanFor(CommOp op, std::span<const int> gpus, double bytes);
  Running* AcquireRun();
  void ReleaseRun(Running* run);
  void RunPhase(Running* run);
  void FinishPhase(Running* run);  // one of the phase's coflows has arrived
  // PlanFor, memoised by where the replay keeps the group (checked against its members).
  const RoutedPlan* GroupPlanFor(CommOp op, std::span<const int> gpus, double bytes);
  // Compares a transfer's route with its healthy route; adds a detour to `phase`.
  void NoteReroute(const Transfer& t, std::span<const int> route, Coflow* phase) const;
  void CountReroutes(const Coflow& phase);
  // Starts phase `index` of the collective's mirrors (nobody waits for them).
  void StartMirrors(Running* run, size_t index);
  // Per directed link: bytes and busy time of the counted mirrors (empty under
  // mirror_traffic full).
  const std::vector<double>& CountedBytes() const;
  const std::vector<double>& CountedBusy() const;
  double LinkBytes(int link, const std::vector<double>& counted) const;

  // RoutePhase's: per coflow of the phase, its links so far.
  std::vector<std::vector<int>> routing_;

  const ClusterSpec cluster_;
  const NcclOptions nccl_;
  const NcclTuner tuner_;
  const ExpertRouting expert_routing_;
  const MoeFlexBackend flex_backend_;
  FlowNetwork flows_;
  std::map<PlanKey, std::unique_ptr<const RoutedPlan>> plans_;
  std::unordered_map<MirrorKey, MirrorPlans, MirrorKeyHash> mirror_plans_;  // nodes stay put
  GroupMemo<const RoutedPlan*> group_plans_;
  // MirrorPlansFor's memo in front of mirror_plans_, direct-mapped in the same way.
  struct MirrorSlot {
    MirrorKey key{nullptr, -1, -1.0};
    MirrorPlans* plans = nullptr;
  };
  static constexpr size_t kMirrorSlots = 1024;
  std::vector<MirrorSlot> mirror_slots_ = std::vector<MirrorSlot>(kMirrorSlots);
  std::vector<std::unique_ptr<Running>> runs_;  // every collective ever in flight
  std::vector<Running*> free_runs_;
  std::vector<RateSample> samples_;
  // The fabric with no link failed, when some what-if link failed; null otherwise.
  std::shared_ptr<const Topology> healthy_;
  double rerouted_bytes_ = 0;
  std::vector<double> detour_bytes_;   // per directed link; sized only with healthy_
  std::unique_ptr<NearMirrors> near_;  // mirror_traffic near; null under full
};

}  // namespace meshsim

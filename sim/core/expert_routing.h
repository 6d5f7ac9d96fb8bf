// Where a token's routed experts live: the routing facts that the expert-parallel
// dispatch of DeepEP and HybridEP (plan.moe_dispatcher: flex) needs to know how many
// GPUs and NVLink domains a token is sent to. Shared by schedule/ (bytes each rank sends)
// and net/ (the dispatch's traffic), so it lives here, in core, beside the collective
// kinds.
#pragma once

#include <span>
#include <vector>

namespace meshsim {

// A MoE router: each token picks `top_k` of `experts` routed experts. With node-limited
// (group-limited) routing, as DeepSeek-V3 and Megatron-Core's `moe_router_num_groups` /
// `moe_router_group_topk` run it, the experts form `groups` groups of consecutive experts
// and a token first picks `group_topk` of them, then its top_k experts among theirs.
// groups == 1 (or group_topk == groups): no limit.
//
// `contiguous`: NeMo-Automodel's FakeBalancedGate (`backend.fake_balanced_gate: true`,
// nemo_automodel/components/moe/layers.py @ 79994aa1f) instead of a router: token t of a
// micro-batch takes experts (t x top_k + j) mod experts, j < top_k, i.e. one of
// experts / top_k aligned blocks of top_k consecutive experts, each block as often. Such a
// routing is ContiguousRouting(): one expert block per group, a token in one group.
struct ExpertRouting {
  int experts = 0;
  int top_k = 0;
  int groups = 1;
  int group_topk = 1;
  bool contiguous = false;

  bool Limited() const { return groups > 1 && group_topk < groups; }
};

// The library behind the flex token dispatcher (Megatron-Core moe_flex_dispatcher_backend):
// DeepEP's normal kernels, or NVIDIA's HybridEP, whose dispatch without a cached handle
// all-gathers the routing map (tokens x experts, one byte each) over the EP group before its
// metadata kernel (DeepEP hybrid-ep csrc/hybrid_ep/executor `Executor::allgather_routing_map`:
// NCCL's all_gather_into_tensor across nodes). The network models read it for the rate its
// kernels reach (net/expert_dispatch.h DomainRateFactor), so it lives here, in core.
enum class MoeFlexBackend { kDeepEp, kHybridEp };

// How a MoE layer's tokens pick their experts in a run (plan.moe_routing).
//  - kRandom: the balanced routing the benchmarks force with random router logits
//    (Megatron-Core's `moe_router_force_load_balancing`), under the model's group limit.
//  - kContiguous: Automodel's FakeBalancedGate (ExpertRouting::contiguous).
enum class MoeRouting { kRandom, kContiguous };

// The FakeBalancedGate's routing over `experts` experts, `top_k` per token.
// Precondition: top_k divides experts.
ExpertRouting ContiguousRouting(int experts, int top_k);

// The probability that a token is sent to a unit (a GPU, or an NVLink domain) that holds
// `held[i]` of the experts of group i (one entry per group; held.size() == groups), under
// the balanced routing the benchmarks force (Megatron-Core's
// `moe_router_force_load_balancing`: every token's router logits replaced by standard
// normal ones, `apply_random_logits`).
//  - Without a group limit every set of top_k experts is equally likely: exactly
//    1 - C(experts - held, top_k) / C(experts, top_k).
//  - With one, the top_k depend on the scores: Megatron-Core's `group_limited_topk` scores
//    a group by the sum of its best top_k / group_topk expert scores, keeps the best
//    group_topk groups and takes the top_k experts among theirs, which favours groups that
//    then get several experts. The probability is the fraction of 4,096 tokens routed so,
//    with sigmoid scores (DeepSeek-V3's `moe_router_score_function`) of normal logits drawn
//    from a fixed seed: deterministic, within about 1 % of the limit.
// Which of a group's experts a unit holds does not matter (they are alike), only how many.
//  - Contiguous routing (ExpertRouting::contiguous): a token's experts are one group,
//    every group as likely: the fraction of the groups of which the unit holds any.
double ReachProbability(const ExpertRouting& routing, std::span<const int> held);

// Adds to `held` (resized to one entry per group) the experts of each group among experts
// [first, first + count). Precondition: routing.groups divides routing.experts.
void AddHeldExperts(const ExpertRouting& routing, int first, int count, std::vector<int>* held);

// The probability that a token goes to a given member of an expert-parallel group of
// `ranks` members that hold experts / ranks consecutive experts each (Megatron-Core's
// expert placement): the mean over the members. Precondition: ranks divides experts.
double RankReach(const ExpertRouting& routing, int ranks);

}  // namespace meshsim

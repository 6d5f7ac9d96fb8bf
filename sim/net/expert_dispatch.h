// The expert-parallel token dispatch (and combine) of DeepEP's normal kernels and
// NVIDIA's HybridEP, which Megatron-Core runs with `--moe-token-dispatcher-type flex`
// (CommOp::kExpertDispatch; plan.moe_dispatcher: flex).
//
// Megatron-Core's all-to-all dispatcher (CommOp::kAllToAll) sends one copy of a token per
// chosen expert. DeepEP and HybridEP send a token once per destination NVLink domain,
// over RDMA, to the GPU of the same local rank there (its rail), which forwards it over
// NVLink to the GPUs of that domain that hold its chosen experts, once per GPU however
// many of its experts that GPU holds; inside the sender's own domain the token goes
// straight to those GPUs over NVLink. The RDMA sends and the NVLink forwards run
// pipelined, in chunks, by the same kernel, so the slower of the two sets its time.
// Combine is the reverse: each domain reduces a token's expert outputs over NVLink, then
// one RDMA copy goes back per domain: the same bytes on the same links.
// Sources: DeepEP README (deepseek-ai/DeepEP docs/legacy.md @ dd758ca, "Normal kernels
// with NVLink and RDMA forwarding": H800, 400 Gb/s CX7, 43-58 GB/s per GPU over RDMA and
// 153-158 GB/s over NVLink, "logical bandwidth" that counts the local rank's traffic);
// DeepSeek-V3 technical report section 3.2.2 (arXiv:2412.19437: each token to at most 4
// nodes, sent over IB once per node to the GPU with the same in-node index, then
// forwarded over NVLink); Megatron-Core token_dispatcher.py `_DeepepManager`,
// `_HybridEPManager`.
//
// `bytes` of a kExpertDispatch is one copy of the rank's tokens (tokens x hidden x
// element size: DeepEP's input buffer); each member sends, on average over the balanced
// routing (ExpertRouting, ReachProbability):
//   over RDMA:   bytes x (domains - 1) x domain_reach
//   over NVLink: bytes x domains x (per_domain - 1) x rank_reach
// (the forwards it makes for its rail peers, as many as the copies sent to its domain).
#pragma once

#include <span>
#include <vector>

#include "sim/core/expert_routing.h"
#include "sim/hw/cluster_spec.h"
#include "sim/net/flow_phases.h"

namespace meshsim {

// How a group's dispatch fans out. Members hold the routed experts in group order, each
// experts / ranks consecutive ones (Megatron-Core's expert placement).
struct ExpertFanout {
  int ranks = 0;
  int domains = 0;          // NVLink domains the group spans
  int per_domain = 0;       // the most members on one domain
  double rank_reach = 0;    // mean probability that a token goes to a given member
  double domain_reach = 0;  // mean probability that it goes to a given domain
  double RdmaCopies() const { return (domains - 1) * domain_reach; }
  double NvlinkCopies() const { return domains * (per_domain - 1) * rank_reach; }
};

// The fan-out of `gpus` (an expert-parallel group; GPU g on domain g / gpus_per_domain).
// Precondition: routing.experts is a multiple of the group's size and of routing.groups.
ExpertFanout FanoutOf(const ExpertRouting& routing, std::span<const int> gpus, int gpus_per_domain);

// The dispatch as one phase of point-to-point transfers (flow-level model): each member to
// the member with its local index on every other domain (RDMA), and each member to every
// other member of its domain (NVLink: its own tokens and those it forwards). Latency: one
// NVLink step, and one network step when the group crosses domains.
Phase ExpertDispatchPhase(const ClusterSpec& cluster, const ExpertRouting& routing,
                          std::span<const int> gpus, double bytes);

}  // namespace meshsim

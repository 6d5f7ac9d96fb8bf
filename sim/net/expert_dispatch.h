// The expert-parallel token dispatch (and combine) of DeepEP's normal kernels and
// NVIDIA's HybridEP, which Megatron-Core runs with `--moe-token-dispatcher-type flex`
// (CommOp::kExpertDispatch and kExpertCombine; plan.moe_dispatcher: flex).
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
// `bytes` of a kExpertDispatch (or kExpertCombine) is one copy of the rank's tokens (tokens x
// hidden x element size: DeepEP's input buffer); each member sends, on average over the balanced
// routing (ExpertRouting, ReachProbability):
//   over RDMA:   bytes x (domains - 1) x domain_reach
//   over NVLink: bytes x domains x (per_domain - 1) x rank_reach
// (the forwards it makes for its rail peers, as many as the copies sent to its domain).
//
// The RDMA hop runs at the NIC's rate (efficiency.nic) times the rate the backend's kernel
// reaches over the group's number of domains relative to its best (DomainRateFactor): a
// table of measured kernel rates, keyed by backend, phase (dispatch, combine) and domains.
// HybridEP's H100 benchmark (deepseek-ai/DeepEP docs/README_Hybrid-EP.md @ 41cad94, "Kernel
// Only", BF16 dispatch and combine, 16 SMs, 4,096 tokens of hidden 7168 per rank, top 8 of 8
// experts per rank, random routing; 2, 4 and 8 DGX H100 nodes of 8 GPUs with a 400 Gb/s NIC
// each) gives 71.71, 57.69, 49.97 GB/s for the dispatch and 62.95, 57.46, 49.77 GB/s for the
// combine. Those count a token once per node it reaches, the sender's own included
// (tests/test_hybrid_ep.py @ 5eb0722, count_rdma_send_from_routing_map; the combine the
// same bytes), so the real RDMA is (d - 1) / d of them under the benchmark's symmetric
// routing: 35.86, 43.27, 43.72 GB/s (dispatch) and 31.48, 43.10, 43.55 GB/s (combine) per
// GPU. Over 2 domains the kernels reach 0.82 (dispatch) and 0.72 (combine) of their rate
// per RDMA byte over 8; why is not public (the NIC is at 72 % of its line rate, and the
// 208 GB/s of NVLink writes per GPU are under half the H100's NVLink). DeepEP has no entry (factor
// 1): its V1 normal kernels' H800 table (docs/legacy.md @ dd758ca: 43, 58, 51 GB/s logical at EP
// 16, 32, 64, FP8 dispatch and BF16 combine, i.e. 21.5, 43.5, 44.6 GB/s of real RDMA) is
// NVLink-bound at EP 16 on the H800's ~160 GB/s NVLink (each GPU receives ~141 GB/s over
// NVLink there, against 153 GB/s intranode), a limit of that GPU, not of two domains; and
// DeepEP V2's SM90 table (README.md @ dd758ca: 90 and 61 GB/s logical over 2 and 4 nodes)
// is 45.0 and 45.8 GB/s of real RDMA: no two-domain penalty.
#pragma once

#include <span>
#include <vector>

#include "sim/core/collective_kinds.h"
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

// The rate of `backend`'s `op` (kExpertDispatch or kExpertCombine) kernel per RDMA byte over
// `domains` NVLink domains, as a fraction of the best rate it reaches over any number of
// domains measured (the table above; linear between its points, the nearest one beyond
// them; 1 without a table or with one domain).
double DomainRateFactor(MoeFlexBackend backend, CommOp op, int domains);

// The time the RDMA hop of `f` takes, per GPU, for `bytes` (one copy of a member's tokens):
// its RDMA bytes over the GPU's share of its node's NICs (efficiency.nic) times `factor`
// (DomainRateFactor). 0 inside one domain.
double ExpertRdmaSeconds(const ClusterSpec& cluster, const ExpertFanout& f, double bytes,
                         double factor);

// The dispatch as one phase of point-to-point transfers (flow-level model): each member to
// the member with its local index on every other domain (RDMA), and each member to every
// other member of its domain (NVLink: its own tokens and those it forwards). Latency: one
// NVLink step, and one network step when the group crosses domains. Where `factor`
// (DomainRateFactor) is below 1 the phase's data takes at least ExpertRdmaSeconds (its
// min_s), the kernel's measured rate.
Phase ExpertDispatchPhase(const ClusterSpec& cluster, const ExpertRouting& routing,
                          std::span<const int> gpus, double bytes, double factor = 1);

}  // namespace meshsim

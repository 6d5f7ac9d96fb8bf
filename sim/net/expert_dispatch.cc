#include "sim/net/expert_dispatch.h"

#include <algorithm>
#include <cassert>
#include <map>

#include "sim/hw/nics.h"

namespace meshsim {
namespace {

// The group's members by domain, in order of first appearance, as member indices.
std::vector<std::vector<int>> MembersByDomain(std::span<const int> gpus, int gpus_per_domain) {
  std::vector<std::vector<int>> domains;
  std::vector<int> ids;
  for (int i = 0; i < static_cast<int>(gpus.size()); ++i) {
    const int d = gpus[i] / gpus_per_domain;
    const auto at = std::find(ids.begin(), ids.end(), d) - ids.begin();
    if (at == static_cast<long>(ids.size())) {
      ids.push_back(d);
      domains.emplace_back();
    }
    domains[at].push_back(i);
  }
  return domains;
}

// The reach of the unit holding the experts of `members` (member indices of a group of
// `ranks`).
double UnitReach(const ExpertRouting& r, std::span<const int> members, int ranks) {
  const int per_rank = r.experts / ranks;
  std::vector<int> held;
  for (int m : members) AddHeldExperts(r, m * per_rank, per_rank, &held);
  return ReachProbability(r, held);
}

double Latency(const ClusterSpec& c, bool crosses) {
  return ((crosses ? c.inter_node.latency_us : 0) + c.intra_node.latency_us) * 1e-6;
}

// HybridEP's H100 kernel rates (deepseek-ai/DeepEP docs/README_Hybrid-EP.md @ 41cad94,
// "Kernel Only", Dispatch (BF16) and Combine, 16 SMs; expert_dispatch.h): GB/s of algorithm
// bandwidth over (token, node) pairs, the sender's node included, per number of nodes.
struct MeasuredRate {
  int domains;
  double dispatch_gbps, combine_gbps;
};
constexpr MeasuredRate kHybridEpH100[] = {{2, 71.71, 62.95}, {4, 57.69, 57.46}, {8, 49.97, 49.77}};

// Real RDMA GB/s per GPU: (d - 1) / d of the pairs go to another node.
double RealRdmaGbps(const MeasuredRate& m, CommOp op) {
  const double algbw = op == CommOp::kExpertCombine ? m.combine_gbps : m.dispatch_gbps;
  return algbw * (m.domains - 1) / m.domains;
}

}  // namespace

double DomainRateFactor(MoeFlexBackend backend, CommOp op, int domains) {
  if (backend != MoeFlexBackend::kHybridEp || domains < 2) return 1;
  const std::span<const MeasuredRate> t = kHybridEpH100;
  double best = 0;
  for (const MeasuredRate& m : t) best = std::max(best, RealRdmaGbps(m, op));
  if (domains <= t.front().domains) return RealRdmaGbps(t.front(), op) / best;
  for (size_t i = 1; i < t.size(); ++i) {
    if (domains <= t[i].domains) {
      const double w =
          static_cast<double>(domains - t[i - 1].domains) / (t[i].domains - t[i - 1].domains);
      return ((1 - w) * RealRdmaGbps(t[i - 1], op) + w * RealRdmaGbps(t[i], op)) / best;
    }
  }
  return RealRdmaGbps(t.back(), op) / best;
}

double ExpertRdmaSeconds(const ClusterSpec& c, const ExpertFanout& f, double bytes, double factor) {
  if (f.domains < 2) return 0;
  const int nics = NicsOfRanks(c.inter_node, f.per_domain, c.gpus_per_node);
  const double bps = c.inter_node.gbps_per_nic * 1e9 * c.NicEfficiency() * nics / f.per_domain;
  return bytes * f.RdmaCopies() / (bps * factor);
}

ExpertFanout FanoutOf(const ExpertRouting& r, std::span<const int> gpus, int gpus_per_domain) {
  assert(!gpus.empty() && r.experts % static_cast<int>(gpus.size()) == 0);
  ExpertFanout f;
  f.ranks = static_cast<int>(gpus.size());
  const auto domains = MembersByDomain(gpus, gpus_per_domain);
  f.domains = static_cast<int>(domains.size());
  double reach = 0;
  for (const auto& d : domains) {
    f.per_domain = std::max<int>(f.per_domain, d.size());
    reach += UnitReach(r, d, f.ranks);
  }
  f.domain_reach = reach / f.domains;
  f.rank_reach = RankReach(r, f.ranks);
  return f;
}

Phase ExpertDispatchPhase(const ClusterSpec& c, const ExpertRouting& r, std::span<const int> gpus,
                          double bytes, double factor) {
  const int per = c.gpus_per_node;  // the network's nodes are NVLink domains
  const ExpertFanout f = FanoutOf(r, gpus, per);
  const auto domains = MembersByDomain(gpus, per);
  Phase p;
  p.latency_s = Latency(c, f.domains > 1);
  if (factor < 1) p.min_s = ExpertRdmaSeconds(c, f, bytes, factor);
  // Copies each member forwards: one per member (its rail peers, itself included) that
  // sends to its domain through it.
  std::map<int, int> forwards;
  for (const auto& d : domains) {
    for (size_t local = 0; local < d.size(); ++local) {
      const int src = d[local];
      for (const auto& to : domains) {
        const int peer = to[local % to.size()];
        ++forwards[peer];
        if (&to != &d) p.transfers.push_back({gpus[src], gpus[peer], bytes * f.domain_reach});
      }
    }
  }
  for (const auto& d : domains) {
    for (int x : d) {
      for (int y : d) {
        if (x != y) p.transfers.push_back({gpus[x], gpus[y], forwards[x] * bytes * f.rank_reach});
      }
    }
  }
  return p;
}

}  // namespace meshsim

#include "sim/net/expert_dispatch.h"

#include <algorithm>
#include <cassert>
#include <map>

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

}  // namespace

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
                          double bytes) {
  const int per = c.gpus_per_node;  // the network's nodes are NVLink domains
  const ExpertFanout f = FanoutOf(r, gpus, per);
  const auto domains = MembersByDomain(gpus, per);
  Phase p;
  p.latency_s = Latency(c, f.domains > 1);
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

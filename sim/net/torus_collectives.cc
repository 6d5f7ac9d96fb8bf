#include "sim/net/torus_collectives.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <cstdlib>
#include <iterator>
#include <map>
#include <set>

namespace meshsim {
namespace {

constexpr double kGB = 1e9;

double IciBps(const ClusterSpec& c) {
  return c.intra_node.gbps_per_link * kGB * c.efficiency.network;
}
double IciHop(const ClusterSpec& c) { return c.intra_node.latency_us * 1e-6; }
double DcnHop(const ClusterSpec& c) { return c.inter_node.latency_us * 1e-6; }
double NicBps(const ClusterSpec& c) { return c.inter_node.gbps_per_nic * kGB * c.NicEfficiency(); }
// The DCN bandwidth of one chip when every chip of its slice uses the DCN at once.
double DcnBpsPerChip(const ClusterSpec& c) {
  return NicBps(c) * c.inter_node.nics_per_node / c.gpus_per_node;
}

double RingFactor(CommOp op, int n) {
  const double f = static_cast<double>(n - 1) / n;
  return op == CommOp::kAllReduce ? 2 * f : f;
}
int RingSteps(CommOp op, int n) { return op == CommOp::kAllReduce ? 2 * (n - 1) : n - 1; }

int SliceOf(const ClusterSpec& c, int gpu) { return gpu / c.gpus_per_node; }

std::array<int, kMaxTorusDims> CoordsOf(const ClusterSpec& c, int gpu) {
  return c.intra_node.torus.CoordsOfRank(gpu % c.gpus_per_node);
}

int IciHops(const ClusterSpec& c, int a, int b) {
  const TorusSpec& t = c.intra_node.torus;
  const auto x = CoordsOf(c, a), y = CoordsOf(c, b);
  int hops = 0;
  for (int d = 0; d < t.Dims(); ++d) hops += std::abs(t.Offset(d, x[d], y[d]));
  return hops;
}

// The group's members by slice, in order of first appearance.
std::vector<std::vector<int>> BySlice(const ClusterSpec& c, std::span<const int> gpus) {
  std::vector<std::vector<int>> slices;
  std::map<int, size_t> index;
  for (int g : gpus) {
    auto [it, added] = index.try_emplace(SliceOf(c, g), slices.size());
    if (added) slices.emplace_back();
    slices[it->second].push_back(g);
  }
  return slices;
}

// Time and bytes sent per member of one part of a collective.
struct Part {
  double seconds = 0;
  double bytes = 0;
};

// Reduce-scatter of `bytes` through the stages in one slice (all-gather: the same).
Part IciReduceScatter(const ClusterSpec& c, const TorusGroup& g, double bytes) {
  Part p;
  for (const TorusGroup::Stage& s : g.stages) {
    const double f = (s.n - 1.0) / s.n;
    p.seconds +=
        f * bytes * s.stride / ((s.ring ? 2 : 1) * IciBps(c)) + (s.n - 1) * s.stride * IciHop(c);
    p.bytes += f * bytes;
    bytes /= s.n;
  }
  return p;
}

Part DcnRing(const ClusterSpec& c, CommOp op, int slices, double bytes) {
  Part p;
  p.bytes = RingFactor(op, slices) * bytes;
  p.seconds = p.bytes / DcnBpsPerChip(c) + RingSteps(op, slices) * DcnHop(c);
  return p;
}

CollectiveCost Reduction(const ClusterSpec& c, CommOp op, const TorusGroup& g, int n,
                         double bytes) {
  CollectiveCost cost;
  if (!g.grid) {  // one bidirectional line over the members, at the slower link's rate
    const bool dcn = g.slices > 1;
    const double bps = dcn ? std::min(IciBps(c), DcnBpsPerChip(c)) : IciBps(c);
    const double sent = RingFactor(op, n) * bytes;
    cost.duration = SimTime::Seconds(sent / bps + RingSteps(op, n) * (dcn ? DcnHop(c) : IciHop(c)));
    (dcn ? cost.inter_node_bytes : cost.intra_node_bytes) = sent * n;
    return cost;
  }
  const int passes = op == CommOp::kAllReduce ? 2 : 1;  // reduce-scatter, all-gather
  const Part ici = IciReduceScatter(c, g, bytes);
  const Part dcn = g.slices > 1 ? DcnRing(c, op, g.slices, bytes / g.per_slice) : Part{};
  cost.duration = SimTime::Seconds(passes * ici.seconds + dcn.seconds);
  cost.intra_node_bytes = passes * ici.bytes * n;
  cost.inter_node_bytes = dcn.bytes * n;
  return cost;
}

CollectiveCost SendRecv(const ClusterSpec& c, int a, int b, double bytes) {
  CollectiveCost cost;
  if (SliceOf(c, a) != SliceOf(c, b)) {
    cost.duration = SimTime::Seconds(DcnHop(c) + bytes / NicBps(c));
    cost.inter_node_bytes = bytes;
  } else {
    cost.duration = SimTime::Seconds(IciHops(c, a, b) * IciHop(c) + bytes / IciBps(c));
    cost.intra_node_bytes = bytes;
  }
  return cost;
}

CollectiveCost RingShift(const ClusterSpec& c, std::span<const int> gpus, double bytes) {
  CollectiveCost cost;
  for (size_t i = 0; i < gpus.size(); ++i) {
    const CollectiveCost one = SendRecv(c, gpus[i], gpus[(i + 1) % gpus.size()], bytes);
    cost.duration = std::max(cost.duration, one.duration);
    cost.intra_node_bytes += one.intra_node_bytes;
    cost.inter_node_bytes += one.inter_node_bytes;
  }
  return cost;
}

// Bytes on the busiest + link of a dimension of n chips when each of them sends
// `bytes` / n to every chip of its line (dimension-order routing).
double AllToAllLoad(int n, bool ring, double bytes) {
  if (ring) {
    const double k = n / 2;
    return bytes / n * k * (k + 1) / 2;
  }
  return bytes / n * (n / 2) * ((n + 1) / 2);
}

CollectiveCost AllToAll(const ClusterSpec& c, const TorusGroup& g, int n, double bytes) {
  CollectiveCost cost;
  const double in_slice = bytes * g.per_slice / n;  // to members of the own slice
  double ici_s = 0;
  if (g.grid) {
    for (const TorusGroup::Stage& s : g.stages) {
      ici_s = std::max(ici_s, AllToAllLoad(s.n, s.ring, in_slice) * s.stride / IciBps(c));
    }
  } else {
    ici_s = AllToAllLoad(g.per_slice, false, in_slice) / IciBps(c);
  }
  double seconds = ici_s + IciHop(c);
  cost.intra_node_bytes = in_slice * (g.per_slice - 1.0) / g.per_slice * n;
  if (g.slices > 1) {
    const double across = bytes - in_slice;
    seconds = std::max(seconds, across / DcnBpsPerChip(c) + DcnHop(c));
    cost.inter_node_bytes = across * n;
  }
  cost.duration = SimTime::Seconds(seconds);
  return cost;
}

}  // namespace

TorusGroup LocateTorusGroup(const ClusterSpec& c, std::span<const int> gpus) {
  const TorusSpec& t = c.intra_node.torus;
  const auto slices = BySlice(c, gpus);
  TorusGroup g;
  g.slices = static_cast<int>(slices.size());
  g.per_slice = static_cast<int>(slices.front().size());
  const bool equal = std::all_of(slices.begin(), slices.end(), [&](const std::vector<int>& s) {
    return static_cast<int>(s.size()) == g.per_slice;
  });
  std::array<std::set<int>, kMaxTorusDims> seen;
  for (int gpu : slices.front()) {
    const auto at = CoordsOf(c, gpu);
    for (int d = 0; d < kMaxTorusDims; ++d) seen[d].insert(at[d]);
  }
  int64_t product = 1;
  for (int d = 0; d < t.Dims(); ++d) {
    const int n = static_cast<int>(seen[d].size());
    product *= n;
    if (n < 2) continue;
    int stride = 1;
    for (auto a = seen[d].begin(), b = std::next(a); b != seen[d].end(); ++a, ++b) {
      stride = std::max(stride, *b - *a);
    }
    // Two members are a line even half a ring apart: both ways are the + way (ties).
    g.stages.push_back({d, n, n > 2 && n * stride == t.Size(d) && t.Ring(d), stride});
  }
  g.grid = equal && product == g.per_slice;
  return g;
}

CollectiveCost TorusCollectiveCost(const ClusterSpec& c, CommOp op, std::span<const int> gpus,
                                   double bytes) {
  assert(c.Torus() && gpus.size() >= 2 && bytes > 0);
  const int n = static_cast<int>(gpus.size());
  switch (op) {
    case CommOp::kSendRecv:
      return SendRecv(c, gpus[0], gpus[1], bytes);
    case CommOp::kRingShift:
      return RingShift(c, gpus, bytes);
    case CommOp::kAllToAll:
      return AllToAll(c, LocateTorusGroup(c, gpus), n, bytes);
    default:
      return Reduction(c, op, LocateTorusGroup(c, gpus), n, bytes);
  }
}

namespace {

// A forward and a backward ring over `order`, each edge carrying `bytes` / 2.
void AddBothWays(const std::vector<int>& order, double bytes, std::vector<Transfer>* out) {
  const size_t n = order.size();
  if (n < 2) return;
  for (size_t i = 0; i < n; ++i) {
    const int a = order[i], b = order[(i + 1) % n];
    out->push_back({a, b, bytes / 2});
    out->push_back({b, a, bytes / 2});
  }
}

// The lines of the group along `dim` in every slice, each ordered by its coordinate.
std::vector<std::vector<int>> Lines(const ClusterSpec& c, std::span<const int> gpus, int dim) {
  std::map<std::pair<int, std::array<int, kMaxTorusDims>>, std::map<int, int>> lines;
  for (int gpu : gpus) {
    auto at = CoordsOf(c, gpu);
    const int along = at[dim];
    at[dim] = 0;
    lines[{SliceOf(c, gpu), at}][along] = gpu;
  }
  std::vector<std::vector<int>> out;
  for (const auto& [key, members] : lines) {
    out.emplace_back();
    for (const auto& [coord, gpu] : members) out.back().push_back(gpu);
  }
  return out;
}

// Reduce-scatter (or all-gather) phases through the stages, x first.
std::vector<Phase> IciPhases(const ClusterSpec& c, const TorusGroup& g, std::span<const int> gpus,
                             double bytes) {
  std::vector<Phase> phases;
  for (const TorusGroup::Stage& s : g.stages) {
    Phase p;
    p.latency_s = (s.n - 1) * s.stride * IciHop(c);
    for (const auto& line : Lines(c, gpus, s.dim)) {
      AddBothWays(line, (s.n - 1.0) / s.n * bytes, &p.transfers);
    }
    phases.push_back(std::move(p));
    bytes /= s.n;
  }
  return phases;
}

// One DCN ring per place in the slice: the members at that place, slice by slice.
Phase DcnPhase(const ClusterSpec& c, CommOp op, std::span<const int> gpus, int per_slice,
               double bytes) {
  const auto slices = BySlice(c, gpus);
  const int s = static_cast<int>(slices.size());
  Phase p;
  p.latency_s = RingSteps(op, s) * DcnHop(c);
  for (int j = 0; j < per_slice; ++j) {
    for (int k = 0; k < s; ++k) {
      p.transfers.push_back(
          {slices[k][j], slices[(k + 1) % s][j], RingFactor(op, s) * bytes / per_slice});
    }
  }
  return p;
}

std::vector<Phase> ReductionPhases(const ClusterSpec& c, CommOp op, std::span<const int> gpus,
                                   double bytes) {
  const int n = static_cast<int>(gpus.size());
  const TorusGroup g = LocateTorusGroup(c, gpus);
  if (!g.grid) {
    Phase p;
    p.latency_s = RingSteps(op, n) * (g.slices > 1 ? DcnHop(c) : IciHop(c));
    AddBothWays(std::vector<int>(gpus.begin(), gpus.end()), RingFactor(op, n) * bytes,
                &p.transfers);
    return {p};
  }
  const std::vector<Phase> rs = IciPhases(c, g, gpus, bytes);
  std::vector<Phase> phases;
  if (op != CommOp::kAllGather) phases = rs;
  if (g.slices > 1) phases.push_back(DcnPhase(c, op, gpus, g.per_slice, bytes));
  if (op != CommOp::kReduceScatter) phases.insert(phases.end(), rs.rbegin(), rs.rend());
  return phases;
}

std::vector<Phase> PointToPoint(const ClusterSpec& c, CommOp op, std::span<const int> gpus,
                                double bytes) {
  const int n = static_cast<int>(gpus.size());
  Phase p;
  double latency = 0;
  auto add = [&](int a, int b, double part) {
    p.transfers.push_back({a, b, part});
    latency = std::max(latency,
                       SliceOf(c, a) != SliceOf(c, b) ? DcnHop(c) : IciHops(c, a, b) * IciHop(c));
  };
  if (op == CommOp::kSendRecv) {
    add(gpus[0], gpus[1], bytes);
  } else if (op == CommOp::kRingShift) {
    for (int i = 0; i < n; ++i) add(gpus[i], gpus[(i + 1) % n], bytes);
  } else {  // all-to-all: one hop latency (DCN when it crosses slices)
    for (int a : gpus) {
      for (int b : gpus) {
        if (a != b) p.transfers.push_back({a, b, bytes / n});
      }
    }
    latency = BySlice(c, gpus).size() > 1 ? DcnHop(c) : IciHop(c);
  }
  p.latency_s = latency;
  return {p};
}

}  // namespace

std::vector<Phase> TorusCollectivePhases(const ClusterSpec& c, CommOp op, std::span<const int> gpus,
                                         double bytes) {
  assert(c.Torus() && gpus.size() >= 2 && bytes > 0);
  if (op == CommOp::kSendRecv || op == CommOp::kRingShift || op == CommOp::kAllToAll) {
    return PointToPoint(c, op, gpus, bytes);
  }
  return ReductionPhases(c, op, gpus, bytes);
}

}  // namespace meshsim

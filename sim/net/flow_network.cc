#include "sim/net/flow_network.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

#include "sim/core/huge_pages.h"

namespace meshsim {
namespace {

bool LaterCompletion(SimTime a_at, int a_flow, SimTime b_at, int b_flow) {
  return a_at != b_at ? a_at > b_at : a_flow > b_flow;
}

}  // namespace

FlowNetwork::FlowList::FlowList(FlowList&& other) noexcept : size_(other.size_), cap_(other.cap_) {
  if (cap_ > kInline) {
    heap_ = other.heap_;
    other.cap_ = kInline;
    other.size_ = 0;
  } else {
    std::copy(other.inline_, other.inline_ + size_, inline_);
  }
}

void FlowNetwork::FlowList::Grow() {
  const uint32_t cap = 2 * cap_;
  auto* grown = new LinkFlow[cap];
  std::copy(begin(), end(), grown);
  if (cap_ > kInline) delete[] heap_;
  heap_ = grown;
  cap_ = cap;
}

FlowNetwork::FlowNetwork(std::shared_ptr<const Topology> topology,
                         const std::vector<double>& class_efficiency)
    : topology_(std::move(topology)) {
  const auto& links = topology_->links();
  const size_t n = links.size();
  // Per-link arrays of a large fabric: first touched 2 MiB at a time (huge_pages.h).
  ReserveHuge(links_, n);
  ReserveHuge(residual_, n);
  ReserveHuge(unfrozen_, n);
  ReserveHuge(heap_key_, n);
  links_.resize(n);
  for (size_t i = 0; i < n; ++i) {
    links_[i].capacity = links[i].bytes_per_s * class_efficiency[static_cast<int>(links[i].cls)];
  }
  residual_.assign(n, 0);
  unfrozen_.assign(n, 0);
  heap_key_.assign(n, 0);
  crossing_slot_.assign(n, -1);
}

void FlowNetwork::WatchLinks(const std::vector<int>& links,
                             std::function<void(int, SimTime, double)> observer) {
  watched_ = links;
  watched_rate_.assign(links.size(), 0);
  for (int l : links) links_[l].watched = true;
  observer_ = std::move(observer);
}

double FlowNetwork::LinkRate(int link) const {
  double rate = 0;
  for (const LinkFlow& e : links_[link].flows) {
    for (uint32_t k = 0; k < e.crossings; ++k) rate += flows_[e.flow].rate;
  }
  return rate;
}

void FlowNetwork::StartFlow(Simulator& sim, int src, int dst, double bytes, uint64_t flow_key,
                            std::function<void()> on_done) {
  const std::vector<int>& route = topology_->Route(src, dst, flow_key);
  assert(!route.empty() && "Topology::Build rejects disconnected networks");
  StartFlowOnRoute(sim, std::span<const int>(route), bytes, std::move(on_done));
}

void FlowNetwork::Touch(int link) {
  if (!links_[link].mark) {
    links_[link].mark = true;
    dirty_links_.push_back(link);
  }
}

void FlowNetwork::StartFlowOnRoute(Simulator& sim, std::span<const int> route, double bytes,
                                   std::function<void()> on_done, GatheredRoute* gathered) {
  assert(!route.empty() && bytes > 0);
  int id;
  if (!free_slots_.empty()) {
    id = free_slots_.back();
    free_slots_.pop_back();
  } else {
    id = static_cast<int>(flows_.size());
    flows_.emplace_back();
    flow_mark_.push_back(0);
  }
  Flow& f = flows_[id];
  SetRoute(f, route, gathered);
  f.remaining = bytes;
  f.rate = 0;
  f.since = sim.Now();
  f.on_done = std::move(on_done);
  ++f.version;
  f.alive = true;
  ++live_;
  ForEachCrossing(f, [&](int l, uint32_t count) {
    LinkState& link = links_[l];
    if (link.flows.empty()) link.busy_since = sim.Now();
    link.flows.push_back({id, count});
    link.crossings += count;
    Touch(l);
  });
  EnsureSettle(sim);
}

void FlowNetwork::SetRoute(Flow& f, std::span<const int> route, GatheredRoute* gathered) {
  f.route = route;
  if (gathered && gathered->gathered) {
    f.links = gathered->links;
    return;
  }
  f.links.clear();
  if (gathered) gathered->gathered = true;
  // A transfer's or a small coflow's route is walked as it is: the links are worth
  // gathering only where many crossings repeat them.
  constexpr size_t kLongRoute = 64;
  if (route.size() <= kLongRoute) return;
  for (int l : route) {
    int& slot = crossing_slot_[l];
    if (slot < 0) {
      slot = static_cast<int>(f.links.size());
      f.links.push_back({l, 1});
    } else {
      ++f.links[slot].count;
    }
  }
  for (const Crossing& c : f.links) crossing_slot_[c.link] = -1;
  if (f.links.size() == route.size()) f.links.clear();  // no link repeats: walk the route
  if (gathered) gathered->links = f.links;
}

void FlowNetwork::Release(Simulator& sim) {
  if (--held_ == 0 && !settle_pending_ && !dirty_links_.empty()) Settle(sim);
}

void FlowNetwork::EnsureSettle(Simulator& sim) {
  if (settle_pending_ || held_ > 0) return;
  settle_pending_ = true;
  sim.Schedule(SimTime::Zero(), [this, &sim] { Settle(sim); });
}

// The flows and links connected to the dirty links through shared links.
void FlowNetwork::CollectComponent() {
  comp_links_.clear();
  comp_flows_.clear();
  for (int l : dirty_links_) comp_links_.push_back(l);  // already marked
  dirty_links_.clear();
  for (size_t i = 0; i < comp_links_.size(); ++i) {
    for (const LinkFlow& e : links_[comp_links_[i]].flows) {
      const int f = e.flow;
      if (flow_mark_[f]) continue;
      flow_mark_[f] = 1;
      comp_flows_.push_back(f);
      ForEachCrossing(flows_[f], [&](int m, uint32_t) {
        if (!links_[m].mark) {
          links_[m].mark = true;
          comp_links_.push_back(m);
        }
      });
    }
  }
}

// Progressive filling over the component: links in increasing order of fair share
// (residual / unfrozen flows) from a min-heap; the flows of the tightest link (ties: the
// lowest id) are frozen at its share. Freezing a flow only raises the shares of its other
// links (up to rounding), so a link keeps its entry until it reaches the top, where the
// entry is renewed at the link's current share: the same links freeze in the same order
// as with an entry per change, with far fewer entries. O((F*h + L) log L).
void FlowNetwork::FillRates() {
  ++rate_updates_;
  if (comp_flows_.size() == 1) {
    // Alone on its links (most components): the first share the filling would freeze it
    // at, the smallest capacity / crossings over its links, computed as the filling does.
    Flow& flow = flows_[comp_flows_.front()];
    double share = std::numeric_limits<double>::infinity();
    ForEachCrossing(flow, [&](int l, uint32_t) {
      const LinkState& link = links_[l];
      share = std::min(share, link.capacity / static_cast<int>(link.crossings));
    });
    flow.rate = share;
    return;
  }
  for (int l : comp_links_) {
    residual_[l] = links_[l].capacity;
    unfrozen_[l] = static_cast<int>(links_[l].crossings);
  }
  for (int f : comp_flows_) flow_mark_[f] = 0;  // 0 now means "not frozen yet"
  // The first entries sorted a part at a time (Before is a total order: nth_element
  // splits exactly), the renewed ones in a heap: the next is the smaller. Once every flow
  // is frozen the entries left would all be skipped: the filling stops there, and the
  // parts never reached are never sorted.
  sorted_.clear();
  heap_.clear();
  for (int l : comp_links_) {
    if (unfrozen_[l] == 0) continue;
    heap_key_[l] = residual_[l] / unfrozen_[l];
    sorted_.push_back({heap_key_[l], l});
  }
  // Each entry that is not skipped freezes a flow: the first part is sized by the flows,
  // the next ones are quarters.
  const size_t flows = comp_flows_.size();
  size_t frozen = 0, next_sorted = 0, sorted_end = 0;
  size_t chunk = std::max<size_t>(256, 16 * flows);
  while (frozen < flows) {
    if (next_sorted == sorted_end && sorted_end < sorted_.size()) {
      sorted_end = SortNext(sorted_end, chunk);
      chunk = std::max<size_t>(256, sorted_.size() / 4);
    }
    if (next_sorted == sorted_end && heap_.empty()) break;
    ShareEntry top;
    if (!heap_.empty() &&
        (next_sorted == sorted_end || Before()(heap_.front(), sorted_[next_sorted]))) {
      std::pop_heap(heap_.begin(), heap_.end(), After());
      top = heap_.back();
      heap_.pop_back();
    } else {
      top = sorted_[next_sorted++];
    }
    const int l = top.link;
    if (unfrozen_[l] == 0) continue;
    const double share = residual_[l] / unfrozen_[l];
    if (share != top.share) {  // stale: a link's share grows as flows freeze, lazily
      if (share > top.share && top.share == heap_key_[l]) PushShare(share, l);
      continue;
    }
    for (const LinkFlow& e : links_[l].flows) {
      const int f = e.flow;
      if (flow_mark_[f]) continue;
      flow_mark_[f] = 1;
      ++frozen;
      Freeze(f, top.share, l);
    }
  }
  // Entries never reached leave their links' heap keys behind: nothing reads them before
  // the next filling sets them again.
}

// Flow f takes `share` (frozen at link `at`): each crossing of a link takes the share off
// its residual; a share that rounding shrank below the link's heap key is pushed. Of
// several crossings in a row only the last such share is: the earlier ones would sit
// above it in the heap with a key already renewed below them, and be dropped as stale when
// they come up.
void FlowNetwork::Freeze(int f, double share, int at) {
  flows_[f].rate = share;
  ForEachCrossing(flows_[f], [&](int m, uint32_t count) {
    double residual = residual_[m], key = heap_key_[m], shrunk = -1;
    int unfrozen = unfrozen_[m];
    for (uint32_t k = 0; k < count; ++k) {
      residual = std::max(0.0, residual - share);
      if (--unfrozen > 0 && m != at) {
        const double next = residual / unfrozen;
        if (next < key) key = shrunk = next;  // rounding can shrink it
      }
    }
    residual_[m] = residual;
    unfrozen_[m] = unfrozen;
    if (shrunk >= 0) PushShare(shrunk, m);
  });
}

// Sorts the smallest `count` entries of sorted_[from, end) into place; returns the end of
// the sorted run.
size_t FlowNetwork::SortNext(size_t from, size_t count) {
  const auto first = sorted_.begin() + static_cast<std::ptrdiff_t>(from);
  const size_t end = std::min(sorted_.size(), from + count);
  const auto last = sorted_.begin() + static_cast<std::ptrdiff_t>(end);
  if (last != sorted_.end()) std::nth_element(first, last, sorted_.end(), Before());
  std::sort(first, last, Before());
  return end;
}

void FlowNetwork::PushShare(double share, int link) {
  heap_key_[link] = share;
  heap_.push_back({share, link});
  std::push_heap(heap_.begin(), heap_.end(), After());
}

SimTime FlowNetwork::FinishTime(const Flow& f) const {
  // Rounded up to a whole picosecond, so that the flow has surely finished then.
  return f.since +
         SimTime::Picoseconds(static_cast<int64_t>(std::ceil(f.remaining / f.rate * 1e12)));
}

void FlowNetwork::Settle(Simulator& sim) {
  settle_pending_ = false;
  const SimTime now = sim.Now();
  CollectComponent();
  // Bring the component's flows to `now` at their old rates.
  for (int f : comp_flows_) {
    Flow& flow = flows_[f];
    const double moved = std::min(flow.remaining, flow.rate * (now - flow.since).seconds());
    flow.remaining -= moved;
    flow.since = now;
    if (moved == 0) continue;  // a flow that starts now (adding +0 changes no sum)
    ForEachCrossing(flow, [&](int l, uint32_t count) {
      for (uint32_t k = 0; k < count; ++k) links_[l].bytes += moved;
    });
  }
  FillRates();
  for (int f : comp_flows_) {
    Flow& flow = flows_[f];
    ++flow.version;
    completions_.push_back({FinishTime(flow), f, flow.version});
    std::push_heap(completions_.begin(), completions_.end(),
                   [](const Completion& a, const Completion& b) {
                     return LaterCompletion(a.at, a.flow, b.at, b.flow);
                   });
    flow_mark_[f] = 0;
  }
  for (int l : comp_links_) {
    links_[l].mark = false;
    if (observer_ && links_[l].watched) {
      const size_t w = std::find(watched_.begin(), watched_.end(), l) - watched_.begin();
      const double rate = LinkRate(l);
      if (rate != watched_rate_[w]) observer_(l, now, rate);
      watched_rate_[w] = rate;
    }
  }
  ScheduleCompletion(sim);
}

void FlowNetwork::ScheduleCompletion(Simulator& sim) {
  auto later = [](const Completion& a, const Completion& b) {
    return LaterCompletion(a.at, a.flow, b.at, b.flow);
  };
  // Drop invalidated entries at the top.
  while (!completions_.empty()) {
    const Completion& top = completions_.front();
    const Flow& f = flows_[top.flow];
    if (f.alive && f.version == top.version) break;
    std::pop_heap(completions_.begin(), completions_.end(), later);
    completions_.pop_back();
  }
  const SimTime next = completions_.empty() ? SimTime::Max() : completions_.front().at;
  if (next == completion_at_) return;
  if (completion_at_ != SimTime::Max()) sim.Cancel(completion_event_);
  completion_at_ = next;
  if (next != SimTime::Max()) {
    completion_event_ = sim.ScheduleAt(next, [this, &sim] { OnCompletion(sim); });
  }
}

void FlowNetwork::OnCompletion(Simulator& sim) {
  completion_at_ = SimTime::Max();
  const SimTime now = sim.Now();
  auto later = [](const Completion& a, const Completion& b) {
    return LaterCompletion(a.at, a.flow, b.at, b.flow);
  };
  std::vector<std::function<void()>> finished;  // the scratch's storage, kept between calls
  finished.swap(finished_scratch_);
  while (!completions_.empty() && completions_.front().at <= now) {
    const Completion top = completions_.front();
    std::pop_heap(completions_.begin(), completions_.end(), later);
    completions_.pop_back();
    Flow& f = flows_[top.flow];
    if (!f.alive || f.version != top.version) continue;
    ForEachCrossing(f, [&](int l, uint32_t count) {
      LinkState& link = links_[l];
      for (uint32_t k = 0; k < count; ++k) link.bytes += f.remaining;
      FlowList& list = link.flows;
      LinkFlow* entry = std::find_if(list.begin(), list.end(),
                                     [&top](const LinkFlow& e) { return e.flow == top.flow; });
      *entry = list.back();
      list.pop_back();
      link.crossings -= count;
      // A link left empty changes no other flow's rate: only a watched one needs a settle
      // (to sample its rate of 0). One the flow crossed more than once was left with
      // entries (its own) after the first crossing's removal, so it settles.
      if (link.flows.empty()) {
        link.busy_s += (now - link.busy_since).seconds();
        if (link.watched || count > 1) Touch(l);
      } else {
        Touch(l);
      }
    });
    f.alive = false;
    f.rate = 0;
    --live_;
    finished.push_back(std::move(f.on_done));
    free_slots_.push_back(top.flow);
  }
  if (!dirty_links_.empty() && !settle_pending_) {
    Settle(sim);  // now, not in an event: nothing else changes before the callbacks
  } else {
    ScheduleCompletion(sim);
  }
  for (auto& done : finished) {
    if (done) done();
  }
  finished.clear();
  finished_scratch_.swap(finished);
}

}  // namespace meshsim

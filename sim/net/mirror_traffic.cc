#include "sim/net/mirror_traffic.h"

#include <algorithm>

#include "sim/core/huge_pages.h"

namespace meshsim {

NearMirrors::NearMirrors(size_t links) {
  ReserveHuge(near_, links);  // first touched 2 MiB at a time (huge_pages.h)
  ReserveHuge(waiting_, links);
  ReserveHuge(counted_bytes_, links);
  ReserveHuge(counted_busy_s_, links);
  near_.assign(links, 0);
  waiting_.assign(links, -1);
  counted_bytes_.assign(links, 0);
  counted_busy_s_.assign(links, 0);
}

void NearMirrors::MarkNear(int link) {
  if (near_[link]) return;
  near_[link] = 1;
  ++near_count_;
  int w = waiting_[link];
  while (w >= 0) {
    Waiter& waiter = WaiterAt(w);
    waiter.coflow->crosses_near = true;
    const int next = waiter.next;
    waiter.next = free_waiter_;
    free_waiter_ = w;
    w = next;
  }
  waiting_[link] = -1;
}

bool NearMirrors::ScanNear(const Coflow& f) const {
  const std::span<const int> route = f.route();
  return f.marked_near ||
         std::any_of(route.begin(), route.end(), [this](int l) { return near_[l] != 0; });
}

void NearMirrors::Meet(const Coflow& f) {
  if (f.met) return;
  f.met = true;
  f.crosses_near = ScanNear(f);
  if (f.crosses_near) return;
  for (int l : f.route()) {
    int w = free_waiter_;
    if (w >= 0) {
      free_waiter_ = WaiterAt(w).next;
    } else {
      w = waiters_++;
      if (w % kBlock == 0) blocks_.push_back(std::make_unique_for_overwrite<Waiter[]>(kBlock));
    }
    WaiterAt(w) = {&f, waiting_[l]};
    waiting_[l] = w;
  }
}

void NearMirrors::MarkNear(const Coflow& f) {
  if (f.marked_near) return;
  f.marked_near = true;
  for (int l : f.route()) MarkNear(l);
}

std::span<const Coflow* const> NearMirrors::Run(const Plans& plans, Split* split, size_t index) {
  if (plans.empty()) return {};
  if (split->near_count != near_count_) Update(plans, split);
  if (index >= split->phases.size()) return {};
  Phase& phase = split->phases[index];
  if (!phase.counted.empty()) {
    ++phase.runs;
    ++changes_;
  }
  return phase.simulated;
}

void NearMirrors::Finished(Split* split, size_t index, double data_s) {
  ++changes_;
  if (index < split->phases.size()) split->phases[index].busy_s += data_s;
}

void NearMirrors::Update(const Plans& mirrors, Split* split) {
  ++changes_;
  if (split->near_count == SIZE_MAX) {  // first: every coflow counted, then sorted out below
    split->phases.assign(mirrors.size(), Phase{});
    for (size_t i = 0; i < mirrors.size(); ++i) {
      for (const Coflow& f : mirrors[i]) {
        if (split->remembered) Meet(f);
        split->phases[i].counted.push_back(&f);
      }
    }
  }
  // Simulated coflows stay simulated (near links stay near). Until a pass makes no link
  // near: a coflow that now crosses a near link is simulated from now on (what it was
  // counted for so far goes to its links), and its links become near.
  do {
    split->near_count = near_count_;
    for (Phase& p : split->phases) {
      // A stable partition (every coflow tested before any link is marked), in place.
      moved_.clear();
      size_t kept = 0;
      for (const Coflow* f : p.counted) {
        if (split->remembered ? CrossesNear(*f) : ScanNear(*f)) {
          moved_.push_back(f);
        } else {
          p.counted[kept++] = f;
        }
      }
      p.counted.resize(kept);
      for (const Coflow* f : moved_) {
        AddCounted(*f, p.runs, p.busy_s);
        MarkNear(*f);
        p.simulated.push_back(f);
      }
    }
  } while (split->near_count != near_count_);
}

void NearMirrors::AddCounted(const Coflow& f, int runs, double busy_s) {
  if (runs == 0 && busy_s == 0) return;
  for (int l : f.route()) {
    counted_bytes_[l] += runs * f.bytes;
    counted_busy_s_[l] += busy_s;
  }
}

void NearMirrors::Flush(Split* split) {
  ++changes_;
  for (Phase& p : split->phases) {
    for (const Coflow* f : p.counted) AddCounted(*f, p.runs, p.busy_s);
    p.runs = 0;
    p.busy_s = 0;
  }
}

void NearMirrors::Total() const {
  if (totaled_ == changes_) return;
  totaled_ = changes_;
  total_bytes_ = counted_bytes_;
  total_busy_s_ = counted_busy_s_;
  for (const Split* split : splits_) {
    for (const Phase& p : split->phases) {
      if (p.runs == 0 && p.busy_s == 0) continue;
      for (const Coflow* f : p.counted) {
        for (int l : f->route()) {
          total_bytes_[l] += p.runs * f->bytes;
          total_busy_s_[l] += p.busy_s;
        }
      }
    }
  }
}

const std::vector<double>& NearMirrors::CountedBytes() const {
  Total();
  return total_bytes_;
}

const std::vector<double>& NearMirrors::CountedBusy() const {
  Total();
  return total_busy_s_;
}

}  // namespace meshsim

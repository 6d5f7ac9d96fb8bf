// Simulated time: a strong integer count of picoseconds.
//
// Range: int64 picoseconds cover about +/-106 days, far beyond one training step.
// There is no implicit conversion from floating point; use the named constructors.
#pragma once

#include <cassert>
#include <cmath>
#include <compare>
#include <cstdint>
#include <limits>

namespace meshsim {

class SimTime {
 public:
  constexpr SimTime() = default;

  static constexpr SimTime Picoseconds(int64_t ps) { return SimTime(ps); }
  static constexpr SimTime Zero() { return SimTime(0); }
  static constexpr SimTime Max() { return SimTime(std::numeric_limits<int64_t>::max()); }
  // Rounds to the nearest picosecond. Precondition: finite, non-negative, in range.
  static SimTime Seconds(double s) {
    assert(std::isfinite(s) && s >= 0.0 && s < 9.2e6);
    return SimTime(static_cast<int64_t>(std::llround(s * 1e12)));
  }
  static SimTime Microseconds(double us) { return Seconds(us * 1e-6); }

  constexpr int64_t picoseconds() const { return ps_; }
  constexpr double seconds() const { return static_cast<double>(ps_) * 1e-12; }
  constexpr double microseconds() const { return static_cast<double>(ps_) * 1e-6; }

  constexpr auto operator<=>(const SimTime&) const = default;
  constexpr SimTime operator+(SimTime o) const { return SimTime(ps_ + o.ps_); }
  constexpr SimTime operator-(SimTime o) const { return SimTime(ps_ - o.ps_); }
  constexpr SimTime& operator+=(SimTime o) {
    ps_ += o.ps_;
    return *this;
  }
  constexpr SimTime& operator-=(SimTime o) {
    ps_ -= o.ps_;
    return *this;
  }

 private:
  constexpr explicit SimTime(int64_t ps) : ps_(ps) {}
  int64_t ps_ = 0;
};

}  // namespace meshsim

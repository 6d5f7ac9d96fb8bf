// RoundToInt64 (sim/core/round.h) gives std::llround's result, bit for bit, on the values a
// replay rounds (picoseconds) and on the halves and near-halves where a rounding shortcut
// (adding 0.5, say) goes wrong.
#include "sim/core/round.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace meshsim {
namespace {

TEST(RoundToInt64, HalvesGoAwayFromZero) {
  EXPECT_EQ(RoundToInt64(0.5), 1);
  EXPECT_EQ(RoundToInt64(-0.5), -1);
  EXPECT_EQ(RoundToInt64(1.5), 2);
  EXPECT_EQ(RoundToInt64(2.5), 3);
  EXPECT_EQ(RoundToInt64(-2.5), -3);
  EXPECT_EQ(RoundToInt64(0.0), 0);
  EXPECT_EQ(RoundToInt64(-0.0), 0);
  // The largest double below one half: adding 0.5 would round it up to 1.
  EXPECT_EQ(RoundToInt64(std::nextafter(0.5, 0.0)), 0);
  EXPECT_EQ(RoundToInt64(std::nextafter(-0.5, 0.0)), 0);
}

TEST(RoundToInt64, MatchesLlround) {
  std::vector<double> xs = {0.49999999999999994,
                            4503599627370495.5,
                            4503599627370496.0,
                            9007199254740993.0,
                            1e15 + 0.5,
                            -1e15 - 0.5,
                            1.55e14,
                            4.6e18};
  for (int e = -3; e < 62; ++e) {
    const double p = std::ldexp(1.0, e);
    for (double x : {p, p + 0.5, p - 0.5, std::nextafter(p + 0.5, 0.0),
                     std::nextafter(p + 0.5, 1e300), std::nextafter(p, 0.0)}) {
      xs.push_back(x);
      xs.push_back(-x);
    }
  }
  std::mt19937_64 rng(14);
  for (int i = 0; i < 200'000; ++i) {
    // Random bits of doubles below 2^62, and random picosecond times with fractions.
    double x = std::bit_cast<double>((rng() & 0x3fffffffffffffffull) % 0x43d0000000000000ull);
    xs.push_back((i & 1) ? x : -x);
    xs.push_back(static_cast<double>(rng() % (uint64_t{1} << 50)) *
                 std::ldexp(static_cast<double>(rng() % 1024), -10));
  }
  for (double x : xs) {
    if (!std::isfinite(x) || std::fabs(x) >= 9.2e18) continue;
    ASSERT_EQ(RoundToInt64(x), std::llround(x)) << std::hexfloat << x;
  }
}

}  // namespace
}  // namespace meshsim

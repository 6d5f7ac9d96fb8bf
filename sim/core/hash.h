// Integer hashing shared by the layers above: MurmurHash3's 64-bit finalizer.
#pragma once

#include <cstdint>

namespace meshsim {

// MurmurHash3's fmix64 (Austin Appleby, MurmurHash3.cpp, public domain): every input bit
// moves every output bit, so keys that differ only in high bits (a double's exponent, a
// flow's upper id bits) spread over the low bits that pick a slot or a path.
constexpr uint64_t Fmix64(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdull;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ull;
  return k ^ (k >> 33);
}

}  // namespace meshsim

// Numeric formats of weights and activations.
#pragma once

#include <cstdint>
#include <string_view>

namespace meshsim {

enum class Dtype : uint8_t { kBf16, kFp16, kFp8 };

// Bytes per element of activations and low-precision weights.
constexpr double BytesPerElement(Dtype d) { return d == Dtype::kFp8 ? 1.0 : 2.0; }

constexpr std::string_view DtypeName(Dtype d) {
  switch (d) {
    case Dtype::kBf16:
      return "bf16";
    case Dtype::kFp16:
      return "fp16";
    case Dtype::kFp8:
      return "fp8";
  }
  return "?";
}

}  // namespace meshsim

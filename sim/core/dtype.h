// Numeric formats of weights and activations, and the FP8 scaling recipes of NVIDIA
// Transformer Engine (TE).
#pragma once

#include <cstdint>
#include <string_view>

namespace meshsim {

// kFp8: FP8 training as Transformer Engine runs it. TE's linear layers run their GEMMs in
// FP8 (inputs cast to FP8, FP32 accumulation, BF16 outputs); attention, softmax, norms,
// activations functions and the output layer stay BF16, and so do the activations that
// flow between them. Master weights and optimizer states are as in BF16 training.
enum class Dtype : uint8_t { kBf16, kFp16, kFp8 };

// Bytes per element of activations: what element-wise kernels read and write, what is
// stored for the backward pass and sent between pipeline stages. FP8 training keeps
// activations in BF16 between its FP8 GEMMs (2 bytes).
constexpr double BytesPerElement(Dtype /*d*/) { return 2.0; }

// Bytes per element of the operands of the GEMMs of linear layers (1 in FP8).
constexpr double GemmOperandBytes(Dtype d) { return d == Dtype::kFp8 ? 1.0 : 2.0; }

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

// How TE scales FP8 tensors (transformer_engine.common.recipe):
//  - kDelayed (DelayedScaling): one scale per tensor from the amax history of earlier
//    steps; the cast kernel records the amax as it casts (one pass).
//  - kCurrent (Float8CurrentScaling): one scale per tensor from its own amax: an amax
//    kernel reads the tensor, then the cast kernel reads it again.
//  - kBlockwise (Float8BlockScaling, DeepSeek-V3's): one scale per 1x128 block of
//    activations and gradients and per 128x128 block of weights.
//  - kMxfp8 (MXFP8BlockScaling, OCP microscaling): one 8-bit (E8M0) scale per 32
//    consecutive elements; Blackwell's tensor cores apply the scales in hardware.
enum class Fp8Recipe : uint8_t { kDelayed, kCurrent, kBlockwise, kMxfp8 };

constexpr std::string_view Fp8RecipeName(Fp8Recipe r) {
  switch (r) {
    case Fp8Recipe::kDelayed:
      return "delayed";
    case Fp8Recipe::kCurrent:
      return "current";
    case Fp8Recipe::kBlockwise:
      return "blockwise";
    case Fp8Recipe::kMxfp8:
      return "mxfp8";
  }
  return "?";
}

// HBM bytes moved to cast one BF16 element to FP8 before an FP8 GEMM. Each tensor TE casts
// (a GEMM's input X, an output gradient dY, a weight) is needed both row-wise and
// column-wise (forward or dgrad, and wgrad; on Hopper FP8 GEMMs take only the TN layout,
// so the column-wise copy is a transpose: TE's fused cast_transpose kernel, "Handling
// transposes" in TE's performance guide): read 2 bytes, write 1 + 1.
//  - delayed: 4 (the amax is recorded by the cast kernel itself);
//  - current: 6 (an amax kernel reads the tensor first: + 2);
//  - blockwise: 4 + one FP32 scale per 128 elements in each of the two layouts (8 / 128);
//  - mxfp8: 4 + one 1-byte E8M0 scale per 32 elements in each layout (2 / 32).
// `non_tn_gemms`: the GPU's FP8 GEMMs take any layout (Blackwell, sm_100 up to sm_120:
// TE's nvte_is_non_tn_fp8_gemm_supported). Then TE's per-tensor recipes (delayed, current)
// write the row-wise copy only and every GEMM reads it (Float8Quantizer::create_tensor in
// transformer_engine/pytorch/csrc/quantizer.cpp @ NVIDIA/TransformerEngine d0067d0:
// with_transpose = columnwise_usage && !is_non_tn_fp8_gemm_supported): 1 byte less, delayed
// 3 and current 5. Block scales are taken along the rows in one layout and along the
// columns in the other, so blockwise and mxfp8 still write both.
constexpr double Fp8CastBytes(Fp8Recipe r, bool non_tn_gemms = false) {
  const double transpose = non_tn_gemms ? 0.0 : 1.0;
  switch (r) {
    case Fp8Recipe::kDelayed:
      return 3.0 + transpose;
    case Fp8Recipe::kCurrent:
      return 5.0 + transpose;
    case Fp8Recipe::kBlockwise:
      return 4.0 + 8.0 / 128;
    case Fp8Recipe::kMxfp8:
      return 4.0 + 2.0 / 32;
  }
  return 0;
}

// Time of an FP8 GEMM kernel in `r` relative to a per-tensor scaled (delayed or current)
// one of the same shape, inputs already cast. MXFP8: 1.051, TE's GEMM profiling guide
// (docs/examples/gemm_profiling/gemm_profiling.rst @ NVIDIA/TransformerEngine d0067d0,
// "Worked Example: 5B Model on B300", pre-quantized: 7.161 ms per layer for MXFP8 against
// 6.812 ms for FP8 current scaling, fprop + dgrad + wgrad; Blackwell Ultra, the only
// Blackwell it lists: taken for B200 and GB200). Blackwell runs blockwise GEMMs as MXFP8
// ones (the same guide; TE pull request 2157), so on Blackwell blockwise pays the same.
// 1 else (Hopper's blockwise GEMMs are not measured there).
constexpr double Fp8GemmTimeFactor(Fp8Recipe r, bool blackwell) {
  constexpr double kMxfp8 = 7.161 / 6.812;
  if (r == Fp8Recipe::kMxfp8) return kMxfp8;
  if (r == Fp8Recipe::kBlockwise && blackwell) return kMxfp8;
  return 1.0;
}

// Kernels launched per cast: current scaling's amax kernel and cast kernel; one else.
constexpr double Fp8CastKernels(Fp8Recipe r) { return r == Fp8Recipe::kCurrent ? 2.0 : 1.0; }

// What current scaling's amax pass adds to a cast (of Fp8CastBytes and Fp8CastKernels): the
// amax kernel's 2-byte read of the BF16 tensor, one kernel; 0 for the other recipes. A cast
// whose input comes out of a Transformer Engine normalization (LayerNormLinear's norm; TE's
// activations too, which Megatron-Core does not use for its MLPs) skips it: since TE 2.7 the
// norm kernel computes the amax of its BF16 output as it writes it and the cast only reads
// it (quantize_with_amax): transformer_engine/pytorch/csrc/extensions/normalization.cpp,
// "Fuse amax computation into normalization kernel for current scaling", TE commit 51eb6362
// (2025-07-31; activation.cpp: feda5b55, "Fuse amax computation into activation kernel"),
// kept through NVIDIA/TransformerEngine d0067d0 (FUSED_NORM_AMAX_FP8). Megatron-Bridge's
// current-scaling runs use TE 2.9 and later (pyproject.toml @ Megatron-Bridge v0.2.0, 25.11).
constexpr double Fp8AmaxPassBytes(Fp8Recipe r) { return r == Fp8Recipe::kCurrent ? 2.0 : 0.0; }
constexpr double Fp8AmaxPassKernels(Fp8Recipe r) { return r == Fp8Recipe::kCurrent ? 1.0 : 0.0; }

// Bytes per parameter of the FP8 copies of the weights that TE keeps for the whole step
// (cast once per step, on the first micro-batch, and reused): a row-wise and a column-wise
// (transposed) copy of 1 byte each, plus their scales (blockwise: one FP32 per 128 x 128
// block, negligible and not counted; mxfp8: one byte per 32 elements in each layout).
// Kept in addition to the 16-bit weights, which the optimizer step updates.
constexpr double Fp8WeightCopyBytes(Fp8Recipe r) {
  return r == Fp8Recipe::kMxfp8 ? 2.0 + 2.0 / 32 : 2.0;
}

}  // namespace meshsim

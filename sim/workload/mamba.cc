#include "sim/workload/mamba.h"

#include <algorithm>
#include <cassert>

namespace meshsim {
namespace {

// Element-wise traffic of the pre-norm and residual kernels, in s*b*h-units (as the
// attention and MLP blocks count them, transformer.cc).
constexpr double kNormResidualTrafficSbh = 11.0;

double D(int64_t v) { return static_cast<double>(v); }

}  // namespace

double MambaLayerParams(const ModelSpec& m) {
  const double h = D(m.hidden), inner = D(m.MambaInner()), conv = D(m.MambaConvDim());
  return h + h * D(m.MambaInProjDim()) + conv * (m.mamba_conv_kernel + 1) + 3.0 * m.mamba_heads +
         inner + inner * h;
}

double MambaLayerParamsPerRank(const ModelSpec& m, int tp) {
  const double h = D(m.hidden);
  return (MambaLayerParams(m) - h) / tp + h;
}

double MambaScanFlopsPerToken(const ModelSpec& m, int64_t seq) {
  const double q = D(std::min(m.mamba_chunk, seq)), n = D(m.mamba_state);
  const double p = D(m.mamba_head_dim), heads = m.mamba_heads, groups = m.mamba_groups;
  return 2 * q * (groups * n + heads * p) + 4 * heads * n * p;
}

BlockCost MambaBlockCost(const ModelSpec& m, const LayerShape& shape) {
  assert(m.mamba_heads % shape.tp == 0 && m.mamba_groups % shape.tp == 0);
  const double tokens = D(shape.seq) * D(shape.micro_batch), t = shape.tp;
  const double h = D(m.hidden), inner = D(m.MambaInner()), conv = D(m.MambaConvDim());
  const double in_proj = D(m.MambaInProjDim()), elt = BytesPerElement(shape.dtype);
  const double fp8_saving = elt - GemmOperandBytes(shape.dtype);
  const double sp = shape.sequence_parallel ? t : 1.0;
  BlockCost b;
  // Norm, in_proj, conv1d, five SSD kernels (cumsum, chunk states, state passing, C B^T,
  // chunk scan), gated norm, out_proj, residual.
  b.fwd_kernels = 11;
  b.weight_kernels = 2;
  b.fwd_flops =
      tokens * (2 * h * in_proj + MambaScanFlopsPerToken(m, shape.seq) + 2 * inner * h) / t;
  // conv1d reads x, B, C and writes them; the scan reads them and writes y; the gated
  // norm reads y and z and writes its output.
  b.fwd_bytes = kNormResidualTrafficSbh * tokens * h / sp +
                tokens * elt * (2 * conv + conv + inner + 3 * inner) / t;
  b.tp_comm_bytes = tokens * h * elt;
  const double replicated = tokens * h * (2 * elt - fp8_saving) / sp;
  const double split =
      tokens * (elt * (in_proj + conv + 2 * inner) - fp8_saving * inner + 4.0 * m.mamba_heads) / t;
  const double none = replicated + split;
  if (shape.recompute == Recompute::kFull) {
    b.stored_act_bytes = 2 * tokens * h / sp;
    b.transient_act_bytes = none;
    b.recompute_flops = b.fwd_flops;
    b.recompute_bytes = b.fwd_bytes;
    b.recompute_kernels = b.fwd_kernels;
  } else {
    b.stored_act_bytes = none;
  }
  return b;
}

}  // namespace meshsim

#include "sim/engine/shape_params.h"

#include <algorithm>

namespace meshsim {

ShapeModelParams GpuShapeParams(const ClusterSpec& cluster, Dtype dtype) {
  const GpuSpec& gpu = cluster.gpu;
  const EfficiencySpec& eff = cluster.efficiency;
  const bool fp8 = dtype == Dtype::kFp8;
  ShapeModelParams p;
  // FP8 training: only the linear layers' GEMMs run in FP8; the rest stays BF16.
  p.peak_flops_per_s = gpu.PeakTflops(fp8 ? Dtype::kBf16 : dtype) * 1e12;
  if (fp8) {
    p.fp8.peak_flops_per_s = gpu.PeakTflops(Dtype::kFp8) * 1e12;
    p.fp8.matmul_efficiency = eff.MatmulFp8();
  }
  p.hbm_bytes_per_s = gpu.hbm_gbps * 1e9;
  p.bytes_per_element = BytesPerElement(dtype);
  p.matmul_efficiency = eff.matmul;
  p.memory_efficiency = eff.memory;
  p.kernel_overhead_s = eff.kernel_overhead_us * 1e-6;
  p.grouped_gemm_efficiency = eff.grouped_gemm;
  p.gmm_efficiency = eff.gmm;
  p.fused_grouped_gemm_efficiency = eff.fused_grouped_gemm;
  static_assert(static_cast<int>(FusedGroupedMlpSpec::kKernels) == kFusedMlpKernels);
  const FusedGroupedMlpSpec& fused = gpu.fused_grouped_mlp;
  p.fused_mlp.experts = fused.experts;
  p.fused_mlp.tokens_per_expert = fused.tokens_per_expert;
  p.fused_mlp.hidden = fused.hidden;
  p.fused_mlp.ffn = fused.ffn;
  std::copy(fused.efficiency.begin(), fused.efficiency.end(), p.fused_mlp.efficiency.begin());
  p.sms = gpu.sms;
  p.tile_m = gpu.gemm_tile_m;
  p.tile_n = gpu.gemm_tile_n;
  p.k_half = gpu.gemm_k_half;
  p.attention.seq_lens = gpu.flash_attention.seq_lens;
  p.attention.efficiency = gpu.flash_attention.efficiency;
  p.attention.backward_factor = gpu.flash_attention.backward_factor;
  p.attention.causal_factor = gpu.flash_attention.causal_factor;
  p.attention.causal_forward = gpu.flash_attention.causal;
  p.attention.causal_backward = gpu.flash_attention.causal_backward;
  const FlashAttentionSpec::Window& window = gpu.flash_attention.window;
  p.attention.band_keys = window.keys;
  p.attention.band_forward = window.forward;
  p.attention.band_backward = window.backward;
  p.attention.fp8_band_backward_causal = window.fp8_backward_full_causal;
  for (const GemmMeasurement& g : eff.gemm_table) {
    const GemmShape shape{g.m, g.n, g.k, g.batch};
    if (g.dtype == dtype && !fp8) p.gemm_table.Add(shape, g.tflops);
    if (fp8 && g.dtype == Dtype::kBf16) p.gemm_table.Add(shape, g.tflops);
    if (fp8 && g.dtype == Dtype::kFp8) p.fp8.gemm_table.Add(shape, g.tflops);
  }
  return p;
}

ShapeModelParams ExperimentShapeParams(const Experiment& e) {
  const bool fp8 = e.training.dtype == Dtype::kFp8;
  ShapeModelParams p = GpuShapeParams(e.cluster, e.training.dtype);
  if (fp8) {
    const bool blackwell = e.cluster.gpu.architecture == GpuArch::kBlackwell;
    p.fp8.matmul_efficiency /= Fp8GemmTimeFactor(e.training.fp8_recipe, blackwell);
    p.fp8.cast_bytes_per_element = Fp8CastBytes(e.training.fp8_recipe, blackwell);
    p.fp8.cast_kernels = Fp8CastKernels(e.training.fp8_recipe);
    // A LayerNormLinear's norm computes its output's amax, unless cuDNN runs the norms.
    if (!e.training.cudnn_norm) {
      p.fp8.amax_pass_bytes_per_element = Fp8AmaxPassBytes(e.training.fp8_recipe);
      p.fp8.amax_pass_kernels = Fp8AmaxPassKernels(e.training.fp8_recipe);
    }
  }
  p.fused_mlp_held_sms =
      e.plan.framework_options.fused_grouped_mlp_cluster_margin * kFusedMlpClusterSms;
  return p;
}

}  // namespace meshsim

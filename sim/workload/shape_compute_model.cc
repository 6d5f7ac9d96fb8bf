#include "sim/workload/shape_compute_model.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace meshsim {

double AttentionEfficiency::Interpolate(const std::vector<double>& curve, double seq) const {
  assert(!seq_lens.empty() && seq_lens.size() == curve.size() && seq > 0);
  if (seq <= seq_lens.front()) return curve.front();
  if (seq >= seq_lens.back()) return curve.back();
  size_t i = 1;
  while (seq_lens[i] < seq) ++i;
  const double x0 = std::log2(seq_lens[i - 1]), x1 = std::log2(seq_lens[i]);
  const double w = (std::log2(seq) - x0) / (x1 - x0);
  return curve[i - 1] + w * (curve[i] - curve[i - 1]);
}

double AttentionEfficiency::Band(double keys, bool backward) const {
  const double factor = backward ? backward_factor : 1;
  const double curve_keys = seq_lens.front();
  if (band_keys <= 0 || keys >= curve_keys) return Forward(keys) * factor;
  const double measured = backward ? band_backward : band_forward;
  if (keys <= band_keys || band_keys >= curve_keys) return measured;
  const double w =
      (std::log2(keys) - std::log2(band_keys)) / (std::log2(curve_keys) - std::log2(band_keys));
  return measured + w * (Forward(curve_keys) * factor - measured);
}

double AttentionEfficiency::HeadDimFactor(double head_dim) {
  constexpr double kSoftmaxFlopsPerDim = 20;  // 80 FLOP-equivalents per score / 4
  return (1 + kSoftmaxFlopsPerDim / 128) / (1 + kSoftmaxFlopsPerDim / head_dim);
}

std::optional<double> GemmTable::Tflops(const GemmShape& g) const {
  const auto it = rows_.find(Key(g));
  if (it == rows_.end()) return std::nullopt;
  return it->second;
}

GemmShape FusedMlpMeasurement::Shape(FusedMlpKernel kernel) const {
  const double t = tokens_per_expert, d = hidden, f = ffn;
  GemmShape g;
  switch (kernel) {
    case kFusedFc1Fwd:
      g = {t, 2 * f, d};
      break;
    case kFusedFc2Fwd:
      g = {t, d, f};
      break;
    case kFusedFc2Dgrad:
      g = {t, f, d};
      break;
    case kFusedFc1Dgrad:
      g = {t, d, 2 * f};
      break;
    case kFusedFc1Wgrad:
      g = {d, 2 * f, t};
      break;
    case kFusedFc2Wgrad:
      g = {f, d, t};
      break;
    default:
      assert(false);
  }
  g.batch = experts;
  g.fp8 = true;
  return g;
}

ShapeComputeModel::ShapeComputeModel(ShapeModelParams params) : p_(std::move(params)) {
  if (!p_.fused_mlp.Measured() || !p_.fp8.On()) return;
  const double peak = p_.fp8.peak_flops_per_s;
  for (int i = 0; i < kFusedMlpKernels; ++i) {
    const auto kernel = static_cast<FusedMlpKernel>(i);
    const GemmShape g = p_.fused_mlp.Shape(kernel);
    const double measured_s = g.Flops() / (p_.fused_mlp.efficiency[i] * peak);
    fused_efficiency_[i] = ComputeSeconds(g, peak, 1) / measured_s;
  }
}

SimTime ShapeComputeModel::Duration(const KernelWork& work) const {
  if (work.flops == 0 && work.bytes == 0) return SimTime::Zero();
  return SimTime::Seconds(work.flops / (p_.peak_flops_per_s * p_.matmul_efficiency) +
                          work.bytes / (p_.hbm_bytes_per_s * p_.memory_efficiency) +
                          work.kernels * p_.kernel_overhead_s);
}

SimTime ShapeComputeModel::ShapedDuration(const KernelWork& work,
                                          const KernelShapes& shapes) const {
  double kernels = 0;
  for (const GemmShape& g : shapes.gemms) kernels += GemmSeconds(g) + CastSeconds(g);
  for (const AttentionShape& a : shapes.attention) kernels += AttentionSeconds(a);
  return SimTime::Seconds(shapes.fraction * kernels +
                          work.bytes / (p_.hbm_bytes_per_s * p_.memory_efficiency) +
                          work.kernels * p_.kernel_overhead_s);
}

double ShapeComputeModel::TiledSeconds(const GemmShape& g, double tile_m, double tile_n,
                                       double peak, double efficiency) const {
  // A dimension smaller than the tile gets a tile cut to it (in steps of 16, the tensor
  // cores' granularity), as libraries choose narrow kernels for skinny GEMMs.
  constexpr double kStep = 16;
  tile_m = std::min(tile_m, std::ceil(g.m / kStep) * kStep);
  tile_n = std::min(tile_n, std::ceil(g.n / kStep) * kStep);
  const double sms = SmsOf(g);
  const double tiles = std::ceil(g.m / tile_m) * std::ceil(g.n / tile_n) * g.batch;
  // Fewer tiles than SMs: k is split over the idle SMs (split-k), keeping each slice at
  // least k_half deep.
  double splits = 1;
  if (tiles < sms) {
    splits = std::max(1.0, std::min(std::floor(sms / tiles), std::floor(g.k / p_.k_half)));
  }
  const double k = g.k / splits;
  const double waves = std::ceil(tiles * splits / sms);
  const double per_sm_flops = peak / p_.sms * efficiency * k / (k + p_.k_half);
  return waves * 2 * tile_m * tile_n * k / per_sm_flops;
}

double ShapeComputeModel::SmsOf(const GemmShape& g) const {
  switch (g.fused_kernel) {
    case kFusedFc1Fwd:
    case kFusedFc2Fwd:
    case kFusedFc2Dgrad:
    case kFusedFc1Dgrad:
      return p_.sms - p_.fused_mlp_held_sms;
    default:
      return p_.sms;
  }
}

double ShapeComputeModel::ComputeSeconds(const GemmShape& g, double peak, double efficiency) const {
  return std::min(TiledSeconds(g, p_.tile_m, p_.tile_n, peak, efficiency),
                  TiledSeconds(g, p_.tile_n, p_.tile_m, peak, efficiency));
}

// `streams` like GEMMs at once: their tiles share the waves, each GEMM takes its share of
// the time of all of them (an upper bound on its time alone is ComputeSeconds).
double ShapeComputeModel::SharedComputeSeconds(const GemmShape& g, double peak,
                                               double efficiency) const {
  if (g.streams <= 1) return ComputeSeconds(g, peak, efficiency);
  GemmShape together = g;
  together.batch *= g.streams;
  together.streams = 1;
  return ComputeSeconds(together, peak, efficiency) / g.streams;
}

double ShapeComputeModel::RateScale(const GemmShape& g) const {
  if (g.gmm_rate) return p_.gmm_efficiency;
  if (g.launches_per_batch) return p_.grouped_gemm_efficiency;
  if (g.grouped_rate) return p_.fused_grouped_gemm_efficiency;
  return 1;
}

double ShapeComputeModel::GemmSeconds(const GemmShape& g) const {
  if (g.Flops() == 0) return 0;
  if (g.launches_per_batch) {  // batch separate GEMMs, each timed alone (or with its like)
    GemmShape one = g;
    one.batch = 1;
    one.launches_per_batch = false;
    return g.batch * KernelSeconds(one, RateScale(g));
  }
  return KernelSeconds(g, RateScale(g));
}

double ShapeComputeModel::KernelSeconds(const GemmShape& g, double rate_scale) const {
  const bool fp8 = g.fp8 && p_.fp8.On();
  const bool measured_fused = fp8 && g.fused_kernel >= 0 && g.fused_kernel < kFusedMlpKernels &&
                              fused_efficiency_[g.fused_kernel] > 0;
  const GemmTable& table = fp8 ? p_.fp8.gemm_table : p_.gemm_table;
  if (const std::optional<double> tflops = table.Tflops(g); tflops && !measured_fused) {
    return g.Flops() / (*tflops * 1e12 * rate_scale);
  }
  const double peak = fp8 ? p_.fp8.peak_flops_per_s : p_.peak_flops_per_s;
  double efficiency = rate_scale * (fp8 && p_.fp8.matmul_efficiency >= 0 ? p_.fp8.matmul_efficiency
                                                                         : p_.matmul_efficiency);
  if (measured_fused) {
    efficiency = rate_scale * fused_efficiency_[g.fused_kernel];
    if (g.fused_dbias) efficiency /= kFusedDbiasSlowdown;
  }
  const double compute =
      std::min(ComputeSeconds(g, peak, efficiency), SharedComputeSeconds(g, peak, efficiency));
  // FP8: 1-byte A and B, a 16-bit C.
  const double bytes = fp8 ? ((g.m * g.k + g.k * g.n) + g.m * g.n * p_.bytes_per_element) * g.batch
                           : (g.m * g.k + g.k * g.n + g.m * g.n) * g.batch * p_.bytes_per_element;
  const double memory = bytes / (p_.hbm_bytes_per_s * p_.memory_efficiency);
  return std::max(compute, memory);
}

double ShapeComputeModel::CastSeconds(const GemmShape& g) const {
  if (!g.casts_a || !g.fp8 || !p_.fp8.On()) return 0;
  const double skipped_bytes = g.amax_fused ? p_.fp8.amax_pass_bytes_per_element : 0;
  const double skipped_kernels = g.amax_fused ? p_.fp8.amax_pass_kernels : 0;
  const double bytes = g.m * g.k * g.batch * (p_.fp8.cast_bytes_per_element - skipped_bytes);
  return bytes / (p_.hbm_bytes_per_s * p_.memory_efficiency) +
         (p_.fp8.cast_kernels - skipped_kernels) * p_.kernel_overhead_s;
}

bool ShapeComputeModel::Fp8BandBackwardCausal(const AttentionShape& a) const {
  return a.band && a.backward && a.fp8 && p_.attention.fp8_band_backward_causal > 0 &&
         a.band_seq > a.seq_kv;
}

double ShapeComputeModel::AttentionKernelFlops(const AttentionShape& a) const {
  if (Fp8BandBackwardCausal(a)) {
    // The causal triangle of band_seq keys: half the square, 2.5 forward passes.
    AttentionShape triangle = a;
    triangle.seq_kv = a.band_seq;
    return 1.25 * 0.5 * triangle.Flops();
  }
  if (a.band) return a.backward ? 1.25 * a.Flops() : a.Flops();
  double work = a.Flops();
  if (a.backward) work *= 1.25;  // 2.5 forward passes of FLOPs, counted as 2
  if (a.causal) work *= 0.5;
  return work;
}

double ShapeComputeModel::BandSeconds(const AttentionShape& a) const {
  const AttentionEfficiency& e = p_.attention;
  const double head = AttentionEfficiency::HeadDimFactor(a.head_dim);
  const double work = AttentionKernelFlops(a);
  if (Fp8BandBackwardCausal(a)) {
    return work / (p_.peak_flops_per_s * std::min(1.0, e.fp8_band_backward_causal * head));
  }
  return work / (p_.peak_flops_per_s * std::min(1.0, e.Band(a.seq_kv, a.backward) * head));
}

double ShapeComputeModel::AttentionSeconds(const AttentionShape& a) const {
  if (a.Flops() == 0) return 0;
  if (a.band) return BandSeconds(a);
  const AttentionEfficiency& e = p_.attention;
  const double head = AttentionEfficiency::HeadDimFactor(a.head_dim);
  const bool measured_causal = a.causal && e.CausalMeasured();
  double efficiency =
      measured_causal ? e.Causal(a.seq_kv, a.backward) * head : e.Forward(a.seq_kv) * head;
  if (a.backward && !measured_causal) efficiency *= e.backward_factor;
  if (a.causal && !measured_causal) efficiency *= e.causal_factor;
  return AttentionKernelFlops(a) / (p_.peak_flops_per_s * std::min(1.0, efficiency));
}

}  // namespace meshsim

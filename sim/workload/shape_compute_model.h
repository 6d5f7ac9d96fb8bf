// Kernel times from kernel shapes (kernel_shapes.h): GEMMs by tile and wave quantization
// over the GPU's SMs with a memory-bound roofline, fused attention by a measured
// FlashAttention efficiency curve, element-wise kernels by HBM bandwidth, and a fixed
// launch overhead per kernel. An optional table of measured GEMM throughputs overrides
// the GEMM model where it has the exact shape.
#pragma once

#include <array>
#include <map>
#include <optional>
#include <vector>

#include "sim/workload/compute_model.h"
#include "sim/workload/kernel_shapes.h"

namespace meshsim {

// FlashAttention's forward efficiency (fraction of the dense peak) at head_dim 128,
// non-causal, by the number of keys per query, as measured with FlashAttention's own
// benchmark; and how the backward, causal masking and other head dims change it.
struct AttentionEfficiency {
  std::vector<double> seq_lens;    // ascending, > 0
  std::vector<double> efficiency;  // one per seq_lens entry, in (0, 1]
  double backward_factor = 1;      // backward efficiency / forward efficiency
  double causal_factor = 1;        // causal efficiency / non-causal efficiency
  // Sliding-window bands as measured (FlashAttentionSpec::Window): at band_keys keys per
  // query, band_forward and band_backward at head_dim 128; band_keys 0: not measured.
  // fp8_band_backward_causal > 0: an FP8 backward computes the whole causal triangle at
  // this efficiency.
  double band_keys = 0;
  double band_forward = 0;
  double band_backward = 0;
  double fp8_band_backward_causal = 0;
  // Causal kernels as measured (FlashAttentionSpec::causal), one value per seq_lens entry
  // at head_dim 128 on the causal FLOPs (half the square): forward, and backward on 2.5
  // forward passes. Empty: the curve above times causal_factor (and backward_factor).
  std::vector<double> causal_forward;
  std::vector<double> causal_backward;

  // Forward efficiency at head_dim 128: linear in log2(seq) between two points, the
  // nearest point outside them. Precondition: seq_lens not empty, seq > 0.
  double Forward(double seq) const { return Interpolate(efficiency, seq); }
  // A causal kernel's efficiency at head_dim 128, interpolated as Forward. Precondition:
  // causal_forward and causal_backward measured, seq > 0.
  double Causal(double seq, bool backward) const {
    return Interpolate(backward ? causal_backward : causal_forward, seq);
  }
  bool CausalMeasured() const { return !causal_forward.empty(); }
  // Efficiency at head_dim 128 of a band of `keys` keys per query (forward, or backward
  // on 2.5 forward passes of FLOPs): without a measurement, the curve's (Forward, times
  // backward_factor); with one, the measured value at keys <= band_keys, the curve's at
  // keys >= seq_lens.front(), linear in log2(keys) between the two. Precondition as Forward.
  double Band(double keys, bool backward) const;
  // Efficiency relative to head_dim 128: per score, the two GEMMs do 4 x head_dim
  // FLOPs on tensor cores and the online softmax about 5 scalar operations, each worth
  // 16 tensor-core FLOPs on A100 and H100 (FlashAttention-2, Sec. 3.1): 80 FLOP-
  // equivalents, so efficiency ~ 1 / (1 + 20 / head_dim), normalised at 128.
  static double HeadDimFactor(double head_dim);

 private:
  // `curve` (one value per seq_lens entry) at seq, linear in log2(seq), clamped.
  double Interpolate(const std::vector<double>& curve, double seq) const;
};

// Measured GEMM throughputs of one dtype, by exact shape (m, n, k, batch).
class GemmTable {
 public:
  void Add(const GemmShape& g, double tflops) { rows_[Key(g)] = tflops; }
  std::optional<double> Tflops(const GemmShape& g) const;
  bool Empty() const { return rows_.empty(); }

 private:
  static std::array<double, 4> Key(const GemmShape& g) { return {g.m, g.n, g.k, g.batch}; }
  std::map<std::array<double, 4>, double> rows_;
};

// FP8 training (GemmShape's fp8 GEMMs), as Transformer Engine runs it. Off (peak 0): every
// GEMM runs at ShapeModelParams::peak_flops_per_s with 16-bit operands.
struct Fp8Params {
  double peak_flops_per_s = 0;        // dense FP8 tensor-core peak; 0: not FP8 training
  double matmul_efficiency = -1;      // of that peak, as ShapeModelParams' (< 0: the same)
  double cast_bytes_per_element = 0;  // HBM traffic of casting one element (Fp8CastBytes)
  double cast_kernels = 0;            // kernels per cast (Fp8CastKernels)
  // Of those, what a cast of a GemmShape::amax_fused input skips (Fp8AmaxPassBytes,
  // Fp8AmaxPassKernels): current scaling's amax pass.
  double amax_pass_bytes_per_element = 0;
  double amax_pass_kernels = 0;
  GemmTable gemm_table;  // measured FP8 GEMMs; overrides the model per shape
  bool On() const { return peak_flops_per_s > 0; }
};

// Transformer Engine's fused grouped MLP as measured (GpuSpec::fused_grouped_mlp): each of
// its six kernels' speed (FusedMlpKernel order) as a fraction of the dense FP8 peak on its
// GEMM's FLOPs, over `experts` experts of `tokens_per_expert` tokens, a SwiGLU MLP of
// `hidden` x `ffn` (FC1 2 x ffn wide). Not measured (experts 0): the kernels run at the
// FP8 GEMM rate (times fused_grouped_gemm_efficiency).
struct FusedMlpMeasurement {
  double experts = 0;
  double tokens_per_expert = 0;
  double hidden = 0;
  double ffn = 0;
  std::array<double, kFusedMlpKernels> efficiency{};
  bool Measured() const { return experts > 0; }
  // The GEMM of `kernel` at the measured shape, as Mlp lays it out (layer_kernels.cc).
  GemmShape Shape(FusedMlpKernel kernel) const;
};

struct ShapeModelParams {
  // Dense tensor-core peak of the training dtype (BF16 under FP8 training: attention, the
  // output layer and the router stay BF16).
  double peak_flops_per_s = 312e12;
  double hbm_bytes_per_s = 2039e9;  // HBM peak
  double bytes_per_element = 2;     // of 16-bit GEMM operands and of all GEMM results
  // Of the peak, reached by a full wave of full tiles at large k (what is left once tile
  // and wave quantization and small k are modelled).
  double matmul_efficiency = 0.8;
  double memory_efficiency = 0.85;  // of hbm_bytes_per_s, by memory-bound kernels
  double kernel_overhead_s = 0;     // per kernel launch
  int sms = 108;                    // streaming multiprocessors (CUs on AMD)
  double tile_m = 256;              // output tile of one thread block, elements
  double tile_n = 128;
  // The k at which a tile reaches half its large-k rate: the fixed prologue (filling the
  // software pipeline) and epilogue (writing C) of a tile, in k-steps' worth of time.
  double k_half = 128;
  // Of the GEMM efficiency above (matmul_efficiency, or fp8's), what each GEMM of a
  // batch launched one by one (GemmShape::launches_per_batch: Transformer Engine's
  // GroupedLinear, one cuBLAS GEMM per local expert) reaches: with its per-expert casts,
  // scale swizzles and stream synchronisation (cluster.efficiency.grouped_gemm).
  double grouped_gemm_efficiency = 1;
  // The same for the expert GEMMs of NeMo-Automodel's BF16 libraries (GemmShape::gmm_rate:
  // the grouped_gemm library's per-expert cublasGemmEx calls, no casts; torch._grouped_mm's
  // grouped kernel, which runs at about a loop of cuBLAS GEMMs' speed in BF16 at training
  // sizes, pytorch/pytorch#163425; cluster.efficiency.gmm).
  double gmm_efficiency = 1;
  // The same for Transformer Engine's fused grouped MLP (GemmShape::grouped_rate: one
  // grouped kernel per GEMM over the local experts; cluster.efficiency.fused_grouped_gemm):
  // of its kernels' measured speed where fused_mlp is measured.
  double fused_grouped_gemm_efficiency = 1;
  FusedMlpMeasurement fused_mlp;
  // SMs that the fused grouped MLP's forward and input-gradient kernels (FC1 forward, FC2
  // forward, FC2's and FC1's input gradients; not the weight gradients) leave idle for the
  // kernels beside them (FrameworkOptions::fused_grouped_mlp_cluster_margin x
  // kFusedMlpClusterSms): their waves are laid over sms - fused_mlp_held_sms SMs, each at
  // its usual rate. 0: all of them (as measured).
  double fused_mlp_held_sms = 0;
  AttentionEfficiency attention;
  GemmTable gemm_table;  // of the training dtype; overrides the GEMM model per shape
  Fp8Params fp8;
};

class ShapeComputeModel final : public ComputeModel {
 public:
  explicit ShapeComputeModel(ShapeModelParams params);

  // Without shapes: every FLOP at peak x matmul efficiency, as the roofline model.
  SimTime Duration(const KernelWork& work) const override;
  // fraction x (its GEMMs, their FP8 casts and attention kernels) + element-wise bytes at
  // HBM bandwidth + kernels x the launch overhead.
  SimTime ShapedDuration(const KernelWork& work, const KernelShapes& shapes) const override;

  // One GEMM (all of its batch): the measured table's rate where it has the shape;
  // otherwise the longer of (a) the compute time of its waves of tiles (the tile laid
  // both ways, the faster kept; a tile wider than the GEMM cut to it in steps of 16;
  // output tiles fewer than SMs split k over the idle SMs; a GEMM run on several streams
  // at once with its like, GemmShape::streams, the faster of alone and its share of their
  // waves), and (b) the time to move A, B and C through HBM.
  // An fp8 GEMM under FP8 training runs at the FP8 peak with 1-byte A and B (the table
  // of measured FP8 GEMMs first); every other GEMM at peak_flops_per_s. A GEMM with
  // launches_per_batch is batch times one GEMM of batch 1, each at
  // grouped_gemm_efficiency (gmm_efficiency with gmm_rate) times the rate (the table's or
  // the model's). A batched GEMM without it (a grouped kernel over the experts:
  // torch._grouped_mm, TE's fused grouped MLP, megablox) lays the tiles of all of its batch
  // over the SMs together, at the full rate (gmm_efficiency of it with gmm_rate,
  // fused_grouped_gemm_efficiency with grouped_rate). A kernel of the fused grouped MLP
  // (fused_kernel) under FP8 training, where fused_mlp is measured, runs at that kernel's
  // measured speed carried to its shape (FusedKernelEfficiency), times
  // fused_grouped_gemm_efficiency, in place of the FP8 GEMM rate and table.
  double GemmSeconds(const GemmShape& g) const;
  // The efficiency (as matmul_efficiency: of the peak, for a full wave of full tiles at
  // large k) at which the model times `kernel`'s GEMM at the measured shape in the
  // measured time: the measured fraction of the peak divided by the model's own at that
  // shape (tile and wave quantization, k / (k + k_half)). 0 where not measured.
  double FusedKernelEfficiency(FusedMlpKernel kernel) const { return fused_efficiency_[kernel]; }
  // Under FP8 training, casting A of a GEMM with casts_a (m x k x batch elements) to FP8:
  // its HBM traffic at the memory efficiency plus the cast's kernel launches, less the amax
  // pass where A's amax comes with it (GemmShape::amax_fused); else 0.
  double CastSeconds(const GemmShape& g) const;
  // One fused attention kernel, by AttentionEfficiency; causal kernels do half the
  // work; a backward pass also recomputes the scores (2.5 forward passes of FLOPs per
  // backward, which the program counts as 2). A band (AttentionShape::band) at
  // AttentionEfficiency::Band; its FP8 backward, where fp8_band_backward_causal is
  // measured, computes the causal triangle of band_seq keys at that efficiency.
  double AttentionSeconds(const AttentionShape& a) const;
  // The FLOPs attention kernel `a` performs, as AttentionSeconds times it: a causal kernel
  // half the square, a backward 2.5 forward passes (Flops() counts 2), a band its seq_kv
  // keys per query, an FP8 band backward where fp8_band_backward_causal is measured the
  // causal triangle of band_seq keys.
  double AttentionKernelFlops(const AttentionShape& a) const;
  const ShapeModelParams& params() const { return p_; }

 private:
  double TiledSeconds(const GemmShape& g, double tile_m, double tile_n, double peak,
                      double efficiency) const;
  // The SMs g's waves are laid over: sms, less fused_mlp_held_sms for the fused grouped
  // MLP's forward and input-gradient kernels.
  double SmsOf(const GemmShape& g) const;
  // The tile laid both ways, the faster kept.
  double ComputeSeconds(const GemmShape& g, double peak, double efficiency) const;
  // Run beside g.streams - 1 like GEMMs (GemmShape::streams): its share of their waves.
  double SharedComputeSeconds(const GemmShape& g, double peak, double efficiency) const;
  // The share of the GEMM rate g's kernels reach: gmm_efficiency with gmm_rate,
  // grouped_gemm_efficiency with launches_per_batch, fused_grouped_gemm_efficiency with
  // grouped_rate, else 1.
  double RateScale(const GemmShape& g) const;
  // One GEMM kernel (not launches_per_batch), its rate scaled by `rate_scale`.
  double KernelSeconds(const GemmShape& g, double rate_scale) const;
  double BandSeconds(const AttentionShape& a) const;
  // An FP8 band backward that computes the whole causal triangle (fp8_band_backward_causal).
  bool Fp8BandBackwardCausal(const AttentionShape& a) const;
  const ShapeModelParams p_;
  std::array<double, kFusedMlpKernels> fused_efficiency_{};
};

}  // namespace meshsim

// The shapes of the kernels of one compute op: what a shape-aware ComputeModel times.
//
// A compute op's FLOPs (KernelWork::flops) are the sum of the FLOPs of its GEMMs and of
// its fused attention, times `fraction`; its element-wise HBM traffic stays in
// KernelWork::bytes. The shapes say how those FLOPs are cut into kernels, which decides
// how well they fill the GPU (tile and wave quantization, small k, short sequences).
#pragma once

#include <vector>

namespace meshsim {

// C[m x n] = A[m x k] B[k x n], `batch` times in one (batched or grouped) kernel.
// Dimensions are in elements; m may be fractional where it is an average (tokens per
// expert of a balanced MoE layer).
//
// Under FP8 training (Dtype::kFp8, as Transformer Engine runs it) the GEMMs of the
// transformer layers' linear layers (`fp8`) run in FP8; attention's GEMMs, the router and
// the output layer stay BF16. `casts_a`: A (m x k: the input X of a forward GEMM, the
// output gradient dY of a dgrad GEMM) is cast to FP8 just before it; a wgrad GEMM reuses
// both casts (X^T and dY^T, cast with their transposes) and casts nothing. `amax_fused`: A
// is the output of the Transformer Engine normalization fused into the GEMM's module
// (LayerNormLinear: Megatron-Core's QKV and dense FC1), whose kernel computes A's amax as
// it writes it, so a current-scaling cast of A skips its amax pass (Fp8AmaxPassBytes).
//
// `streams`: the GEMM is one of a run of like GEMMs issued round-robin on this many CUDA
// streams, so that up to `streams` of them run at once and fill each other's idle SMs
// (Transformer Engine's comm-GEMM overlap chunks, tp_overlap.cc); 1: alone on the GPU.
//
// `launches_per_batch`: the batch is not one batched kernel but `batch` GEMM kernels
// launched one by one, round-robin on `streams` streams, as Transformer Engine's
// GroupedLinear runs the experts of a MoE layer (one cuBLAS GEMM per expert,
// layer_kernels.cc): each pays its own tile and wave quantization. A casts_a GEMM still
// casts A (all of its batch) once.
//
// `gmm_rate`: an expert GEMM of NeMo-Automodel's BF16 libraries (MoeGroupedGemm::kGmm:
// the grouped_gemm library's per-expert cublasGemmEx calls; kTorchMm: torch._grouped_mm's
// one grouped kernel), timed at their share of the GEMM rate (ShapeModelParams::
// gmm_efficiency) rather than GroupedLinear's or the dense rate.
//
// `grouped_rate`: an expert GEMM of Transformer Engine's fused grouped MLP (one grouped
// kernel over the local experts), timed at its share of the GEMM rate
// (ShapeModelParams::fused_grouped_gemm_efficiency) rather than the dense rate.
// `fused_kernel`: which of that MLP's six kernels it is (FusedMlpKernel); where the GPU
// has them measured (ShapeModelParams::fused_mlp), the kernel's own efficiency replaces
// the GEMM rate. `fused_dbias`: the kernel also reduces the experts' bias gradient (the
// dGLU kernel's generate_dbias, for experts with biases), at kFusedDbiasSlowdown of its
// measured time.
enum FusedMlpKernel : int {
  kFusedNone = -1,
  kFusedFc1Fwd,  // FC1 forward with the SwiGLU and the quantisation of its output
  kFusedFc2Fwd,
  kFusedFc2Dgrad,  // FC2's input gradient with the SwiGLU's backward and the quantisation
  kFusedFc1Dgrad,
  kFusedFc1Wgrad,
  kFusedFc2Wgrad,
  kFusedMlpKernels
};

// The fused grouped MLP's dGLU kernel with the bias gradient against without:
// cudnn-frontend PR #322 (issue #256) times grouped_gemm_dglu on the shape at
// 155.6 us with the bias gradient and 139.0 us without, after its fix.
inline constexpr double kFusedDbiasSlowdown = 155.6 / 139.0;

struct GemmShape {
  double m = 0;
  double n = 0;
  double k = 0;
  double batch = 1;
  bool fp8 = false;
  bool casts_a = false;
  double streams = 1;
  bool amax_fused = false;
  bool launches_per_batch = false;
  bool gmm_rate = false;
  bool grouped_rate = false;
  int fused_kernel = kFusedNone;
  bool fused_dbias = false;
  double Flops() const { return 2 * m * n * k * batch; }
  bool operator==(const GemmShape&) const = default;
};

// One fused (FlashAttention-style) attention kernel over batch_heads independent heads:
// seq_q queries attend to seq_kv keys of head_dim. Causal: only the scores at or below
// the diagonal are computed (the kernel skips the blocks above it), about half.
// FLOPs are counted as the program counts them (the full square, causal or not):
// `passes` x 4 x batch_heads x seq_q x seq_kv x head_dim, where a forward op holds one
// pass and the backward (2 passes of FLOPs) may be split over two ops of one pass each.
struct AttentionShape {
  double batch_heads = 0;
  double seq_q = 0;
  double seq_kv = 0;
  double head_dim = 0;
  bool causal = true;
  bool backward = false;
  double passes = 1;
  // A sliding-window layer's kernel: a band of seq_kv keys per query (not causal), timed
  // by the measured band efficiencies (AttentionEfficiency::Band). band_seq: the keys of
  // the whole causal sequence the band lies in (an FP8 backward may compute all of it).
  bool band = false;
  double band_seq = 0;
  bool fp8 = false;  // FP8 attention (TrainingSpec::fp8_attention)
  double Flops() const { return passes * 4 * batch_heads * seq_q * seq_kv * head_dim; }
  bool operator==(const AttentionShape&) const = default;
};

// The kernels of one op. `fraction`: the op runs this share of the kernels listed (the
// schedule splits some kernel sequences evenly over several ops).
struct KernelShapes {
  std::vector<GemmShape> gemms;
  std::vector<AttentionShape> attention;
  double fraction = 1;

  double Flops() const {
    double f = 0;
    for (const GemmShape& g : gemms) f += g.Flops();
    for (const AttentionShape& a : attention) f += a.Flops();
    return f * fraction;
  }
  bool Empty() const { return gemms.empty() && attention.empty(); }
  bool operator==(const KernelShapes&) const = default;
};

}  // namespace meshsim

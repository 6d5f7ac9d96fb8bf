#include "sim/schedule/model_states.h"

namespace meshsim {

double GradientBytesPerParam(const TrainingSpec& t) {
  return t.grad_accum_dtype == GradAccumDtype::kFp32 ? 4.0 : 2.0;
}

double OptimizerBytesPerParam(const TrainingSpec& t) {
  const double master = t.master_weights ? 4.0 : 0.0;
  const double moment = t.moments_dtype == MomentsDtype::kBf16 ? 2.0 : 4.0;
  return master + (t.optimizer == Optimizer::kAdam ? 2 : 1) * moment;
}

bool Fp8PrimaryWeights(const TrainingSpec& t) {
  return t.dtype == Dtype::kFp8 && t.fp8_param_gather;
}

double WeightBytesPerParam(const TrainingSpec& t) {
  return (Fp8PrimaryWeights(t) ? 0.0 : kWeightBytesPerParam) + Fp8WeightBytesPerParam(t);
}

double GatheredWeightBytesPerParam(const TrainingSpec& t) {
  return Fp8PrimaryWeights(t) && t.fp8_recipe != Fp8Recipe::kMxfp8 ? 1.0 : kWeightBytesPerParam;
}

double OptimizerTrafficPerParam(const TrainingSpec& t) {
  // Megatron-LM's mixed-precision step, kernel by kernel, per parameter: unscale and
  // inf-check (read g), gradient norm (read g), clipping (read + write g), the fused
  // update (read g, master and state; write master and state), copy of the master
  // weights to the 16-bit model weights (read 4, write 2), zeroing of the gradients.
  // FP8 primary weights: no 16-bit copy; the cast to FP8 reads the fp32 master instead
  // (4 bytes instead of 2 per read: Fp8CastKernels reads). Without master weights the
  // update reads and writes the 16-bit weights in place of the copy.
  const double g = GradientBytesPerParam(t);
  const double state = OptimizerBytesPerParam(t);  // includes the fp32 master weights
  const double copy = Fp8PrimaryWeights(t) ? 0.0
                      : t.master_weights   ? 4 + kWeightBytesPerParam
                                           : 2 * kWeightBytesPerParam;
  const double wider_reads = Fp8PrimaryWeights(t) ? 2 * Fp8CastKernels(t.fp8_recipe) : 0.0;
  return g + g + 2 * g + (g + 2 * state) + copy + g + Fp8WeightCastBytes(t) + wider_reads;
}

double Fp8WeightBytesPerParam(const TrainingSpec& t) {
  return t.dtype == Dtype::kFp8 ? Fp8WeightCopyBytes(t.fp8_recipe) : 0.0;
}

double Fp8WeightCastBytes(const TrainingSpec& t) {
  return t.dtype == Dtype::kFp8 ? Fp8CastBytes(t.fp8_recipe) : 0.0;
}

ModelStateBytes ModelStates(double params, int nd, int zero, const TrainingSpec& t) {
  ModelStateBytes b;
  b.weights = params * WeightBytesPerParam(t) / (zero >= 3 ? nd : 1);
  b.gradients = params * GradientBytesPerParam(t) / (zero >= 2 ? nd : 1);
  b.optimizer = params * OptimizerBytesPerParam(t) / (zero >= 1 ? nd : 1);
  return b;
}

}  // namespace meshsim

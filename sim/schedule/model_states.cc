#include "sim/schedule/model_states.h"

namespace meshsim {

double GradientBytesPerParam(const TrainingSpec& t) {
  return t.grad_accum_dtype == GradAccumDtype::kFp32 ? 4.0 : 2.0;
}

double OptimizerBytesPerParam(const TrainingSpec& t) {
  return t.optimizer == Optimizer::kAdam ? 12.0 : 8.0;
}

double OptimizerTrafficPerParam(const TrainingSpec& t) {
  // Read master weights, state and gradient; write master weights, state, 16-bit weights.
  const double state = OptimizerBytesPerParam(t);
  return 2 * state + GradientBytesPerParam(t) + kWeightBytesPerParam;
}

ModelStateBytes ModelStates(double params, int nd, int zero, const TrainingSpec& t) {
  ModelStateBytes b;
  b.weights = params * kWeightBytesPerParam / (zero >= 3 ? nd : 1);
  b.gradients = params * GradientBytesPerParam(t) / (zero >= 2 ? nd : 1);
  b.optimizer = params * OptimizerBytesPerParam(t) / (zero >= 1 ? nd : 1);
  return b;
}

}  // namespace meshsim

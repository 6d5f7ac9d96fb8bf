// Bytes of weights, gradients and optimizer state one rank holds for the whole step.
//
// Mixed precision (Micikevicius et al. 2018; Rajbhandari et al. 2020): 16-bit weights
// (2 bytes), gradients in the training dtype (2 bytes) or Megatron's fp32 main_grad (4),
// and fp32 optimizer state: Adam 12 bytes (master weights, two moments), SGD 8 (master,
// momentum); with bf16 moments (training.moments_dtype, Megatron-Core's precision-aware
// optimizer) Adam 8 and SGD 6; without fp32 master weights (training.master_weights false:
// PyTorch's Adam on bf16 parameters) Adam 8 (4 with bf16 moments), SGD 4 (2). ZeRO shards over the
// gradient group of nd = dp*cp ranks: stage 1 the optimizer state, stage 2 also gradients, stage 3
// also weights. FP8 training (Transformer Engine) keeps FP8 copies of the weights beside the 16-bit
// ones (Fp8WeightCopyBytes: row-wise and transposed, 2 bytes per parameter), counted as weights,
// and casts them once per step (in the optimizer step's traffic). Both are counted for every
// parameter, also the embedding's and the norms' that TE does not cast: an upper bound, by ~3 % of
// the parameters of a 70B model. With FP8 primary weights (training.fp8_param_gather,
// Megatron-Core's --fp8-param-gather) the 16-bit weights are not kept: the FP8 copies are the
// model's weights.
#pragma once

#include "sim/plan/plan_spec.h"

namespace meshsim {

struct ModelStateBytes {
  double weights = 0;
  double gradients = 0;
  double optimizer = 0;
  double Total() const { return weights + gradients + optimizer; }
};

constexpr double kWeightBytesPerParam = 2;

double GradientBytesPerParam(const TrainingSpec& t);
// Whether the model's weights are TE's FP8 tensors only (dtype fp8 and fp8_param_gather).
bool Fp8PrimaryWeights(const TrainingSpec& t);
// Bytes per parameter of the weights a rank holds: 16-bit weights (unless FP8 primary
// weights) plus the FP8 copies (Fp8WeightBytesPerParam).
double WeightBytesPerParam(const TrainingSpec& t);
double OptimizerBytesPerParam(const TrainingSpec& t);
// HBM traffic of the optimizer step per locally owned parameter (54 bytes for Adam with
// fp32 gradients, 42 with 16-bit gradients; FP8 training adds the weights' cast,
// Fp8WeightCastBytes).
double OptimizerTrafficPerParam(const TrainingSpec& t);
// Bytes per parameter of Megatron's parameter all-gathers (the distributed optimizer's
// after the step, ZeRO-3's before each layer) and of ZeRO-3's gathered buffers: the
// 16-bit weights; with FP8 primary weights the FP8 data, 1 byte (Megatron-LM
// --fp8-param-gather: "perform the param all-gather in fp8", arguments.py @ d98e8a6),
// except MXFP8, whose all-gather Megatron-Core runs in 16 bits through the gradient
// buffer and quantizes afterwards (reuse_grad_buf_for_mxfp8_param_ag, which Megatron-Bridge's
// MXFP8 recipe sets; param_and_grad_buffer.py @ d98e8a6).
double GatheredWeightBytesPerParam(const TrainingSpec& t);
// Bytes per parameter of TE's FP8 weight copies (0 unless training.dtype is fp8).
double Fp8WeightBytesPerParam(const TrainingSpec& t);
// HBM bytes per parameter of casting the weights to FP8 once per step (0 unless fp8).
double Fp8WeightCastBytes(const TrainingSpec& t);

// Model states for `params` parameters replicated over `nd` data-parallel ranks.
ModelStateBytes ModelStates(double params, int nd, int zero, const TrainingSpec& t);

}  // namespace meshsim

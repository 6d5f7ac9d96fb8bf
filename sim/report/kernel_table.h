// `meshsim explain --kernels`: the kernels of one layer's compute ops on one rank, each timed
// by the experiment's kernel model alone on the GPU, as a profiler's kernel table lists
// them: what a user holds against an Nsight Systems profile of the same layer.
#pragma once

#include <string>
#include <vector>

#include "sim/schedule/program.h"
#include "sim/workload/compute_model.h"
#include "sim/workload/shape_compute_model.h"

namespace meshsim {

// One line of the table: a compute op (its whole time) or one part of it.
struct KernelLine {
  enum class Kind { kOp, kGemm, kCast, kAttention, kElementwise, kLaunches };
  Kind kind = Kind::kOp;
  std::string name;    // op: its tag ("attention fwd"); part: what it is ("gemm fp8")
  std::string shape;   // "m x n x k [x batch]", "heads x q x kv, d", "N bytes", "N kernels"
  double seconds = 0;  // alone on the GPU: no communication or side-stream interference
  double flops = 0;    // GEMM and attention parts: the FLOPs the kernel performs
  double peak_flops_per_s = 0;  // the tensor-core peak it runs against; 0: not a matmul
  bool side_stream = false;     // op: on the GPU's second compute stream, beside the main one
};

// The compute ops (main and side compute streams) of `rank` tied to `layer` (-1: to no
// layer: embedding, output layer and loss, optimizer) and `micro_batch`, in the order the
// program adds them, each followed by its parts when `shapes` is given (the experiment's
// kernel model is `shapes`): every GEMM with its FP8 cast apart, every attention kernel (an
// op without shapes: its FLOPs at the GEMM rate), the element-wise HBM traffic and the
// kernels' launch overheads, which add up to the op's time. `model` times the ops as a step does
// (ComputeModel::ShapedDuration); host launches are not in it. Empty when the rank runs no such op.
std::vector<KernelLine> LayerKernels(const Program& program, const ComputeModel& model,
                                     const ShapeComputeModel* shapes, int rank, int layer,
                                     int micro_batch);

// The lines as a text table: op lines flush left with their time, parts indented with
// their shape, time, TFLOP/s and fraction of the peak; last the total of the ops on the main
// compute stream (side-stream ops run beside them).
std::string KernelTableText(const std::vector<KernelLine>& lines);

}  // namespace meshsim

#include "sim/schedule/host_launch.h"

#include <cmath>

namespace meshsim {

void HostThread::Issue(Program& p, OpId gpu, int launches, int layer, int micro_batch,
                       int trailing) {
  if (!on_) return;
  if (InGraph()) {
    if (!graph_launch_) graph_launch_ = p.AddHost(rank_, Tag::kHostLaunch, 1, layer, micro_batch);
    p.AddDep(*graph_launch_, gpu);
    return;
  }
  p.AddDep(p.AddHost(rank_, Tag::kHostLaunch, launches, layer, micro_batch, trailing), gpu);
}

void HostThread::Sync(Program& p, std::initializer_list<OpId> gpu, int layer, int micro_batch) {
  if (!on_ || InGraph()) return;
  const OpId sync = p.AddHost(rank_, Tag::kHostSync, 0, layer, micro_batch);
  for (OpId g : gpu) {
    if (g != kNoOp) p.AddDep(g, sync);
  }
}

void HostThread::EndGraph() {
  if (--graph_depth_ == 0) graph_launch_.reset();
}

int Fp8CastLaunches(const KernelShapes& shapes, Fp8Recipe recipe, bool norm_amax) {
  int launches = 0;
  for (const GemmShape& g : shapes.gemms) {
    if (!g.fp8 || !g.casts_a) continue;
    const bool per_gemm = g.launches_per_batch && recipe != Fp8Recipe::kDelayed;
    const int casts = per_gemm ? static_cast<int>(std::ceil(g.batch)) : 1;
    const double kernels =
        Fp8CastKernels(recipe) - (g.amax_fused && norm_amax ? Fp8AmaxPassKernels(recipe) : 0);
    launches += casts * static_cast<int>(kernels);
  }
  return launches;
}

int GroupedGemmLaunches(double local_experts, int gemms_per_expert) {
  return static_cast<int>(std::ceil(local_experts)) * gemms_per_expert;
}

}  // namespace meshsim

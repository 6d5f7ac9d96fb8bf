#include "sim/schedule/host_launch.h"

#include <cmath>

namespace meshsim {

void HostThread::Issue(Program& p, OpId gpu, int launches, int layer, int micro_batch, int trailing,
                       int expert_units, int grouped_calls) {
  if (!on_) return;
  if (InGraph()) {
    if (!graph_launch_) graph_launch_ = p.AddHost(rank_, Tag::kHostLaunch, 1, layer, micro_batch);
    p.AddDep(*graph_launch_, gpu);
    return;
  }
  if (expert_units > 0 && trailing > 0) {
    // The op's launches and expert work before it, then its trailing launches: the host
    // stream runs them in order, and nothing waits for the second.
    p.AddDep(p.AddHost(rank_, Tag::kHostLaunch, launches - trailing, layer, micro_batch, 0,
                       expert_units, grouped_calls),
             gpu);
    p.AddHost(rank_, Tag::kHostLaunch, trailing, layer, micro_batch);
    return;
  }
  p.AddDep(p.AddHost(rank_, Tag::kHostLaunch, launches, layer, micro_batch, trailing, expert_units,
                     grouped_calls),
           gpu);
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
    const double kernels =
        Fp8CastKernels(recipe) - (g.amax_fused && norm_amax ? Fp8AmaxPassKernels(recipe) : 0);
    launches += static_cast<int>(kernels);
  }
  return launches;
}

int GroupedGemmExpertUnits(double local_experts, int gemms_per_expert, bool fp8_casts) {
  return static_cast<int>(std::ceil(local_experts)) * gemms_per_expert * (fp8_casts ? 2 : 1);
}

}  // namespace meshsim

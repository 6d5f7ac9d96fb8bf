#include "sim/engine/gemm_bench.h"

#include "sim/engine/shape_params.h"

namespace meshsim {

std::vector<GemmBenchRow> BenchGemm(const ClusterSpec& cluster, Dtype dtype,
                                    const std::vector<GemmShape>& shapes) {
  const ShapeModelParams p = GpuShapeParams(cluster, dtype);
  const ShapeComputeModel model(p);
  const double peak = dtype == Dtype::kFp8 ? p.fp8.peak_flops_per_s : p.peak_flops_per_s;
  std::vector<GemmBenchRow> rows;
  rows.reserve(shapes.size());
  for (GemmShape g : shapes) {
    g.fp8 = dtype == Dtype::kFp8;
    GemmBenchRow r;
    r.shape = g;
    r.time_s = model.GemmSeconds(g) + p.kernel_overhead_s;
    r.tflops = g.Flops() / r.time_s / 1e12;
    r.peak_fraction = g.Flops() / r.time_s / peak;
    rows.push_back(r);
  }
  return rows;
}

}  // namespace meshsim

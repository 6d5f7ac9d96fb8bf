// meshsim bench-gemm: a GEMM microbenchmark's table for the simulated GPU.
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <regex>

#include "sim/cli/commands.h"
#include "sim/config/loader.h"
#include "sim/engine/gemm_bench.h"

namespace meshsim::cli {
namespace {

// "MxNxK" or "MxNxKxBATCH", positive integers.
bool ParseShape(const std::string& text, GemmShape* g) {
  static const std::regex kShape(R"(([0-9]+)x([0-9]+)x([0-9]+)(?:x([0-9]+))?)");
  std::smatch m;
  if (!std::regex_match(text, m, kShape)) return false;
  const auto value = [&](int i) { return m[i].matched ? std::stod(m[i].str()) : 1.0; };
  *g = GemmShape{value(1), value(2), value(3), value(4)};
  return g->m > 0 && g->n > 0 && g->k > 0 && g->batch > 0 && g->Flops() < 1e21;
}

}  // namespace

int BenchGemmCommand(const BenchGemmArgs& a) {
  Result<ClusterSpec> cluster = LoadClusterFile(a.cluster);
  if (!cluster.ok()) return ReportError(cluster.error());
  const std::pair<const char*, Dtype> dtypes[] = {
      {"bf16", Dtype::kBf16}, {"fp16", Dtype::kFp16}, {"fp8", Dtype::kFp8}};
  const auto* dtype = std::find_if(std::begin(dtypes), std::end(dtypes),
                                   [&](const auto& d) { return a.dtype == d.first; });
  if (dtype == std::end(dtypes)) {
    return ReportBadOption("--dtype", "expected bf16 | fp16 | fp8, found '" + a.dtype + "'");
  }
  if (cluster.value().gpu.PeakTflops(dtype->second) <= 0) {
    return ReportBadOption("--dtype", fmt::format("expected a dtype {} has a peak for, found {}",
                                                  cluster.value().gpu.kind, a.dtype));
  }
  std::vector<GemmShape> shapes;
  for (const std::string& s : a.shapes) {
    GemmShape g;
    if (!ParseShape(s, &g)) {
      return ReportBadOption(
          "--shape", "expected MxNxK or MxNxKxBATCH (positive integers), found '" + s + "'");
    }
    shapes.push_back(g);
  }
  if (shapes.empty()) {
    for (double d = 256; d <= 16384; d *= 2) shapes.push_back(GemmShape{d, d, d});
  }
  const std::vector<GemmBenchRow> rows = BenchGemm(cluster.value(), dtype->second, shapes);
  if (a.csv) {
    std::cout << "m,n,k,batch,time_us,tflops,peak_fraction\n";
  } else {
    std::cout << fmt::format("# {} GEMMs on one {}, simulated (kernel model and one launch)\n",
                             a.dtype, cluster.value().gpu.kind);
    std::cout << fmt::format("{:>8} {:>8} {:>8} {:>6} {:>12} {:>10} {:>8}\n", "m", "n", "k",
                             "batch", "time (us)", "TFLOP/s", "of peak");
  }
  for (const GemmBenchRow& r : rows) {
    const GemmShape& g = r.shape;
    const std::string format =
        a.csv ? "{:.0f},{:.0f},{:.0f},{:.0f},{:.3f},{:.3f},{:.4f}\n"
              : "{:>8.0f} {:>8.0f} {:>8.0f} {:>6.0f} {:>12.2f} {:>10.1f} {:>8.3f}\n";
    std::cout << fmt::format(fmt::runtime(format), g.m, g.n, g.k, g.batch, r.time_s * 1e6, r.tflops,
                             r.peak_fraction);
  }
  return kOk;
}

}  // namespace meshsim::cli

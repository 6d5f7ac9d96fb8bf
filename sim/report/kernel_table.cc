#include "sim/report/kernel_table.h"

#include <fmt/format.h>

#include <iterator>

namespace meshsim {

namespace {

// A dimension as the trace's args write it (chrome_trace.cc KernelArgs): whole where it is;
// the tokens per expert of a balanced MoE layer are an average.
std::string Dim(double x) { return fmt::format("{:.6g}", x); }

std::string GemmName(const GemmShape& g) {
  static const char* const kFused[] = {"FC1 + GLU fwd", "FC2 fwd",   "FC2 dgrad + dGLU",
                                       "FC1 dgrad",     "FC1 wgrad", "FC2 wgrad"};
  std::string name = g.fp8 ? "gemm fp8" : "gemm";
  if (g.fused_kernel != kFusedNone) return name + ", fused MLP " + kFused[g.fused_kernel];
  if (g.launches_per_batch) return name + ", one per expert";
  if (g.gmm_rate) return name + ", gmm library";
  if (g.grouped_rate) return name + ", grouped";
  if (g.batch > 1) return name + ", batched";
  if (g.streams > 1) return name + ", " + Dim(g.streams) + " streams";
  return name;
}

std::string GemmShapeText(const GemmShape& g) {
  std::string s = Dim(g.m) + " x " + Dim(g.n) + " x " + Dim(g.k);
  if (g.batch > 1) s += " x " + Dim(g.batch);
  return s;
}

std::string AttentionName(const AttentionShape& a) {
  std::string name = a.fp8 ? "attention fp8" : "attention";
  name += a.band ? ", band" : a.causal ? ", causal" : "";
  return name + (a.backward ? " bwd" : " fwd");
}

std::string AttentionShapeText(const AttentionShape& a) {
  std::string s =
      Dim(a.batch_heads) + " x " + Dim(a.seq_q) + " x " + Dim(a.seq_kv) + ", d " + Dim(a.head_dim);
  if (a.passes != 1) s += ", " + Dim(a.passes) + " passes";
  return s;
}

// The GEMM and attention parts of one shaped op.
void AddShapedParts(const KernelShapes& k, const ShapeComputeModel& m,
                    std::vector<KernelLine>* out) {
  const ShapeModelParams& p = m.params();
  for (const GemmShape& g : k.gemms) {
    const double peak = g.fp8 && p.fp8.On() ? p.fp8.peak_flops_per_s : p.peak_flops_per_s;
    out->push_back({KernelLine::Kind::kGemm, GemmName(g), GemmShapeText(g),
                    k.fraction * m.GemmSeconds(g), k.fraction * g.Flops(), peak});
    const double cast = m.CastSeconds(g);
    if (cast > 0) {
      out->push_back({KernelLine::Kind::kCast, "fp8 cast of A",
                      Dim(g.m) + " x " + Dim(g.k * g.batch), k.fraction * cast, 0, 0});
    }
  }
  for (const AttentionShape& a : k.attention) {
    out->push_back({KernelLine::Kind::kAttention, AttentionName(a), AttentionShapeText(a),
                    k.fraction * m.AttentionSeconds(a), k.fraction * m.AttentionKernelFlops(a),
                    p.peak_flops_per_s});
  }
}

// The parts of one op, which add up to its time (ShapeComputeModel::ShapedDuration, or
// Duration for an op without shapes: its FLOPs at the GEMM rate).
void AddParts(const KernelWork& work, const KernelShapes* k, const ShapeComputeModel& m,
              std::vector<KernelLine>* out) {
  const ShapeModelParams& p = m.params();
  if (k) {
    AddShapedParts(*k, m, out);
  } else if (work.flops > 0) {
    out->push_back({KernelLine::Kind::kGemm, "matmul (no shapes)", "",
                    work.flops / (p.peak_flops_per_s * p.matmul_efficiency), work.flops,
                    p.peak_flops_per_s});
  }
  if (work.bytes > 0) {
    out->push_back({KernelLine::Kind::kElementwise, "element-wise (HBM)",
                    fmt::format("{:.0f} bytes", work.bytes),
                    work.bytes / (p.hbm_bytes_per_s * p.memory_efficiency), 0, 0});
  }
  if (work.kernels > 0 && p.kernel_overhead_s > 0) {
    out->push_back({KernelLine::Kind::kLaunches, "launch overhead",
                    std::to_string(work.kernels) + " kernels", work.kernels * p.kernel_overhead_s,
                    0, 0});
  }
}

}  // namespace

std::vector<KernelLine> LayerKernels(const Program& program, const ComputeModel& model,
                                     const ShapeComputeModel* shapes, int rank, int layer,
                                     int micro_batch) {
  std::vector<KernelLine> lines;
  for (OpId id = 0; id < program.OpCount(); ++id) {
    const Op op = program.op(id);
    if (op.kind != OpKind::kCompute || op.rank != rank || op.layer != layer ||
        op.micro_batch != micro_batch) {
      continue;
    }
    if (op.stream != Stream::kCompute && op.stream != Stream::kSideCompute) continue;
    const KernelWork& work = program.WorkOf(op);
    const KernelShapes* k = program.ShapesOf(work);
    const SimTime t = k ? model.ShapedDuration(work, *k) : model.Duration(work);
    const bool side = op.stream == Stream::kSideCompute;
    std::string name(TagName(op.tag));
    if (side) name += " (side stream)";
    lines.push_back({KernelLine::Kind::kOp, name, "", t.seconds(), work.flops, 0, side});
    if (shapes) AddParts(work, k, *shapes, &lines);
  }
  return lines;
}

std::string KernelTableText(const std::vector<KernelLine>& lines) {
  std::string s = fmt::format("{:<44} {:<28} {:>10} {:>9} {:>8}\n", "op / kernel", "shape",
                              "time ms", "TFLOP/s", "of peak");
  auto out = std::back_inserter(s);
  double total = 0;
  for (const KernelLine& l : lines) {
    if (l.kind == KernelLine::Kind::kOp) {
      if (!l.side_stream) total += l.seconds;
      fmt::format_to(out, "{:<44} {:<28} {:>10.4f}\n", l.name, "", l.seconds * 1e3);
    } else if (l.flops > 0 && l.seconds > 0) {
      const double rate = l.flops / l.seconds;
      fmt::format_to(out, "  {:<42} {:<28} {:>10.4f} {:>9.1f} {:>7.1f}%\n", l.name, l.shape,
                     l.seconds * 1e3, rate * 1e-12,
                     l.peak_flops_per_s > 0 ? 100 * rate / l.peak_flops_per_s : 0.0);
    } else {
      fmt::format_to(out, "  {:<42} {:<28} {:>10.4f}\n", l.name, l.shape, l.seconds * 1e3);
    }
  }
  fmt::format_to(out, "{:<44} {:<28} {:>10.4f}\n", "total (main compute stream)", "", total * 1e3);
  return s;
}

}  // namespace meshsim

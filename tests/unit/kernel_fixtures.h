// A GPU's shape-model parameters and a tiny MoE model, shared by the kernel tests.
#pragma once

#include "sim/workload/model_spec.h"
#include "sim/workload/shape_compute_model.h"

namespace meshsim::testing {

// An H100-like GPU for hand-derived kernel times: 989 TFLOP/s at 0.8, 3,350 GB/s of HBM,
// 132 SMs, 256 x 128 tiles.
inline ShapeModelParams H100Like() {
  ShapeModelParams p;
  p.peak_flops_per_s = 989e12;
  p.hbm_bytes_per_s = 3350e9;
  p.matmul_efficiency = 0.8;
  p.sms = 132;
  p.tile_m = 256;
  p.tile_n = 128;
  return p;
}

// A GB200-like GPU under MXFP8 training (gb200-nvl72.yaml): 2.5 PFLOP/s bf16, 5 PFLOP/s
// FP8 at 0.457, 8 TB/s of HBM, 148 SMs, 256 x 256 tiles; with `measured`, the fused grouped
// MLP's six kernels measured (gpu.fused_grouped_mlp: 64 experts x 4096 tokens, hidden 2560,
// ffn 1280).
inline ShapeModelParams Gb200Mxfp8Like(bool measured) {
  ShapeModelParams p;
  p.peak_flops_per_s = 2500e12;
  p.hbm_bytes_per_s = 8000e9;
  p.sms = 148;
  p.tile_m = 256;
  p.tile_n = 256;
  p.fp8.peak_flops_per_s = 5000e12;
  p.fp8.matmul_efficiency = 0.457;
  if (measured) {
    p.fused_mlp = {64, 4096, 2560, 1280, {0.4581, 0.3699, 0.2488, 0.5179, 0.4816, 0.4383}};
  }
  return p;
}

// 16 experts of 64, top 4 (or top_k), hidden 128 (or hidden), SwiGLU; one sequence of 256
// tokens.
inline ModelSpec TinyMoe(int top_k = 4, int hidden = 128) {
  ModelSpec m;
  m.name = "moe";
  m.layers = 1;
  m.hidden = hidden;
  m.heads = 4;
  m.kv_heads = 4;
  m.ffn_hidden = 256;
  m.ffn_kind = FfnKind::kSwiglu;
  m.vocab = 1000;
  m.seq_len = 256;
  m.experts = 16;
  m.top_k = top_k;
  m.moe_ffn_hidden = 64;
  return m;
}

}  // namespace meshsim::testing

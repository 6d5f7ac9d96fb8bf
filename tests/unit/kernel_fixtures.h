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

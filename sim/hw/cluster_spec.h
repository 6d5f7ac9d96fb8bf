// Plain description of a cluster, as read from a cluster YAML.
//
// Units are in the names: GB/s are 1e9 bytes per second and unidirectional; memory in GiB.
#pragma once

#include <string>

#include "sim/core/dtype.h"

namespace meshsim {

struct GpuSpec {
  std::string kind = "A100-SXM4-80GB";
  double memory_gib = 80;
  double peak_tflops_bf16 = 312;
  double peak_tflops_fp16 = 312;
  double peak_tflops_fp8 = 0;  // 0: not supported
  double hbm_gbps = 2039;

  double PeakTflops(Dtype d) const {
    switch (d) {
      case Dtype::kBf16: return peak_tflops_bf16;
      case Dtype::kFp16: return peak_tflops_fp16;
      case Dtype::kFp8: return peak_tflops_fp8;
    }
    return 0;
  }
};

enum class IntraNodeKind { kNvswitch, kRing, kFullMesh };
enum class InterNodeKind { kFatTree, kRailOptimized, kSingleSwitch };

struct IntraNodeSpec {
  IntraNodeKind kind = IntraNodeKind::kNvswitch;
  double gbps_per_gpu = 300;  // unidirectional bandwidth out of one GPU
  double latency_us = 2;
};

struct InterNodeSpec {
  InterNodeKind kind = InterNodeKind::kFatTree;
  int nics_per_node = 8;
  double gbps_per_nic = 25;  // unidirectional
  double latency_us = 5;
  double oversubscription = 1.0;  // leaf uplink : downlink ratio, >= 1
};

// Fractions of the peak that real kernels and collectives reach.
struct EfficiencySpec {
  double matmul = 0.75;
  double memory = 0.85;
  double network = 0.85;
  double kernel_overhead_us = 0;  // fixed time per kernel launch (launch + tail)
};

struct ClusterSpec {
  std::string name;
  GpuSpec gpu;
  int nodes = 1;
  int gpus_per_node = 8;
  IntraNodeSpec intra_node;
  InterNodeSpec inter_node;
  EfficiencySpec efficiency;

  int TotalGpus() const { return nodes * gpus_per_node; }
};

}  // namespace meshsim

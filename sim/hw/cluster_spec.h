// Plain description of a cluster, as read from a cluster YAML.
//
// Units are in the names: GB/s are 1e9 bytes per second and unidirectional; memory in GiB.
#pragma once

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "sim/core/collective_kinds.h"
#include "sim/core/dtype.h"
#include "sim/hw/torus.h"

namespace meshsim {

// FlashAttention's measured forward efficiency (fraction of the dense peak) at head dim
// 128, non-causal, by keys per query; and the ratios that give the backward and causal
// kernels. Defaults: A100 with FlashAttention-2 (topologies/selene-a100.yaml cites them).
struct FlashAttentionSpec {
  std::vector<double> seq_lens = {1024, 4096};  // ascending
  std::vector<double> efficiency = {0.574, 0.590};
  double backward_factor = 0.86;  // backward efficiency / forward efficiency
  double causal_factor = 0.85;    // causal efficiency / non-causal efficiency
  // Causal kernels as measured (gpu.flash_attention.causal, .causal_backward), one value
  // per seq_lens entry, fractions of the dense 16-bit peak at head dim 128 on the causal
  // FLOPs (half the square; the backward on 2.5 forward passes of them). Empty: a causal
  // kernel runs at `efficiency` x causal_factor (x backward_factor).
  std::vector<double> causal;
  std::vector<double> causal_backward;
  // The fused kernel of a sliding-window layer as measured (gpu.flash_attention.window):
  // a band of `keys` keys per query, whose query tiles each cover one or two key tiles,
  // partly masked, so that the kernel's fixed work per tile weighs more than on the full
  // sequence. Efficiencies are fractions of the dense 16-bit peak at head dim 128 (as
  // `efficiency`), on the FLOPs of the band (keys per query: the window). keys 0: not
  // measured; a windowed layer is timed by the curve above at its keys per query.
  struct Window {
    double keys = 0;      // window of the measurement; > 0 with forward and backward
    double forward = 0;   // in (0, 1]
    double backward = 0;  // in (0, 1], on the backward's 2.5 forward passes of FLOPs
    // FP8 attention (training.fp8_attention): the backward kernel bounds its loop by the
    // causal mask only and applies the window as a per-element mask, so it computes the
    // whole causal triangle of the sequence; its efficiency on that triangle's FLOPs.
    // 0: as the 16-bit kernel (the band).
    double fp8_backward_full_causal = 0;
    bool Measured() const { return keys > 0; }
  } window;
};

// Transformer Engine's fused grouped MLP (plan.framework_options.fused_grouped_mlp: cuDNN
// frontend's CuTe-DSL block-scaled grouped GEMM kernels, MXFP8) as measured
// (gpu.fused_grouped_mlp): its six kernels over `experts` experts of `tokens_per_expert`
// tokens each, a SwiGLU MLP of `hidden` x `ffn` (FC1 2 x ffn wide), each kernel's speed
// as a fraction of the dense FP8 peak on its GEMM's FLOPs. The kernels: FC1 forward with
// the SwiGLU and the MXFP8 quantisation of its output in the epilogue; FC2 forward; FC2's
// input gradient with the SwiGLU's backward and the quantisation of its output; FC1's
// input gradient; the two weight gradients. experts 0: not measured.
struct FusedGroupedMlpSpec {
  // In this order (as FusedMlpKernel, sim/workload/kernel_shapes.h).
  enum Kernel : uint8_t { kFc1Fwd, kFc2Fwd, kFc2Dgrad, kFc1Dgrad, kFc1Wgrad, kFc2Wgrad, kKernels };
  double experts = 0;
  double tokens_per_expert = 0;
  double hidden = 0;
  double ffn = 0;
  std::array<double, kKernels> efficiency{};  // each in (0, 1]
  bool Measured() const { return experts > 0; }
};

// The GPU's architecture, where a feature depends on it (MXFP8 needs Blackwell).
enum class GpuArch : uint8_t { kUnspecified, kAmpere, kHopper, kBlackwell, kCdna2, kCdna3 };

struct GpuSpec {
  std::string kind = "A100-SXM4-80GB";
  GpuArch architecture = GpuArch::kUnspecified;
  double memory_gib = 80;
  double peak_tflops_bf16 = 312;
  double peak_tflops_fp16 = 312;
  double peak_tflops_fp8 = 0;  // 0: not supported
  double hbm_gbps = 2039;
  // What the shape-aware kernel model needs (EfficiencySpec::kernel_model); defaults: A100.
  int sms = 108;             // streaming multiprocessors (AMD: compute units)
  double gemm_tile_m = 256;  // output tile of one GEMM thread block, elements
  double gemm_tile_n = 128;
  double gemm_k_half = 128;  // k at which a GEMM tile reaches half its large-k rate
  FlashAttentionSpec flash_attention;
  FusedGroupedMlpSpec fused_grouped_mlp;

  double PeakTflops(Dtype d) const {
    switch (d) {
      case Dtype::kBf16:
        return peak_tflops_bf16;
      case Dtype::kFp16:
        return peak_tflops_fp16;
      case Dtype::kFp8:
        return peak_tflops_fp8;
    }
    return 0;
  }
};

// kTorus: a TPU slice (sim/hw/torus.h); a node of the cluster is one slice of chips, and
// inter_node is the data-centre network (DCN) between slices.
enum class IntraNodeKind { kNvswitch, kRing, kFullMesh, kTorus };
enum class InterNodeKind { kFatTree, kRailOptimized, kSingleSwitch };

// Whether the NVSwitch reduces in the switch (NVLink SHARP, NCCL's NVLS): kAuto derives it
// as NCCL does, from the GPU (Hopper or Blackwell, gpu.architecture or else gpu.kind) and
// an NVSwitch (intra_node.kind nvswitch); kOn / kOff force it (NCCL_NVLS_ENABLE=1 / 0).
enum class NvlsMode : uint8_t { kAuto, kOn, kOff };

struct IntraNodeSpec {
  IntraNodeKind kind = IntraNodeKind::kNvswitch;
  double gbps_per_gpu = 300;  // unidirectional bandwidth out of one GPU (torus: all ports)
  double latency_us = 2;      // torus: per ICI hop
  // kTorus only: the slice's shape and wrap-around links, and each ICI link's bandwidth
  // per direction (gbps_per_gpu is then gbps_per_link times the ports of a chip).
  TorusSpec torus;
  double gbps_per_link = 0;
  NvlsMode nvls = NvlsMode::kAuto;
};

struct InterNodeSpec {
  InterNodeKind kind = InterNodeKind::kFatTree;
  int nics_per_node = 8;
  double gbps_per_nic = 25;  // unidirectional
  double latency_us = 5;
  double oversubscription = 1.0;  // leaf downlink : uplink bandwidth ratio, >= 1
  int switch_ports = 32;          // NIC-facing ports of a leaf (or rail) switch
};

// How compute ops are timed: kRoofline, from their FLOPs and bytes alone; kShapes, from
// the shapes of their GEMMs and attention kernels (tile and wave quantization over the
// GPU's SMs, small k, FlashAttention efficiency by sequence length).
enum class KernelModelKind { kRoofline, kShapes };

// A measured GEMM throughput: C[m x n] = A[m x k] B[k x n], `batch` times in one kernel.
struct GemmMeasurement {
  double m = 0, n = 0, k = 0;
  double batch = 1;
  Dtype dtype = Dtype::kBf16;
  double tflops = 0;
};

// How much slower compute runs on a GPU while a communication kernel of each kind runs
// on it (NCCL kernels take SMs and HBM bandwidth): a compute op progresses at
// 1 / (1 + sum of the slowdowns of the communication ops in flight on its GPU).
// 0 everywhere: no interference.
//
// An NCCL all-reduce, all-gather or reduce-scatter holds one CTA, so one SM, per channel
// it runs on (NcclChoice::channels); by default (kFromKernel) the compute beside it runs on
// the other SMs: slowdown channels / (gpu.sms - channels), OfHeldSms. A number >= 0 is a
// fixed slowdown for every collective of that kind (a user's override). The all-to-all and
// point-to-point transfers keep fixed defaults: the 18.9 % mean compute slowdown measured
// with overlapped collectives by Lee et al., arXiv 2507.03114 (kStudyMean), and an estimate
// of a send/recv kernel's one or two SMs (README "Compute–communication interference").
struct CommInterference {
  static constexpr double kFromKernel = -1;  // the slowdown of the kernel's SMs (OfHeldSms)
  static constexpr double kStudyMean = 0.19;
  double all_reduce = kFromKernel;
  double all_gather = kFromKernel;
  double reduce_scatter = kFromKernel;
  double all_to_all = kStudyMean;
  double p2p = 0.02;  // send/recv of pipeline stages and ring attention's K/V shifts

  // The entry of `op`'s kind (kFromKernel or a slowdown >= 0).
  double Of(CommOp op) const {
    switch (op) {
      case CommOp::kAllReduce:
        return all_reduce;
      case CommOp::kAllGather:
        return all_gather;
      case CommOp::kReduceScatter:
        return reduce_scatter;
      case CommOp::kAllToAll:
      case CommOp::kExpertDispatch:
      case CommOp::kExpertCombine:
        return all_to_all;
      case CommOp::kSendRecv:
      case CommOp::kRingShift:
        return p2p;
    }
    return 0;
  }
  bool Off() const {
    return all_reduce == 0 && all_gather == 0 && reduce_scatter == 0 && all_to_all == 0 && p2p == 0;
  }
  // The slowdown of compute on a GPU of `gpu_sms` SMs while a kernel holds `held_sms` of
  // them: the compute runs on the rest, held / (gpu_sms - held) (at most `held` where the
  // kernel would leave fewer than one SM).
  static double OfHeldSms(double held_sms, int gpu_sms) {
    const double rest = gpu_sms - held_sms;
    return held_sms / (rest < 1 ? 1 : rest);
  }
};

// The fitted defaults of EfficiencySpec's grouped-GEMM factors, defined (with their fits'
// sources and numbers) in sim/hw/fitted_defaults.cc, so that a refit recompiles one file.
extern const double kGroupedGemmEfficiency;       // EfficiencySpec::grouped_gemm
extern const double kGmmEfficiency;               // EfficiencySpec::gmm
extern const double kFusedGroupedGemmEfficiency;  // EfficiencySpec::fused_grouped_gemm

// Fractions of the peak that real kernels and collectives reach.
struct EfficiencySpec {
  double matmul = 0.75;
  double matmul_fp8 = -1;  // of the fp8 peak, by FP8 GEMMs; < 0: same as matmul
  double memory = 0.85;
  double network = 0.85;          // of GPU-to-GPU links inside a node
  double nic = -1;                // of NICs and the fabric; < 0: same as network
  double kernel_overhead_us = 0;  // fixed time per kernel launch (launch + tail)
  // Of matmul (matmul_fp8), what the routed experts' GEMMs reach when Transformer Engine's
  // GroupedLinear runs them unfused, one cuBLAS GEMM per local expert (kernel model
  // shapes; ShapeModelParams::grouped_gemm_efficiency). Default: kGroupedGemmEfficiency.
  double grouped_gemm = kGroupedGemmEfficiency;
  // The same for the grouped_gemm library's per-expert cuBLAS GEMMs (plan.moe_grouped_gemm:
  // gmm; ShapeModelParams::gmm_efficiency). Default: kGmmEfficiency.
  double gmm = kGmmEfficiency;
  // A factor on the speed of Transformer Engine's fused grouped MLP kernels
  // (plan.framework_options.fused_grouped_mlp: one CuTe-DSL grouped kernel per GEMM over
  // the local experts; ShapeModelParams::fused_grouped_gemm_efficiency): of their measured
  // speed (GpuSpec::fused_grouped_mlp), else of the FP8 GEMM rate. Default:
  // kFusedGroupedGemmEfficiency.
  double fused_grouped_gemm = kFusedGroupedGemmEfficiency;
  KernelModelKind kernel_model = KernelModelKind::kShapes;
  std::vector<GemmMeasurement> gemm_table;  // overrides the GEMM model where it has a shape
  CommInterference comm_interference;
  double MatmulFp8() const { return matmul_fp8 < 0 ? matmul : matmul_fp8; }
};

// The host CPU of each GPU's rank: one thread per rank issues its kernels
// (sim/schedule/host_launch.h). launch_us: host time per kernel launch, the PyTorch eager
// op's whole CPU path (Python, autograd, the ATen dispatcher, the library's setup and
// cudaLaunchKernel), about 5-25 us per op on x86 hosts (J. Lin, "From PyTorch op to kernel
// launch", https://jiahuanglin.xyz/all_lessons/gpu_kernel_serving/18_pytorch_to_kernel.html:
// Python ~1, binding ~1, autograd 1-3, dispatcher 1-2, library 1-5, cudaLaunchKernel 1-3 us).
// 0: no host model (the GPU never waits for its CPU; the programs have no host ops).
// expert_us: host time per local expert of each GEMM call of Transformer Engine's
// GroupedLinear (the MoE experts' unfused GEMMs), which costs one launch for the call and
// expert_us per local expert: its per-expert Python (grouped_linear.py loops over the
// experts' quantizers, FP8 weight workspaces, saved tensors and main_grad hooks), its
// per-expert quantize in split_quantize's C++ loop and its per-expert cuBLAS GEMM in
// te_general_grouped_gemm's (sim/schedule/host_launch.h, GroupedGemmExpertUnits). < 0
// (unset): launch_us.
// call_us: host time of each such GroupedLinear call itself, in place of its one launch:
// the module's Python and autograd path that does not repeat per expert (argument checks,
// the input's split sizes and reshape, the autograd Function, the output's allocation and
// the grouped GEMM's setup). < 0 (unset): launch_us.
struct HostSpec {
  double launch_us = 0;
  double expert_us = -1;
  double call_us = -1;
  double ExpertUs() const { return expert_us < 0 ? launch_us : expert_us; }
  double CallUs() const { return call_us < 0 ? launch_us : call_us; }
};

// What-if changes to the hardware. Links are named as Topology names them (both
// directions change): "node1.gpu3.nvlink", "node1.nic3", "leaf0.spine2", "rail3.0.spine1".
struct LinkChange {
  std::string link;
  double bandwidth_factor = 1.0;  // 0 < factor; ignored when failed
  bool failed = false;
};
struct Straggler {
  int gpu = 0;
  double slowdown = 1.0;  // compute takes this many times longer
};
struct WhatIfSpec {
  std::vector<LinkChange> links;
  std::vector<Straggler> stragglers;
  bool Empty() const { return links.empty() && stragglers.empty(); }
};

enum class NetworkModelKind { kFlow, kAlphaBeta };
// In symmetric replay, which traffic of the groups that are not replayed (mirrors) the flow
// network simulates: kNear, the mirror coflows that cross a link replayed traffic crosses,
// directly or through other simulated mirrors (the others are counted on their links, not
// simulated: sim/net/mirror_traffic.h); kFull, all of them.
enum class MirrorTraffic { kNear, kFull };

// The largest cluster (nodes x gpus_per_node) the config layer accepts: 2^24 GPUs, so that
// GPU counts and products of plan degrees equal to them fit an int. Fuzzing builds
// (FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION, the libFuzzer convention; MESHSIM_FUZZ
// defines it) accept 2^14, so that every input loads in well under a second there.
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
inline constexpr int kMaxClusterGpus = 1 << 14;
#else
inline constexpr int kMaxClusterGpus = 1 << 24;
#endif

struct ClusterSpec {
  std::string name;
  GpuSpec gpu;
  int nodes = 1;
  int gpus_per_node = 8;
  // Nodes whose GPUs share one NVLink switch fabric (a scale-up domain larger than a node:
  // GB200 NVL72 joins 18 trays of 4 GPUs). 1: each node is its own NVLink domain.
  // Precondition (DecodeCluster checks it): nodes <= nvlink_domain_nodes (one domain,
  // perhaps partly filled) or nodes a multiple of it.
  int nvlink_domain_nodes = 1;
  IntraNodeSpec intra_node;
  InterNodeSpec inter_node;
  EfficiencySpec efficiency;
  HostSpec host;
  WhatIfSpec what_if;
  // kFlow: flows over the topology graph with max-min sharing; kAlphaBeta: per link class.
  NetworkModelKind network_model = NetworkModelKind::kFlow;
  MirrorTraffic mirror_traffic = MirrorTraffic::kNear;

  // Precondition: nodes * gpus_per_node <= kMaxClusterGpus (DecodeCluster checks it).
  int TotalGpus() const { return nodes * gpus_per_node; }
  int NodesPerDomain() const { return std::min(nodes, nvlink_domain_nodes); }
  int GpusPerDomain() const { return NodesPerDomain() * gpus_per_node; }
  // The cluster as the network sees it: each NVLink domain is one node, of GpusPerDomain()
  // GPUs behind one NVSwitch, with the NICs of all its nodes. Topology, collectives and
  // link names ("node1.gpu70.nvlink": GPU 70 of domain 1) count domains as nodes. The
  // identity when nvlink_domain_nodes is 1.
  ClusterSpec NetworkView() const {
    ClusterSpec v = *this;
    const int k = NodesPerDomain();
    v.nodes = nodes / k;
    v.gpus_per_node = gpus_per_node * k;
    v.inter_node.nics_per_node = inter_node.nics_per_node * k;
    v.nvlink_domain_nodes = 1;
    return v;
  }
  bool Torus() const { return intra_node.kind == IntraNodeKind::kTorus; }
  double NicEfficiency() const { return efficiency.nic < 0 ? efficiency.network : efficiency.nic; }
};

}  // namespace meshsim

// Plain description of a parallelism plan and training settings, as read from YAML.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/collective_kinds.h"
#include "sim/core/dtype.h"
#include "sim/plan/framework.h"
#include "sim/plan/jax_plan.h"
#include "sim/workload/model_spec.h"
#include "sim/workload/transformer.h"

namespace meshsim {

enum class ScheduleKind { kGpipe, kOneFOneB, kInterleaved };

// The mesh axes, in the order they may appear in mesh_order.
enum class Axis : uint8_t { kTp, kCp, kEp, kDp, kPp };
constexpr int kAxisCount = 5;

struct PlanSpec {
  int tp = 1;
  int pp = 1;
  int dp = 1;
  int cp = 1;
  int ep = 1;
  int zero = 0;  // 0 none, 1 optimizer states, 2 + gradients, 3 + parameters
  bool sequence_parallel = false;
  Recompute recompute = Recompute::kNone;
  // Under recompute selective, the modules re-run (transformer.h RecomputeModules;
  // plan.recompute_modules); default core_attn.
  RecomputeModules recompute_modules;
  // Activation offloading to host memory (Megatron-Core --cpu-offloading with
  // --cpu-offloading-num-layers, run by Transformer Engine's cpu_offload): the stored
  // activations of the model's first cpu_offload_layers layers are copied to the host
  // after their forward and copied back before their backward, so that at most
  // layers - cpu_offload_layers layers' activations are on the GPU at once
  // (sim/schedule/activation_offload.cc). 0: none. As in Megatron-Core: < the model's
  // layers, pp = 1 and no recomputation.
  int cpu_offload_layers = 0;
  ScheduleKind schedule = ScheduleKind::kOneFOneB;
  int virtual_stages = 1;
  // Layers per virtual stage (chunk c of stage s at c*pp + s), summing to the model's
  // layers; empty: the default split (sim/plan/stages.h: even, or Megatron-LM's with the
  // embedding and the loss counted as a layer each when pp*virtual_stages does not divide
  // the layers).
  std::vector<int> stage_layers;
  int micro_batch = 1;
  int global_batch = 1;
  // Innermost axis first. ep is folded into tp x dp x cp (Megatron-Core), so it does not
  // occupy ranks of its own; its position is kept for the record.
  std::array<Axis, kAxisCount> mesh_order{Axis::kTp, Axis::kCp, Axis::kEp, Axis::kDp, Axis::kPp};
  int64_t dp_bucket_bytes = 25'000'000;  // gradient bucket size (PyTorch DDP default 25 MB)
  // The largest bucket a plan may name: 1e15 bytes (1 PB) is far above any model, and
  // its byte count fits an int64 with room to add.
  static constexpr double kMaxDpBucketBytes = 1e15;
  // Pipeline sends overlap later compute (Megatron-Core --overlap-p2p-communication).
  // false: the stage waits for its send to finish, as Megatron-LM's batched
  // isend/irecv followed by a synchronize does.
  bool overlap_p2p = false;
  // Transformer Engine's TP communication overlap (Megatron --tp-comm-overlap): with
  // sequence parallelism and tp > 1, the all-gathers before the first GEMM of a block and
  // the reduce-scatters after its last GEMM run as ring exchanges of tp chunks pipelined
  // with the GEMM cut into tp chunks (sim/schedule/tp_overlap.cc); no effect otherwise.
  bool tp_comm_overlap = false;
  // Collectives overlap compute (each on its own stream), as NCCL and XLA's latency-hiding
  // scheduler run them. false (a JAX-style plan's plan.xla.async_collectives): every
  // collective but the pipeline's sends and receives runs on the compute stream, in
  // program order (sim/schedule/program.h SerializeCollectives).
  bool async_collectives = true;
  // How all-reduces run on the flow-level network: auto picks per size and placement.
  AllReduceAlgorithm allreduce_algorithm = AllReduceAlgorithm::kAuto;
  // MoE routing what-if: the busiest expert gets moe_skew times the average tokens (the
  // others share the rest evenly); with moe_capacity_factor > 0 an expert takes at most
  // that many times the average (the excess tokens are dropped).
  double moe_skew = 1.0;
  double moe_capacity_factor = 0.0;
  // The MoE token dispatcher (transformer.h MoeDispatcher): its permutation kernels.
  MoeDispatcher moe_dispatcher = MoeDispatcher::kAllToAll;
  // The library behind the flex dispatcher (Megatron-Core moe_flex_dispatcher_backend,
  // default "deepep"): with HybridEP each forward dispatch first all-gathers the routing
  // map over the EP group (sim/schedule/moe_blocks.cc).
  MoeFlexBackend moe_flex_backend = MoeFlexBackend::kDeepEp;
  // The library of the routed experts' GEMMs (transformer.h MoeGroupedGemm).
  MoeGroupedGemm moe_grouped_gemm = MoeGroupedGemm::kTe;
  // How tokens pick their experts (core/expert_routing.h MoeRouting): where the flex
  // dispatcher sends them.
  MoeRouting moe_routing = MoeRouting::kRandom;
  // A JAX-style plan (plan.mesh, plan.rules): the mesh and rules that tp, pp, dp, cp, ep,
  // zero, sequence_parallel and mesh_order were derived from (sim/plan/sharding.h);
  // empty for a plan that names its degrees.
  JaxPlan jax;
  // How the DP/ZeRO traffic is cut into collectives and overlapped (sim/plan/framework.h);
  // the options of other frameworks than `framework` keep their defaults.
  Framework framework = Framework::kMegatron;
  FrameworkOptions framework_options;

  // Precondition (both): a plan that ValidatePlan accepted, so that no product overflows.
  int Ranks() const { return tp * pp * dp * cp; }
  int MicroBatches() const { return global_batch / (micro_batch * dp); }
  // Expert parallelism folds over the TP ranks too, as Megatron-Core's does with expert
  // tensor parallelism 1 (sim/plan/mesh.h); a JAX plan's experts rule names batch and
  // sequence axes only, so its EP groups stay within the dp x cp ranks of one tp index.
  bool ExpertsFoldTp() const { return jax.Empty(); }
  // The ranks that hold the same experts and reduce their gradients (MoE models).
  int ExpertDataDegree() const { return (ExpertsFoldTp() ? tp : 1) * dp * cp / ep; }
};

// The regions of a step captured in CUDA graphs, as Megatron-Core captures them
// (--cuda-graph-impl transformer_engine with --cuda-graph-scope attn, mlp, moe_router,
// moe_preprocess; --cuda-graph-impl full_iteration): the host launches a captured region
// once, forward and backward (sim/schedule/host_launch.h). Read only with a host model
// (cluster.host.launch_us > 0). All false: eager.
struct CudaGraphScope {
  bool attn = false;            // each layer's attention block, with its TP collectives
  bool mlp = false;             // each dense layer's MLP block
  bool moe_router = false;      // each MoE layer's router
  bool moe_preprocess = false;  // with moe_router: the dispatch's token-count preprocessing
  bool mamba = false;           // each hybrid model's Mamba-2 mixer block
  bool full_iteration = false;  // the whole step: one launch, no host synchronisation
  bool Any() const {
    return attn || mlp || moe_router || moe_preprocess || mamba || full_iteration;
  }
};

// Which fused cross entropy runs the loss (Megatron-Core --cross-entropy-fusion-impl, read
// only with TrainingSpec::cross_entropy_fusion; StepBuilder::LogitsWork counts its bytes):
//  - kNative: Megatron-Core's fused vocab-parallel cross entropy over fp32 logits (the
//    default of Megatron-Core's flag);
//  - kTe: Transformer Engine's Triton kernel (transformer_engine/pytorch/triton/
//    cross_entropy.py, an online softmax), which reads the bf16 logits twice and writes the
//    gradient over them; Megatron-Bridge's recipes set it.
//  - kTorch, kTorchFp32: PyTorch's F.cross_entropy (log_softmax, then nll_loss), eager, as
//    NeMo-Automodel's MaskedCrossEntropy calls it (nemo_automodel/components/loss/
//    masked_ce.py): over the logits as the output layer writes them (kTorch, its
//    fp32_upcast false, which the Automodel MoE benchmark configs set) or cast to fp32 first
//    (kTorchFp32, fp32_upcast true, its default).
enum class CrossEntropyImpl : uint8_t { kNative, kTe, kTorch, kTorchFp32 };

struct TrainingSpec {
  Dtype dtype = Dtype::kBf16;
  Optimizer optimizer = Optimizer::kAdam;
  GradAccumDtype grad_accum_dtype = GradAccumDtype::kSame;
  bool flash_attention = false;  // fused attention: no stored a*s*s scores
  // The loss over the logits as one fused kernel (Megatron-Core --cross-entropy-loss-fusion,
  // Megatron-Bridge's cross_entropy_loss_fusion); false: Megatron-Core's unfused
  // vocab-parallel cross entropy, Megatron-LM's default (StepBuilder::LogitsWork).
  bool cross_entropy_fusion = true;
  CrossEntropyImpl cross_entropy_impl = CrossEntropyImpl::kNative;
  // A squared-ReLU MLP's activation (FfnKind::kSquaredRelu) is one fused element-wise
  // kernel per pass, as Megatron-Core builds it: megatron/core/activations.py squared_relu
  // is decorated @jit_fuser, which megatron/core/jit.py makes torch.compile on PyTorch >=
  // 2.2 (NVIDIA/Megatron-LM @ 0ef95585, 00caa53a; Megatron-Bridge's Nemotron-H providers
  // take it). false: the eager pair torch.pow(F.relu(x), 2), two kernels per pass, as
  // NeMo's Nemotron configs define it without a fuser (nemo/collections/llm/fn/
  // activation.py @ NVIDIA/NeMo 1430ee4c, "#@torch.jit.script # remove until we have
  // serialization"; NeMo 1's activation_to_func 'squared-relu' takes the plain function of
  // nemo/collections/nlp/modules/common/megatron/utils.py) and Megatron-Bridge's
  // NemotronModelProvider (Nemotron-3/4 dense) its own plain squared_relu.
  bool squared_relu_fusion = true;
  // Read only when dtype is kFp8.
  Fp8Recipe fp8_recipe = Fp8Recipe::kDelayed;
  // Transformer Engine runs its norms with cuDNN (NVTE_NORM_FWD_USE_CUDNN=1, as Megatron-
  // Bridge's perf scripts set it for some recipes): under current scaling the norm then
  // writes BF16 without its amax, and the cast of a LayerNormLinear's input pays the amax
  // pass like any other (GemmShape::amax_fused is ignored). Read only under current scaling.
  bool cudnn_norm = false;
  // FP8 primary weights (Megatron-Core --fp8-param-gather, TE's fp8_model_init): the model
  // keeps its weights only as TE's FP8 tensors, with no 16-bit copy beside them; the
  // optimizer casts its fp32 master weights straight to FP8. Read only when dtype is kFp8.
  bool fp8_param_gather = false;
  // FP8 dot-product attention (Megatron-Core --fp8-dot-product-attention, Megatron-Bridge
  // mixed_precision.fp8_dot_product_attention): Transformer Engine's fused attention runs
  // in FP8. Costed as the 16-bit kernels except where the GPU's measurements say otherwise
  // (GpuSpec::flash_attention.window.fp8_backward_full_causal). Read only when dtype is kFp8.
  bool fp8_attention = false;
  MomentsDtype moments_dtype = MomentsDtype::kFp32;
  // fp32 master weights in the optimizer (mixed precision). false: the optimizer updates
  // the 16-bit parameters in place, its state only the moments (PyTorch's optimizers on
  // bf16 parameters, as NeMo-Automodel's FSDP2 recipes run them).
  bool master_weights = true;
  CudaGraphScope cuda_graphs;
};

}  // namespace meshsim

// Megatron-LM arguments -> experiment YAML (`meshsim import megatron`).
//
// Pure functions: the argument string in, option structs and the experiment's YAML text
// out; the CLI reads the cluster file and writes the output.
//
// Every flag is classified in a table (megatron_args.cc): (a) mapped to an experiment key,
// (b) read but not modelled although it changes the real step (one line per flag in
// `not_modelled`, saying what meshsim assumes instead), (c) changing nothing meshsim
// simulates (accepted silently). Anything else is collected in `unknown`; never an error.
// A malformed value (a word where an integer is expected) is an InputError naming the
// flag.
//
// Mapping (Megatron's defaults where a flag is absent):
//   model: --num-layers, --hidden-size, --num-attention-heads, --num-query-groups (only
//     with --group-query-attention), --ffn-hidden-size (4*hidden; with --swiglu
//     int(8*hidden/3/64)*64), --swiglu / --quick-geglu (gated: ffn_kind swiglu),
//     --seq-length (else --max-position-embeddings), --padded-vocab-size, or --vocab-size
//     padded to a multiple of --make-vocab-size-divisible-by (128) * tp, or 51200; tied
//     embeddings unless --untie-embeddings-and-output-weights; --num-experts,
//     --moe-router-topk (2), --moe-ffn-hidden-size (ffn hidden),
//     --moe-shared-expert-intermediate-size, --moe-layer-freq (an integer, or a list such
//     as "([0]*3+[1]*58)").
//   plan: --tensor-/--pipeline-model-parallel-size, --context-parallel-size,
//     --expert-model-parallel-size, dp = world / (tp*pp*cp) with the world size from
//     --world-size (meshsim's own flag) or the CLI's --nodes; --micro-batch-size (1),
//     --global-batch-size (micro*dp), --sequence-parallel, --recompute-granularity
//     full|selective, --recompute-activations (selective) or --checkpoint-activations
//     (full), --recompute-modules (plan.recompute_modules: core_attn, layernorm, moe_act,
//     mlp, mla_up_proj; moe and shared_experts reported as not modelled), --recompute-method and
//     --recompute-num-layers (meshsim recomputes whole layers),
//     --num-layers-per-virtual-pipeline-stage N (interleaved, layers/(pp*N) chunks) or
//     --num-virtual-stages-per-pipeline-rank, --use-distributed-optimizer (zero 1),
//     --use-megatron-fsdp with --data-parallel-sharding-strategy (zero 0-3),
//     --use-torch-fsdp2 (zero 3; 2 with --torch-fsdp2-no-reshard-after-forward),
//     --[no-]overlap-p2p-communication (interleaved only, as Megatron), dp_bucket_mb from
//     --overlap-grad-reduce and --ddp-bucket-size, --overlap-param-gather (with the
//     distributed optimizer: framework_options.overlap_param_gather),
//     --moe-expert-capacity-factor; the MoE options plan.framework_options models:
//     --use-transformer-engine-op-fuser (fused_grouped_mlp, with MXFP8 and a gated MLP),
//     --moe-paged-stash (with it and HybridEP), --moe-flex-dispatcher-num-sms or the
//     deprecated --moe-hybridep-num-sms / --moe-deepep-num-sms, --overlap-moe-expert-parallel-comm
//     (where meshsim models it), --overlap-dispatch-backward-with-experts-wgrad.
//   training: --bf16 | --fp16 | --fp8-format (dtype), --optimizer adam|sgd,
//     grad_accum_dtype fp32 (Megatron's main_grad; same with --grad-reduce-in-bf16),
//     flash_attention from --use-flash-attn or --attention-backend flash|fused|auto,
//     fp8_param_gather from --fp8-param-gather, fp8_attention from
//     --fp8-dot-product-attention (with --fp8-format), moments_dtype bf16 from
//     --use-precision-aware-optimizer with --exp-avg-dtype and --exp-avg-sq-dtype bf16;
//     plan.cpu_offload_layers from --cpu-offloading --cpu-offloading-num-layers.
// Flags read and checked against what meshsim models, warned when they differ:
//   --expert-tensor-parallel-size (default tp; meshsim: 1), --moe-token-dispatcher-type
//   (default allgather; meshsim: alltoall), --moe-grouped-gemm (meshsim: grouped),
//   --cp-comm-type (meshsim: p2p),
//   --fp8-recipe (delayed, tensorwise), --num-distributed-optimizer-instances (1),
//   --cuda-graph-impl (none), --optimizer (adam, sgd), --fp16 without
//   --accumulate-allreduce-grads-in-fp32.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/status.h"
#include "sim/plan/plan_spec.h"
#include "sim/workload/model_spec.h"

namespace meshsim {

// The `file` of every InputError of this importer.
inline constexpr const char* kMegatronSource = "megatron arguments";

struct MegatronImport {
  ModelSpec model;
  PlanSpec plan;  // dp (and global_batch when not given) set by ResolveMegatronWorld
  TrainingSpec training;
  int world_size = 0;  // --world-size; 0 when absent
  bool global_batch_given = false;
  std::vector<std::string> args;          // the arguments, one token each
  bool overlap_grad_reduce = false;       // --overlap-grad-reduce
  int64_t ddp_bucket_params = 0;          // --ddp-bucket-size; 0: Megatron's default
  std::vector<std::string> unknown;       // flags meshsim does not know, with their values
  std::vector<std::string> not_modelled;  // "--flag value is not modelled: what meshsim
                                          // assumes instead", one per flag
  std::vector<std::string> warnings;      // approximations and ignored tokens
  std::vector<std::string> notes;         // Megatron defaults used and derivations, for the header
};

// Splits shell-like text into words: blanks separate, '...' and "..." quote, a backslash
// escapes the next character, a backslash-newline joins lines.
Result<std::vector<std::string>> SplitShellWords(const std::string& text);

// Parses Megatron-LM arguments (one string, split as a shell would).
Result<MegatronImport> ParseMegatronArgs(const std::string& args);

// Completes the plan for a cluster with `gpus_per_node` GPUs per node: the world size is
// --world-size, or nodes * gpus_per_node when `nodes` > 0 (both: they must agree);
// dp = world / (tp*pp*cp); the DP bucket: with --overlap-grad-reduce --ddp-bucket-size
// parameters, else Megatron's max(40M, 1M * dp*cp); without it one bucket holding all
// gradients (reduced after the backward pass). Returns the number of nodes; a world smaller than
// one node sets *gpus_per_node_override to the world size (else it is left 0).
Result<int> ResolveMegatronWorld(MegatronImport* run, int gpus_per_node, int nodes,
                                 int* gpus_per_node_override);

// The experiment YAML: a comment header (the arguments, defaults used, derivations,
// approximations, flags not modelled, unknown flags), then name, the model as an inline mapping,
// cluster (path as given), cluster_overrides, plan and training.
std::string MegatronExperimentYaml(const MegatronImport& run, const std::string& name,
                                   const std::string& cluster_path, int nodes,
                                   int gpus_per_node_override);

// The Megatron flag that sets an experiment key ("plan.tp" ->
// "--tensor-model-parallel-size"), for errors found when the experiment is validated;
// empty when none does.
std::string MegatronFlagOf(const std::string& key);

}  // namespace meshsim

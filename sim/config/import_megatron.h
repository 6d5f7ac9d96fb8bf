// Megatron-LM arguments -> experiment YAML (`meshsim import megatron`).
//
// Pure functions: the argument string in, option structs and the experiment's YAML text
// out; the CLI reads the cluster file and writes the output.
//
// Mapping (Megatron's defaults where a flag is absent):
//   model: --num-layers, --hidden-size, --num-attention-heads, --num-query-groups (only
//     with --group-query-attention), --ffn-hidden-size (4*hidden; with --swiglu
//     int(8*hidden/3/64)*64), --swiglu, --seq-length (else --max-position-embeddings),
//     --padded-vocab-size, or --vocab-size padded to a multiple of
//     --make-vocab-size-divisible-by (128) * tp, or 51200; tied embeddings unless
//     --untie-embeddings-and-output-weights; --num-experts, --moe-router-topk (2),
//     --moe-ffn-hidden-size (ffn hidden), --moe-shared-expert-intermediate-size,
//     --moe-layer-freq (an integer, or a list such as "([0]*3+[1]*58)").
//   plan: --tensor-/--pipeline-model-parallel-size, --context-parallel-size,
//     --expert-model-parallel-size, dp = world / (tp*pp*cp) with the world size from
//     --world-size (meshsim's own flag) or the CLI's --nodes; --micro-batch-size (1),
//     --global-batch-size (micro*dp), --sequence-parallel, --recompute-granularity
//     full|selective or --recompute-activations (selective), --recompute-method and
//     --recompute-num-layers (accepted; meshsim recomputes whole layers),
//     --num-layers-per-virtual-pipeline-stage N (interleaved, layers/(pp*N) chunks) or
//     --num-virtual-stages-per-pipeline-rank, --use-distributed-optimizer (zero 1),
//     --overlap-p2p-communication.
//   training: --bf16 | --fp16 | --fp8-format (dtype), --optimizer adam|sgd,
//     grad_accum_dtype fp32 (Megatron's main_grad).
// Unknown flags are collected for a warning, never an error; a malformed value (a word
// where an integer is expected) is an InputError naming the flag.
#pragma once

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
  std::vector<std::string> args;      // the arguments, one token each
  std::vector<std::string> unknown;   // flags meshsim does not know, with their values
  std::vector<std::string> warnings;  // approximations and ignored tokens
  std::vector<std::string> notes;     // Megatron defaults used and derivations, for the header
};

// Splits shell-like text into words: blanks separate, '...' and "..." quote, a backslash
// escapes the next character, a backslash-newline joins lines.
Result<std::vector<std::string>> SplitShellWords(const std::string& text);

// Parses Megatron-LM arguments (one string, split as a shell would).
Result<MegatronImport> ParseMegatronArgs(const std::string& args);

// Completes the plan for a cluster with `gpus_per_node` GPUs per node: the world size is
// --world-size, or nodes * gpus_per_node when `nodes` > 0 (both: they must agree);
// dp = world / (tp*pp*cp). Returns the number of nodes; a world smaller than one node
// sets *gpus_per_node_override to the world size (else it is left 0).
Result<int> ResolveMegatronWorld(MegatronImport* run, int gpus_per_node, int nodes,
                                 int* gpus_per_node_override);

// The experiment YAML: a comment header (the arguments, defaults used, derivations,
// ignored flags), then name, the model as an inline mapping, cluster (path as given),
// cluster_overrides, plan and training.
std::string MegatronExperimentYaml(const MegatronImport& run, const std::string& name,
                                   const std::string& cluster_path, int nodes,
                                   int gpus_per_node_override);

// The Megatron flag that sets an experiment key ("plan.tp" ->
// "--tensor-model-parallel-size"), for errors found when the experiment is validated;
// empty when none does.
std::string MegatronFlagOf(const std::string& key);

}  // namespace meshsim

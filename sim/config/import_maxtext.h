// MaxText configuration -> experiment YAML with a JAX-style plan (`meshsim import maxtext`).
//
// Pure functions: the texts of a base config (MaxText's base.yml or a copy) and of an
// optional model config, and KEY=VALUE overrides in, an experiment out; the CLI reads the
// files and the cluster and writes the output. The layers are merged as MaxText's pyconfig
// does, later winning key by key: base, model, overrides (MaxText itself refuses a key set
// by both the model config and the command line; meshsim lets the command line win).
// A key no layer sets takes its value in MaxText's base.yml @76bd53b0 (2023-12-15, the
// commit of the published v5p/v5e tables), listed in the output's header.
//
// Mapping:
//   model: global_parameter_scale s (a power of 2) scales base_emb_dim,
//     base_num_query_heads (or base_num_heads), base_num_kv_heads (default: the query
//     heads), base_mlp_dim and base_num_decoder_layers as MaxText's get_individual_scales
//     does (log2 s = 3b + r: heads, kv heads and mlp x 2^(b + [r>0]), emb x 2^(b + [r>1]),
//     layers x 2^b); head_dim; vocab_size; mlp_activations (two or more: a gated MLP,
//     ffn_kind swiglu; one: gelu, 2 matrices); logits_via_embedding (tied_embeddings);
//     max_target_length (seq_len); num_experts > 1 with num_experts_per_tok (top_k),
//     each expert of mlp_dim.
//   plan: the mesh and rules of sim/config/maxtext_mesh.h; per_device_batch_size p over C
//     chips gives global_batch floor(p * C) (MaxText's global_batch_size_to_train_on);
//     micro_batch = global_batch / (batch-axes size x gradient_accumulation_steps x
//     pipeline micro-batches), the last being num_pipeline_microbatches (-1: the stages)
//     when layers are on a `stage` axis (schedule gpipe), else 1; remat_policy (the table
//     in import_maxtext.cc: full and none exactly, the others approximated as selective or
//     full); capacity_factor > 0 (moe_capacity_factor).
//   training: dtype bfloat16 (bf16) or float16 (fp16); weight_dtype float32 (MaxText's
//     default: fp32 parameters and gradients) as grad_accum_dtype fp32; opt_type adamw/adam
//     (adam) or sgd; attention flash, cudnn_flash_te, gpu_flash, ... (flash_attention).
// Keys that change the real step but not the simulated one (int8_training, quantization,
// float32 activations, adafactor, host offloading, MaxText's parallel decoder block) are
// lines of `not_modelled`; keys with no effect on a step (paths, logging, learning rate,
// ...) are accepted silently; other keys are listed in `unknown`. A malformed value is an
// InputError at its file:line:column (or the command line) naming the MaxText key.
#pragma once

#include <string>
#include <vector>

#include "sim/core/status.h"
#include "sim/plan/plan_spec.h"
#include "sim/workload/model_spec.h"

namespace meshsim {

struct MaxTextFile {
  std::string file;  // for messages and the header; empty: no such layer
  std::string text;
};

struct MaxTextImportOptions {
  MaxTextFile base;
  MaxTextFile model;                   // MaxText's configs/models/NAME.yml; file empty: none
  std::vector<std::string> overrides;  // KEY=VALUE, as MaxText's command line takes them
  int slices = 0;                      // DCN slices (cluster nodes); 0: the product of the
                                       // dcn_*_parallelism values other than -1
  int chips_per_slice = 0;             // chips of one slice (gpus_per_node); >= 1
  std::vector<int> slice_shape;        // a TPU slice's torus ([4, 4, 8]), multiplying to
                                       // chips_per_slice; empty: the cluster's
  std::string name;                    // the model's name
  // The topology the experiment runs on (the CLI's --topology): a TPU torus turns on
  // collective matmul as libtpu does, and a slice of another size than its
  // gpus_per_node keeps its DCN NICs per chip (0: unknown, nothing scaled).
  bool torus = false;
  int cluster_gpus_per_node = 0;
  int cluster_nics_per_node = 0;
};

struct MaxTextImport {
  ModelSpec model;
  PlanSpec plan;  // plan.jax set; tp, dp, ... are derived when the experiment is loaded
  TrainingSpec training;
  int slices = 1;
  int chips_per_slice = 1;
  std::vector<int> slice_shape;           // empty: not written
  int nics_per_slice = 0;                 // the DCN NICs of a slice; 0: not written
  std::vector<std::string> notes;         // derivations and defaults used, for the header
  std::vector<std::string> warnings;      // approximations
  std::vector<std::string> not_modelled;  // "key value is not modelled: ...", one per key
  std::vector<std::string> unknown;       // keys meshsim does not know, as KEY=VALUE
};

Result<MaxTextImport> ImportMaxTextConfig(const MaxTextImportOptions& options);

// The model_name the base config and the overrides set ("default" when none does), so
// that the CLI can look up models/NAME.yml next to the base config as MaxText does.
Result<std::string> MaxTextModelName(const MaxTextFile& base,
                                     const std::vector<std::string>& overrides);

// The experiment YAML: a comment header (`command`, the sources, parameter count, notes,
// approximations, keys not modelled, unknown keys; every byte printable), then name, the
// model inline, cluster (the path as given), cluster_overrides (nodes: the slices;
// gpus_per_node: the chips of a slice unless equal to `cluster_gpus_per_node`;
// intra_node.torus: the slice shape when given; inter_node.nics_per_node: nics_per_slice
// when > 0), the plan (mesh, rules, xla when collective_matmul is on, recompute, schedule,
// micro_batch, global_batch) and training.
std::string MaxTextExperimentYaml(const MaxTextImport& run, const std::string& name,
                                  const std::string& cluster_path, int cluster_gpus_per_node,
                                  const std::string& command);

// The MaxText key behind an experiment key ("plan.micro_batch" -> "per_device_batch_size"),
// for errors found when the experiment is validated; empty when none is.
std::string MaxTextKeyOf(const std::string& experiment_key);

}  // namespace meshsim

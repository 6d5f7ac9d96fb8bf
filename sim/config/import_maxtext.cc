#include "sim/config/import_maxtext.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <regex>
#include <sstream>

#include "sim/config/import_hf.h"
#include "sim/config/maxtext_config.h"
#include "sim/config/maxtext_mesh.h"
#include "sim/plan/plan_names.h"
#include "sim/workload/param_count.h"

namespace meshsim {
namespace {

using config::ConfigError;
using config::MaxTextConfig;

std::string N(int64_t v) { return std::to_string(v); }

std::string Number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.15g", v);
  return buf;
}

constexpr int64_t kMaxDim = 1 << 20;    // any one base dimension or count
constexpr int64_t kMaxChips = 1 << 24;  // slices x chips (kMaxClusterGpus at most)

// MaxText's get_individual_scales: log2(scale) = 3b + r.
struct Scales {
  int emb, heads, mlp, layers;
};
Scales IndividualScales(const MaxTextConfig& c, int64_t scale) {
  int log2 = 0;
  while ((int64_t{1} << (log2 + 1)) <= scale) ++log2;
  if ((int64_t{1} << log2) != scale) {
    c.Fail("global_parameter_scale", "expected a power of 2, found " + N(scale));
  }
  const int b = log2 / 3, r = log2 % 3;
  const int heads = b + (r > 0 ? 1 : 0);
  return {b + (r > 1 ? 1 : 0), heads, heads, b};
}

// mlp_activations: two or more (["silu", "linear"]) are a gated MLP.
FfnKind DecodeActivations(const MaxTextConfig& c, MaxTextImport* out) {
  const std::vector<std::string> acts = c.StringList("mlp_activations", {"relu"});
  if (acts.empty()) c.Fail("mlp_activations", "expected 1 or more activation names, found []");
  std::string list;
  for (const std::string& a : acts) list += (list.empty() ? "" : ", ") + a;
  if (acts.size() >= 2) {
    if (acts.size() > 2) {
      out->warnings.push_back("mlp_activations [" + list + "] (" +
                              N(static_cast<int64_t>(acts.size())) +
                              " input projections) is modelled as a gated MLP of 3 matrices");
    }
    return FfnKind::kSwiglu;
  }
  if (acts[0] != "gelu") {
    out->warnings.push_back("mlp_activations [" + list +
                            "] (a plain MLP) is modelled as ffn_kind gelu (2 matrices: the same "
                            "parameters and FLOPs)");
  }
  return FfnKind::kGelu;
}

// Heads: base_num_query_heads (MaxText since 2024) or base_num_heads (2023).
void DecodeHeads(const MaxTextConfig& c, const Scales& s, ModelSpec* m) {
  const char* key = c.Has("base_num_query_heads") ? "base_num_query_heads" : "base_num_heads";
  const int64_t heads = c.Int(key, 8, 1, kMaxDim);
  const int64_t kv =
      c.Has("base_num_kv_heads") ? c.Int("base_num_kv_heads", heads, 1, kMaxDim) : heads;
  if (heads % kv != 0) {
    c.Fail("base_num_kv_heads",
           "expected a divisor of " + std::string(key) + " " + N(heads) + ", found " + N(kv));
  }
  m->heads = static_cast<int>(heads << s.heads);
  m->kv_heads = static_cast<int>(kv << s.heads);
  const int64_t head_dim = c.Int("head_dim", 256, 1, kMaxDim);
  if (m->hidden % m->heads != 0 || m->hidden / m->heads != head_dim) m->head_dim = head_dim;
}

void DecodeMoe(const MaxTextConfig& c, ModelSpec* m) {
  const int64_t experts = c.Int("num_experts", 1, 1, kMaxDim);
  const int64_t top_k = c.Int("num_experts_per_tok", 1, 1, kMaxDim);
  if (experts <= 1) return;
  if (top_k > experts) {
    c.Fail("num_experts_per_tok",
           "expected at most num_experts " + N(experts) + ", found " + N(top_k));
  }
  m->experts = static_cast<int>(experts);
  m->top_k = static_cast<int>(top_k);
  m->moe_ffn_hidden = m->ffn_hidden;
}

void DecodeModel(const MaxTextConfig& c, const std::string& name, MaxTextImport* out) {
  ModelSpec& m = out->model;
  m.name = name;
  const int64_t scale = c.Int("global_parameter_scale", 1, 1, kMaxDim);
  const Scales s = IndividualScales(c, scale);
  m.hidden = c.Int("base_emb_dim", 2560, 1, kMaxDim) << s.emb;
  m.ffn_hidden = c.Int("base_mlp_dim", 8192, 1, kMaxDim) << s.mlp;
  m.layers = static_cast<int>(c.Int("base_num_decoder_layers", 16, 1, kMaxDim) << s.layers);
  DecodeHeads(c, s, &m);
  m.vocab = c.Int("vocab_size", 32768, 1, int64_t{1} << 30);
  m.seq_len = c.Int("max_target_length", 2048, 1, int64_t{1} << 30);
  m.tied_embeddings = c.Bool("logits_via_embedding", true);
  m.ffn_kind = DecodeActivations(c, out);
  DecodeMoe(c, &m);
  if (scale > 1) {
    out->notes.push_back("global_parameter_scale " + N(scale) + ": emb x" + N(int64_t{1} << s.emb) +
                         ", heads and mlp x" + N(int64_t{1} << s.heads) + ", layers x" +
                         N(int64_t{1} << s.layers) + " (MaxText's get_individual_scales)");
  }
  const std::string block = c.String("decoder_block", "default");
  if (block == "default") {  // layers/models.py DecoderLayer @76bd53b0 (and @e64f6813, 2024-10)
    m.parallel_block = true;
    out->notes.push_back(
        "decoder_block default: MaxText's parallel block (attention and MLP both read one "
        "norm's output and are summed): model.parallel_block true");
  }
}

struct RematPolicy {
  const char* name;
  Recompute recompute;
  const char* approximation;  // empty: exact
};

// MaxText's remat_policy values (layers/decoders.py): which activations are saved.
constexpr RematPolicy kRematPolicies[] = {
    {"full", Recompute::kFull, ""},
    {"none", Recompute::kNone, ""},
    // MaxText @76bd53b0 MaxText/layers/models.py: jax.checkpoint_policies.
    // checkpoint_dots_with_no_batch_dims; @e591f30 src/maxtext/layers/decoders.py
    // minimal_policy(): the q/k/v/out projections and mlpwi/mlpwo outputs by name.
    {"minimal", Recompute::kProjections,
     "recomputes the element-wise work (norms, residual sums, activation function), which "
     "meshsim does not count"},
    {"minimal_flash", Recompute::kNone,
     "saves the projections' outputs and the attention context and recomputes the "
     "element-wise work, which meshsim does not count"},
    {"minimal_with_context", Recompute::kNone,
     "saves the projections' outputs and the attention context and recomputes the "
     "element-wise work, which meshsim does not count"},
    {"save_dot_with_context_except_mlp", Recompute::kSelective,
     "recomputes the MLP's matmuls, which meshsim's selective does not"},
    {"save_dot_except_mlpwi", Recompute::kSelective,
     "recomputes the MLP's input projections, which meshsim's selective does not"},
    {"save_dot_except_mlp", Recompute::kFull,
     "saves the attention projections, which meshsim's full recomputation recomputes"},
    {"save_qkv_proj", Recompute::kFull,
     "saves the query, key and value projections, which meshsim's full recomputation "
     "recomputes"},
    {"proj", Recompute::kFull,
     "saves the query, key and value projections, which meshsim's full recomputation "
     "recomputes"},
    {"save_out_proj", Recompute::kFull,
     "saves the attention output projection, which meshsim's full recomputation recomputes"},
    {"qkv_proj_offloaded", Recompute::kFull,
     "offloads the query, key and value projections to host memory (not modelled) and "
     "recomputes the rest"},
    {"minimal_offloaded", Recompute::kNone,
     "offloads every matmul output to host memory (neither the transfers nor the freed "
     "memory are modelled)"},
    {"custom", Recompute::kFull,
     "saves, offloads or recomputes each named tensor as its *_remat keys say (not read)"},
};

void DecodeRemat(const MaxTextConfig& c, MaxTextImport* out) {
  const std::string policy = c.String("remat_policy", "full");
  std::string names;
  for (const RematPolicy& p : kRematPolicies) {
    if (policy == p.name) {
      out->plan.recompute = p.recompute;
      if (*p.approximation) {
        out->warnings.push_back("remat_policy " + policy + " is modelled as recompute " +
                                NameOf(RecomputeNames(), p.recompute) + ": " + p.approximation);
      }
      return;
    }
    names += (names.empty() ? "" : ", ") + std::string(p.name);
  }
  c.Fail("remat_policy", "expected one of " + names + ", found '" + policy + "'");
}

// global_batch = floor(per_device_batch_size x chips); micro_batch from the batch axes.
void DecodeBatch(const MaxTextConfig& c, MaxTextImport* out) {
  PlanSpec& p = out->plan;
  const int64_t chips = int64_t{out->slices} * out->chips_per_slice;
  const double pdbs = c.Number("per_device_batch_size", 12.0, 0);
  const double global = std::floor(pdbs * static_cast<double>(chips));
  if (global < 1 || global > (1 << 30)) {
    c.Fail("per_device_batch_size",
           "expected a per-device batch that gives 1 to 2^30 sequences over " + N(chips) +
               " chips, found " + Number(pdbs));
  }
  const int64_t accumulation = c.Int("gradient_accumulation_steps", 1, 1, kMaxDim);
  const int64_t dp = p.jax.SizeOf(p.jax.Rule(LogicalDim::kBatch));
  const int64_t stages = p.jax.SizeOf(p.jax.Rule(LogicalDim::kLayers));
  int64_t pipeline = 1;
  if (stages > 1) {
    pipeline = c.Int("num_pipeline_microbatches", -1, -1, kMaxDim);
    if (pipeline <= 0) pipeline = stages;
    p.schedule = ScheduleKind::kGpipe;
    out->warnings.push_back("MaxText's pipeline over " + N(stages) +
                            " stages is modelled as the gpipe schedule with " + N(pipeline) +
                            " micro-batches (all forwards, then all backwards)");
  }
  const int64_t g = static_cast<int64_t>(global);
  // Each factor is at most 2^24 (chips) or 2^20: cap after each product.
  const int64_t per_micro = std::min<int64_t>(
      std::min<int64_t>(dp * accumulation, int64_t{1} << 40) * pipeline, int64_t{1} << 40);
  if (g % per_micro != 0) {
    c.Fail("per_device_batch_size",
           "expected a global batch (" + N(g) + " sequences) divisible by the batch axes' size " +
               N(dp) + " x gradient_accumulation_steps " + N(accumulation) +
               " x pipeline micro-batches " + N(pipeline) + " = " + N(per_micro));
  }
  p.global_batch = static_cast<int>(g);
  p.micro_batch = static_cast<int>(g / per_micro);
  out->notes.push_back(
      "global_batch " + N(g) + " = per_device_batch_size " + Number(pdbs) + " x " + N(chips) +
      " chips; micro_batch " + N(p.micro_batch) + " per batch shard (" + N(dp) + " shards" +
      (accumulation * pipeline > 1 ? ", " + N(accumulation * pipeline) + " micro-batches"
                                   : std::string()) +
      ")");
}

void DecodeDtypes(const MaxTextConfig& c, MaxTextImport* out) {
  TrainingSpec& t = out->training;
  const std::string dtype = c.String("dtype", "bfloat16");
  if (dtype == "bfloat16") {
    t.dtype = Dtype::kBf16;
  } else if (dtype == "float16") {
    t.dtype = Dtype::kFp16;
  } else if (dtype == "float32") {
    t.dtype = Dtype::kBf16;
    out->not_modelled.push_back(
        "dtype float32 is not modelled: meshsim times bf16 matmuls and activations");
  } else {
    c.Fail("dtype", "expected bfloat16, float16 or float32, found '" + dtype + "'");
  }
  const std::string weights = c.String("weight_dtype", "float32");
  if (weights != "float32" && weights != "bfloat16") {
    c.Fail("weight_dtype", "expected float32 or bfloat16, found '" + weights + "'");
  }
  t.grad_accum_dtype = weights == "float32" ? GradAccumDtype::kFp32 : GradAccumDtype::kSame;
  if (weights == "float32") {
    out->notes.push_back(
        "grad_accum_dtype fp32: weight_dtype float32 (fp32 parameters and gradients; meshsim "
        "counts a bf16 copy too and reduces gradients in fp32)");
  }
  if (c.Bool("int8_training", false)) {
    out->not_modelled.push_back("int8_training true is not modelled: meshsim times bf16 matmuls");
  }
  const std::string quantization = c.String("quantization", "");
  if (!quantization.empty()) {
    out->not_modelled.push_back("quantization " + quantization +
                                " is not modelled: meshsim times bf16 matmuls");
  }
}

void DecodeTraining(const MaxTextConfig& c, MaxTextImport* out) {
  TrainingSpec& t = out->training;
  DecodeDtypes(c, out);
  const std::string opt = c.String("opt_type", "adamw");
  t.optimizer = opt == "sgd" ? Optimizer::kSgd : Optimizer::kAdam;
  if (opt != "adamw" && opt != "adam" && opt != "sgd") {
    out->not_modelled.push_back("opt_type " + opt +
                                " is not modelled: meshsim models Adam's state and update");
  }
  static const std::vector<std::string> kFlash = {"flash",     "cudnn_flash_te", "cudnn_flash_jax",
                                                  "gpu_flash", "autoselected",   "paged"};
  const std::string attention = c.String("attention", "flash");
  t.flash_attention = std::find(kFlash.begin(), kFlash.end(), attention) != kFlash.end();
  if (!t.flash_attention && attention != "dot_product" && attention != "mha") {
    out->not_modelled.push_back("attention " + attention +
                                " is not modelled: meshsim times unfused (dot_product) attention");
  }
  const double capacity = c.Number("capacity_factor", -1, -1);
  if (capacity > 0 && out->model.experts > 0) out->plan.moe_capacity_factor = capacity;
}

// Keys that change nothing meshsim simulates (paths, logging, checkpoints, the learning
// rate, data loading, compilation), accepted silently.
bool NoEffect(const std::string& key) {
  static const std::regex pattern(
      "run_name|model_name|hardware|steps|log_period|save_period|eval_interval|eval_steps|"
      "base_output_directory|jax_cache_dir|(load|save)_.*|.*checkpoint.*|enable_profiler|"
      "profiler.*|skip_first_n_steps_for_profiler|upload_all_profiler_results|gcs_metrics|"
      "metrics_file|.*_dir|dataset_.*|eval_.*|.*dataset.*|vocab_relative_path|assets_path|"
      "tokenizer_.*|learning_rate.*|cosine_.*|warmup_.*|adam_.*|gradient_clipping_threshold|"
      "init_weights_seed|data_shuffle_seed|enable_data_shuffling|enable_dropout|dropout_rate|"
      "reuse_example_batch|use_iota_embed|max_corpus_chars|max_eval_target_length|"
      "max_predict_length|max_prefill_predict_length|sampling_.*|decode_.*|eos_id|prompt|"
      "autoregressive_decode_assert|collect_stack_trace|stack_trace_.*|compiled_trainstep_file|"
      "compile_topology|compile_topology_num_slices|record_internal_nn_metrics|param_scan_axis|"
      "scan_layers|gpu_flash_attention_backward_pass_impl|data_sharding|"
      "enable_single_controller|monitor_.*|colocated_python_.*|inference_.*|"
      "quantize_kvcache|kv_quant_.*|attention_type|normalization_layer_epsilon|"
      "logits_dot_in_fp32|cast_logits_to_fp32|float32_.*|fused_qkv|fused_mlp|"
      "use_untrainable_positional_embedding|trainable_position_size|rope_.*|"
      "base_config|override_model_config|enable_goodput_recording|"
      "monitor_goodput|allow_split_physical_axes|custom_mesh|use_post_attn_norm|"
      "use_post_ffw_norm|final_logits_soft_cap|attn_logits_soft_cap|sliding_window_size|"
      "enable_padding_causal_mask|mesh_axes|logical_axis_rules");
  return std::regex_match(key, pattern);
}

// Keys read or silently accepted are known; the rest are listed with their values, and
// parallelism keys of axes not in mesh_axes are warned about unless 1.
void ClassifyKeys(const MaxTextConfig& c, MaxTextImport* out) {
  static const std::regex parallelism("(ici|dcn)_[A-Za-z0-9_]+_parallelism");
  for (const std::string& key : c.Keys()) {
    if (c.Read().count(key) != 0 || NoEffect(key)) continue;
    const YAML::Node node = c.Node(key);
    std::string value = node.IsScalar() ? node.Scalar() : config::Describe(node);
    if (std::regex_match(key, parallelism)) {
      if (value != "1") {
        out->not_modelled.push_back(key + " " + value +
                                    " is not modelled: its axis is not in mesh_axes");
      }
      continue;
    }
    if (value.size() > 40) value = value.substr(0, 37) + "...";
    out->unknown.push_back(key + "=" + value);
  }
}

void NoteDefaults(const MaxTextConfig& c, MaxTextImport* out) {
  std::string list;
  for (const auto& [key, value] : c.Defaulted()) {
    list += (list.empty() ? "" : ", ") + key + " " + value;
  }
  if (!list.empty()) {
    out->notes.push_back(
        "not in the config, MaxText's defaults (base.yml @76bd53b0's where "
        "it has the key): " +
        list);
  }
}

// The slice shape, when given, multiplies to the chips of a slice.
void CheckSliceShape(const MaxTextImport& out) {
  if (out.slice_shape.empty()) return;
  int64_t chips = 1;
  std::string shape;
  for (const int d : out.slice_shape) {
    chips = std::min<int64_t>(chips * std::max(d, 0), kMaxChips + 1);
    shape += (shape.empty() ? "" : "x") + N(d);
  }
  if (chips == out.chips_per_slice && out.slice_shape.size() <= 3) return;
  InputError e;
  e.key = "--slice-shape";
  e.message = "expected 1 to 3 dimensions multiplying to the chips of a slice (" +
              N(out.chips_per_slice) + "), found " + shape;
  throw ConfigError{e};
}

// On a TPU torus: libtpu's collective matmul, and the slice's DCN NICs at the topology's
// NICs per chip.
void DecodeTpuSlice(const MaxTextImportOptions& o, MaxTextImport* out) {
  if (!o.torus) return;
  out->plan.jax.xla.collective_matmul = true;
  out->notes.push_back(
      "plan.xla.collective_matmul true: libtpu decomposes a tensor-parallel all-gather or "
      "reduce-scatter with its matmul (windowed einsum) above a size threshold by default "
      "(MaxText benchmarks/xla_flags_library.py: DISABLE_COLLECTIVE_MATMUL raises "
      "--xla_jf_spmd_threshold_for_windowed_einsum_mib to turn it off; the v5p/v5e scripts "
      "do not)");
  const int64_t gpus = o.cluster_gpus_per_node, chips = out->chips_per_slice;
  if (gpus <= 0 || chips == gpus || o.cluster_nics_per_node <= 0) return;
  const int64_t nics = int64_t{o.cluster_nics_per_node} * chips;
  if (nics % gpus != 0) return;
  out->nics_per_slice = static_cast<int>(nics / gpus);
  out->notes.push_back("inter_node.nics_per_node " + N(out->nics_per_slice) +
                       ": the topology's DCN NICs per chip (" + N(o.cluster_nics_per_node) +
                       " per " + N(gpus) + ") on a slice of " + N(chips) + " chips");
}

MaxTextImport Decode(const MaxTextImportOptions& o) {
  MaxTextConfig c;
  c.AddFile(o.base.text, o.base.file);
  if (!o.model.file.empty()) c.AddFile(o.model.text, o.model.file);
  for (const std::string& arg : o.overrides) c.AddOverride(arg);
  const std::string model_name = c.String("model_name", "default");
  if (model_name != "default" && o.model.file.empty()) {
    c.Fail("model_name", "expected 'default' or a model file (--model, or models/" + model_name +
                             ".yml next to the base config as MaxText looks it up), found '" +
                             model_name + "' and no model file");
  }
  MaxTextImport out;
  out.notes.push_back("MaxText config: " + o.base.file +
                      (o.model.file.empty() ? std::string() : ", then " + o.model.file) +
                      (o.overrides.empty() ? std::string() : ", then the overrides") +
                      ", later winning");
  out.chips_per_slice = o.chips_per_slice;
  out.slices = o.slices > 0 ? o.slices : config::MaxTextSlicesOf(c);
  out.slice_shape = o.slice_shape;
  const int64_t chips = int64_t{out.slices} * out.chips_per_slice;
  if (out.slices < 1 || out.chips_per_slice < 1 || chips > kMaxChips) {
    InputError e;
    e.key = "--slices";
    e.message = "expected 1 to " + N(kMaxChips) + " chips, found " + N(out.slices) + " slices of " +
                N(out.chips_per_slice);
    throw ConfigError{e};
  }
  CheckSliceShape(out);
  config::MaxTextMesh mesh = config::DecodeMaxTextMesh(c, out.chips_per_slice, out.slices);
  out.plan.jax = mesh.jax;
  out.notes.insert(out.notes.end(), mesh.notes.begin(), mesh.notes.end());
  out.warnings = mesh.warnings;
  DecodeTpuSlice(o, &out);
  DecodeModel(c, o.name, &out);
  DecodeRemat(c, &out);
  DecodeBatch(c, &out);
  DecodeTraining(c, &out);
  ClassifyKeys(c, &out);
  NoteDefaults(c, &out);
  return out;
}

std::string AxisList(const JaxPlan& jax, const std::vector<int>& axes) {
  std::string s;
  for (const int a : axes) s += (s.empty() ? "" : ", ") + jax.axes[a].name;
  return "[" + s + "]";
}

void WriteJaxPlan(std::ostringstream& o, const JaxPlan& jax) {
  std::string names, ici, dcn;
  for (const MeshAxisSpec& a : jax.axes) {
    names += (names.empty() ? "" : ", ") + a.name;
    ici += (ici.empty() ? "" : ", ") + N(a.ici);
    dcn += (dcn.empty() ? "" : ", ") + N(a.dcn);
  }
  o << "  mesh:\n"
    << "    axes: [" << names << "]\n"
    << "    ici: [" << ici << "]\n"
    << "    dcn: [" << dcn << "]\n"
    << "  rules:\n";
  for (int d = 0; d < kLogicalDimCount; ++d) {
    o << "    " << LogicalDimNames()[d] << ": " << AxisList(jax, jax.rules[d]) << "\n";
  }
}

}  // namespace

Result<MaxTextImport> ImportMaxTextConfig(const MaxTextImportOptions& options) {
  try {
    return Decode(options);
  } catch (const ConfigError& e) {
    return e.error;
  } catch (const YAML::Exception& e) {
    InputError err;
    err.file = options.base.file;
    err.message = std::string("YAML error: ") + e.what();
    return err;
  }
}

Result<std::string> MaxTextModelName(const MaxTextFile& base,
                                     const std::vector<std::string>& overrides) {
  try {
    MaxTextConfig c;
    c.AddFile(base.text, base.file);
    for (const std::string& arg : overrides) c.AddOverride(arg);
    return c.String("model_name", "default");
  } catch (const ConfigError& e) {
    return e.error;
  } catch (const YAML::Exception& e) {
    InputError err;
    err.file = base.file;
    err.message = std::string("YAML error: ") + e.what();
    return err;
  }
}

std::string MaxTextExperimentYaml(const MaxTextImport& run, const std::string& name,
                                  const std::string& cluster_path, int cluster_gpus_per_node,
                                  const std::string& command) {
  std::ostringstream o;
  o << YamlComment("Generated by `" + command + "`.");
  o << YamlComment("Parameters (meshsim's count): " + FormatParams(CountParams(run.model).total) +
                   ".");
  o << ImportNotesYaml(run.notes, run.warnings, run.not_modelled, run.unknown,
                       "Unknown keys, not modelled");
  ModelSpec model = run.model;
  model.name = name;
  o << "name: " << YamlScalar(name) << "\n";
  o << "model:\n" << ModelYamlKeys(model, "  ");
  o << "cluster: " << YamlScalar(cluster_path) << "\n";
  o << "cluster_overrides: {nodes: " << run.slices;
  if (run.chips_per_slice != cluster_gpus_per_node || !run.slice_shape.empty()) {
    o << ", gpus_per_node: " << run.chips_per_slice;
  }
  if (!run.slice_shape.empty()) {
    std::string shape;
    for (const int d : run.slice_shape) shape += (shape.empty() ? "" : ", ") + N(d);
    o << ", intra_node: {torus: [" << shape << "]}";
  }
  if (run.nics_per_slice > 0) o << ", inter_node: {nics_per_node: " << run.nics_per_slice << "}";
  o << "}\n";
  const PlanSpec& p = run.plan;
  o << "plan:\n";
  WriteJaxPlan(o, p.jax);
  if (p.jax.xla.collective_matmul) o << "  xla: {collective_matmul: true}\n";
  o << "  recompute: " << NameOf(RecomputeNames(), p.recompute) << "\n"
    << "  schedule: " << NameOf(ScheduleNames(), p.schedule) << "\n"
    << "  micro_batch: " << p.micro_batch << "\n"
    << "  global_batch: " << p.global_batch << "\n";
  if (p.moe_capacity_factor > 0) {
    char factor[32];
    std::snprintf(factor, sizeof factor, "%.15g", p.moe_capacity_factor);
    o << "  moe_capacity_factor: " << factor << "\n";
  }
  const TrainingSpec& t = run.training;
  o << "training:\n"
    << "  dtype: " << DtypeName(t.dtype) << "\n"
    << "  optimizer: " << (t.optimizer == Optimizer::kSgd ? "sgd" : "adam") << "\n"
    << "  grad_accum_dtype: " << (t.grad_accum_dtype == GradAccumDtype::kFp32 ? "fp32" : "same")
    << "\n"
    << "  flash_attention: " << (t.flash_attention ? "true" : "false") << "\n";
  return o.str();
}

std::string MaxTextKeyOf(const std::string& key) {
  static const std::map<std::string, std::string> kKeys = {
      {"plan.mesh", "ici_*_parallelism / dcn_*_parallelism"},
      {"plan.mesh.ici", "ici_*_parallelism"},
      {"plan.mesh.dcn", "dcn_*_parallelism"},
      {"plan.rules", "logical_axis_rules"},
      {"plan.micro_batch", "per_device_batch_size"},
      {"plan.global_batch", "per_device_batch_size"},
      {"plan.recompute", "remat_policy"},
      {"model.layers", "base_num_decoder_layers"},
      {"model.hidden", "base_emb_dim"},
      {"model.heads", "base_num_heads"},
      {"model.kv_heads", "base_num_kv_heads"},
      {"model.head_dim", "head_dim"},
      {"model.ffn_hidden", "base_mlp_dim"},
      {"model.vocab", "vocab_size"},
      {"model.seq_len", "max_target_length"},
      {"model.experts", "num_experts"},
      {"model.top_k", "num_experts_per_tok"},
      {"training.dtype", "dtype"},
  };
  // plan.rules.embed -> plan.rules; plan.mesh.ici[2] -> plan.mesh.ici
  std::string k = key.substr(0, key.find('['));
  while (!k.empty()) {
    const auto it = kKeys.find(k);
    if (it != kKeys.end()) return it->second;
    const size_t dot = k.rfind('.');
    if (dot == std::string::npos) break;
    k = k.substr(0, dot);
  }
  return "";
}

}  // namespace meshsim

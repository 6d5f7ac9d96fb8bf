#include "sim/config/import_megatron.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>

#include "sim/config/import_hf.h"
#include "sim/config/megatron_args.h"
#include "sim/config/megatron_decoders.h"
#include "sim/config/recompute_modules.h"
#include "sim/hw/cluster_spec.h"
#include "sim/plan/plan_names.h"
#include "sim/plan/stages.h"
#include "sim/schedule/model_states.h"
#include "sim/workload/param_count.h"

namespace meshsim {
namespace {

using megatron_internal::Args;
using megatron_internal::Classify;
using megatron_internal::DecodeModel;
using megatron_internal::DecodeMoeOptions;
using megatron_internal::DecodePlan;
using megatron_internal::DecodeTraining;
using megatron_internal::Fail;
using megatron_internal::ImportFailure;
using megatron_internal::kAccountEmbedding;
using megatron_internal::kAccountLoss;
using megatron_internal::ListText;
using megatron_internal::N;

MegatronImport Parse(const std::string& text) {
  Result<std::vector<std::string>> tokens = SplitShellWords(text);
  if (!tokens.ok()) throw ImportFailure{tokens.error()};
  MegatronImport out;
  out.args = tokens.value();
  const Args a(Classify(out.args, &out));
  out.model.name = "megatron";
  DecodeModel(a, &out);
  DecodePlan(a, &out);
  DecodeTraining(a, &out);
  DecodeMoeOptions(a, &out);
  return out;
}

// The framework options an import sets, as a YAML flow mapping's entries
// ("overlap_param_gather: true, moe_paged_stash: true"); empty when none is set.
std::string FrameworkOptionsYaml(const FrameworkOptions& f) {
  std::string out;
  const auto add = [&out](const std::string& entry) { out += (out.empty() ? "" : ", ") + entry; };
  if (f.overlap_param_gather) add("overlap_param_gather: true");
  if (f.fused_grouped_mlp) add("fused_grouped_mlp: true");
  if (f.moe_paged_stash) add("moe_paged_stash: true");
  if (f.moe_flex_dispatcher_num_sms > 0)
    add("moe_flex_dispatcher_num_sms: " + std::to_string(f.moe_flex_dispatcher_num_sms));
  if (f.overlap_moe_expert_parallel_comm) add("overlap_moe_expert_parallel_comm: true");
  if (f.overlap_dispatch_backward_with_experts_wgrad)
    add("overlap_dispatch_backward_with_experts_wgrad: true");
  return out;
}

// "160", "0.4", "701243": megabytes as the YAML writes them.
std::string Megabytes(int64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.15g", static_cast<double>(bytes) / 1e6);
  return buf;
}

// The DP gradient bucket as Megatron-Core forms it: with --overlap-grad-reduce,
// --ddp-bucket-size parameters or max(40M, 1M * dp*cp); without it one bucket per model
// chunk, reduced once the backward pass is over.
void ResolveBucket(MegatronImport* run) {
  PlanSpec& p = run->plan;
  const double grad_bytes = GradientBytesPerParam(run->training);
  const int64_t replicas = static_cast<int64_t>(p.dp) * p.cp;
  // Bytes as a plan may hold them: at most the schema's bound on plan.dp_bucket_mb.
  const auto bucket_bytes = [](double bytes) {
    return static_cast<int64_t>(std::min(bytes, PlanSpec::kMaxDpBucketBytes));
  };
  if (run->overlap_grad_reduce) {
    const bool given = run->ddp_bucket_params > 0;
    const double params = given ? static_cast<double>(run->ddp_bucket_params)
                                : std::max(40e6, 1e6 * static_cast<double>(replicas));
    p.dp_bucket_bytes = bucket_bytes(params * grad_bytes);
    run->notes.push_back(
        "dp_bucket_mb " + Megabytes(p.dp_bucket_bytes) + ": " +
        N(static_cast<long long>(std::min(params, 9e18))) + " parameters (" +
        (given ? std::string("--ddp-bucket-size")
               : "Megatron's default max(40M, 1M * dp*cp) with --overlap-grad-reduce") +
        ") of " + N(static_cast<long long>(grad_bytes)) + "-byte gradients");
    return;
  }
  const double all = CountParams(run->model).total * grad_bytes;
  p.dp_bucket_bytes = bucket_bytes(std::ceil(all / 1e6) * 1e6);
  run->notes.push_back(
      "dp_bucket_mb " + Megabytes(p.dp_bucket_bytes) +
      ", all of the model's gradients: without --overlap-grad-reduce Megatron "
      "reduces them in one bucket after the backward pass" +
      (run->ddp_bucket_params > 0 ? " (--ddp-bucket-size applies only with it)" : ""));
  if (replicas > 1 && p.schedule == ScheduleKind::kInterleaved) {
    run->warnings.push_back(
        "without --overlap-grad-reduce Megatron reduces the gradients after the whole backward "
        "pass; meshsim reduces each model chunk's gradients when that chunk's last backward "
        "ends, overlapped with the other chunks' backward");
  }
}

// "  cuda_graphs: [attn, moe_router]\n", or nothing when the step runs eager.
std::string CudaGraphsYaml(const CudaGraphScope& g) {
  if (!g.Any()) return "";
  if (g.full_iteration) return "  cuda_graphs: full_iteration\n";
  std::vector<std::string> scopes;
  if (g.attn) scopes.push_back("attn");
  if (g.mlp) scopes.push_back("mlp");
  if (g.moe_router) scopes.push_back("moe_router");
  if (g.moe_preprocess) scopes.push_back("moe_preprocess");
  if (g.mamba) scopes.push_back("mamba");
  std::string list;
  for (const std::string& s : scopes) list += (list.empty() ? "" : ", ") + s;
  return "  cuda_graphs: [" + list + "]\n";
}

}  // namespace

Result<MegatronImport> ParseMegatronArgs(const std::string& args) {
  try {
    return Parse(args);
  } catch (const ImportFailure& f) {
    return f.error;
  }
}

Result<int> ResolveMegatronWorld(MegatronImport* run, int gpus_per_node, int nodes,
                                 int* gpus_per_node_override) {
  *gpus_per_node_override = 0;
  PlanSpec& p = run->plan;
  InputError e;
  e.file = kMegatronSource;
  e.key = "--world-size";
  int64_t world = run->world_size;
  if (nodes > 0) {
    const int64_t node_gpus = int64_t{nodes} * gpus_per_node;
    if (world > 0 && world != node_gpus) {
      e.message = "--world-size " + N(world) + " disagrees with --nodes " + N(nodes) + " x " +
                  N(gpus_per_node) + " GPUs per node = " + N(node_gpus);
      return e;
    }
    world = node_gpus;
  } else if (world == 0) {
    e.message =
        "required flag is missing (the number of GPUs, which Megatron gets from its "
        "launcher; or give meshsim import's --nodes)";
    return e;
  } else if (world % gpus_per_node == 0) {
    nodes = static_cast<int>(world / gpus_per_node);
  } else if (world < gpus_per_node && gpus_per_node % world == 0) {
    nodes = 1;
    *gpus_per_node_override = static_cast<int>(world);
  } else {
    e.message = "--world-size " + N(world) + " is not a whole number of nodes of " +
                N(gpus_per_node) + " GPUs";
    return e;
  }
  if (world > kMaxClusterGpus) {
    e.message = "expected at most " + N(kMaxClusterGpus) + " GPUs, found a world of " + N(world);
    return e;
  }
  // tp, pp and cp are at most 2^30: the product, capped above the world, fits an int64.
  int64_t model_parallel = 1;
  for (const int d : {p.tp, p.pp, p.cp}) model_parallel = std::min(model_parallel * d, world + 1);
  if (world % model_parallel != 0) {
    e.message = "world size " + N(world) + " is not divisible by tp*pp*cp = " + N(p.tp) + "*" +
                N(p.pp) + "*" + N(p.cp) + " = " +
                (model_parallel > world ? "more than " + N(world) : N(model_parallel));
    return e;
  }
  p.dp = static_cast<int>(world / model_parallel);
  run->notes.push_back("dp = world / (tp*pp*cp) = " + N(world) + " / " + N(model_parallel) + " = " +
                       N(p.dp) + "; nodes " + N(nodes));
  if (!run->global_batch_given) {
    const int64_t global_batch = int64_t{p.micro_batch} * p.dp;
    if (global_batch > (1 << 30)) {
      e.key = "--micro-batch-size";
      e.message = "global_batch = micro_batch * dp = " + N(p.micro_batch) + " * " + N(p.dp) +
                  " = " + N(global_batch) + " is not a plausible count";
      return e;
    }
    p.global_batch = static_cast<int>(global_batch);
    run->notes.push_back("global_batch = micro_batch * dp = " + N(p.global_batch) +
                         " (Megatron's default without --global-batch-size)");
  }
  ResolveBucket(run);
  return nodes;
}

std::string MegatronExperimentYaml(const MegatronImport& run, const std::string& name,
                                   const std::string& cluster_path, int nodes,
                                   int gpus_per_node_override) {
  const PlanSpec& p = run.plan;
  std::ostringstream o;
  std::string args;
  for (const std::string& t : run.args) {
    const bool plain = !t.empty() && t.find_first_of(" \t\n'\"\\$") == std::string::npos;
    args += (args.empty() ? "" : " ") + (plain ? t : "'" + t + "'");
  }
  o << YamlComment("Generated by `meshsim import megatron` from these Megatron-LM arguments: " +
                   args);
  o << ImportNotesYaml(run.notes, run.warnings, run.not_modelled, run.unknown,
                       "Unknown flags, ignored");
  ModelSpec model = run.model;
  model.name = name;
  o << "name: " << YamlScalar(name) << "\n";
  o << "model:\n" << ModelYamlKeys(model, "  ");
  o << "cluster: " << YamlScalar(cluster_path) << "\n";
  o << "cluster_overrides: {nodes: " << nodes;
  if (gpus_per_node_override > 0) o << ", gpus_per_node: " << gpus_per_node_override;
  o << "}\n";
  const std::string& schedule = NameOf(ScheduleNames(), p.schedule);
  const std::string& recompute = NameOf(RecomputeNames(), p.recompute);
  o << "plan:\n"
    << "  tp: " << p.tp << "\n"
    << "  pp: " << p.pp << "\n"
    << "  dp: " << p.dp << "\n"
    << "  cp: " << p.cp << "\n"
    << "  ep: " << p.ep << "\n"
    << "  zero: " << p.zero << "\n"
    << "  sequence_parallel: " << (p.sequence_parallel ? "true" : "false") << "\n"
    << "  recompute: " << recompute << "\n";
  if (p.recompute == Recompute::kSelective && !(p.recompute_modules == RecomputeModules{}))
    o << "  recompute_modules: " << RecomputeModulesText(p.recompute_modules) << "\n";
  o << "  schedule: " << schedule << "\n"
    << "  virtual_stages: " << p.virtual_stages << "\n";
  if (!p.stage_layers.empty()) o << "  stage_layers: " << ListText(p.stage_layers) << "\n";
  o << "  micro_batch: " << p.micro_batch << "\n"
    << "  global_batch: " << p.global_batch << "\n"
    << "  mesh_order: [tp, cp, ep, dp, pp]\n";
  o << "  dp_bucket_mb: " << Megabytes(p.dp_bucket_bytes) << "\n";
  if (p.overlap_p2p) o << "  overlap_p2p: true\n";
  if (p.tp_comm_overlap) o << "  tp_comm_overlap: true\n";
  if (const std::string options = FrameworkOptionsYaml(p.framework_options); !options.empty()) {
    o << "  framework: megatron\n"
      << "  framework_options: {" << options << "}\n";
  }
  if (p.cpu_offload_layers > 0) o << "  cpu_offload_layers: " << p.cpu_offload_layers << "\n";
  if (p.moe_dispatcher == MoeDispatcher::kFlex) o << "  moe_dispatcher: flex\n";
  if (p.moe_flex_backend == MoeFlexBackend::kHybridEp) o << "  moe_flex_backend: hybridep\n";
  if (p.moe_capacity_factor > 0) {
    char factor[32];
    std::snprintf(factor, sizeof factor, "%.15g", p.moe_capacity_factor);
    o << "  moe_capacity_factor: " << factor << "\n";
  }
  const TrainingSpec& t = run.training;
  o << "training:\n"
    << "  dtype: " << DtypeName(t.dtype) << "\n";
  if (t.dtype == Dtype::kFp8) o << "  fp8_recipe: " << Fp8RecipeName(t.fp8_recipe) << "\n";
  o << "  optimizer: " << (t.optimizer == Optimizer::kSgd ? "sgd" : "adam") << "\n"
    << "  grad_accum_dtype: " << (t.grad_accum_dtype == GradAccumDtype::kFp32 ? "fp32" : "same")
    << "\n";
  if (t.flash_attention) o << "  flash_attention: true\n";
  if (!t.cross_entropy_fusion) o << "  cross_entropy_fusion: false\n";
  if (t.cross_entropy_fusion && t.cross_entropy_impl == CrossEntropyImpl::kTe) {
    o << "  cross_entropy_fusion_impl: te\n";
  }
  if (t.fp8_param_gather && t.dtype == Dtype::kFp8) o << "  fp8_param_gather: true\n";
  if (t.fp8_attention && t.dtype == Dtype::kFp8) o << "  fp8_attention: true\n";
  if (t.moments_dtype == MomentsDtype::kBf16) o << "  moments_dtype: bf16\n";
  o << CudaGraphsYaml(t.cuda_graphs);
  return o.str();
}

std::string MegatronFlagOf(const std::string& key) {
  static const std::map<std::string, std::string> kFlags = {
      {"plan", "--world-size"},
      {"plan.tp", "--tensor-model-parallel-size"},
      {"plan.pp", "--pipeline-model-parallel-size"},
      {"plan.dp", "--world-size"},
      {"plan.cp", "--context-parallel-size"},
      {"plan.ep", "--expert-model-parallel-size"},
      {"plan.schedule", "--num-layers-per-virtual-pipeline-stage"},
      {"plan.virtual_stages", "--num-layers-per-virtual-pipeline-stage"},
      {"plan.stage_layers", "--decoder-first-pipeline-num-layers"},
      {"plan.micro_batch", "--micro-batch-size"},
      {"plan.global_batch", "--global-batch-size"},
      {"plan.zero", "--use-distributed-optimizer"},
      {"plan.dp_bucket_mb", "--ddp-bucket-size"},
      {"plan.moe_capacity_factor", "--moe-expert-capacity-factor"},
      {"plan.moe_dispatcher", "--moe-token-dispatcher-type"},
      {"plan.moe_flex_backend", "--moe-flex-dispatcher-backend"},
      {"model.layers", "--num-layers"},
      {"model.hidden", "--hidden-size"},
      {"model.heads", "--num-attention-heads"},
      {"model.kv_heads", "--num-query-groups"},
      {"model.ffn_hidden", "--ffn-hidden-size"},
      {"model.vocab", "--vocab-size"},
      {"model.seq_len", "--seq-length"},
      {"model.experts", "--num-experts"},
      {"model.top_k", "--moe-router-topk"},
      {"model.moe_router_num_groups", "--moe-router-num-groups"},
      {"model.moe_router_group_topk", "--moe-router-group-topk"},
      {"model.moe_ffn_hidden", "--moe-ffn-hidden-size"},
      {"training.dtype", "--bf16/--fp16/--fp8-format"},
      {"training.fp8_recipe", "--fp8-recipe"},
      {"plan.cpu_offload_layers", "--cpu-offloading-num-layers"},
      {"plan.recompute_modules", "--recompute-modules"},
  };
  // plan.stage_layers[3] -> plan.stage_layers
  auto it = kFlags.find(key.substr(0, key.find('[')));
  return it == kFlags.end() ? std::string() : it->second;
}

}  // namespace meshsim

// Decodes a plan and the training settings of an experiment; the model and the cluster
// are in decode_model.cc and decode_cluster.cc.
#include "sim/config/decode.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <limits>

#include "sim/config/decode_checks.h"
#include "sim/config/decode_jax.h"
#include "sim/config/recompute_modules.h"
#include "sim/plan/plan_names.h"

namespace meshsim::config {
namespace {

// stage_layers: a non-empty list of integers (checked against the plan and the model by
// ValidatePlan, which names the entry at fault).
void DecodeStageLayers(YamlReader& r, std::vector<int>* out) {
  r.Skip("stage_layers");
  if (!r.Has("stage_layers")) return;
  const YAML::Node list = r.Child("stage_layers");
  if (!list.IsSequence() || list.size() == 0) {
    Fail(
        r.sources(), list, r.KeyPath("stage_layers"),
        "expected a list of layers per pipeline stage, e.g. [7, 8, 8, 7], found " + Describe(list));
  }
  for (size_t i = 0; i < list.size(); ++i) {
    const YAML::Node item = list[i];
    const std::string s = item.IsScalar() ? item.Scalar() : std::string();
    errno = 0;
    char* end = nullptr;
    const long long v = std::strtoll(s.c_str(), &end, 10);
    if (s.empty() || errno != 0 || *end != '\0' || v < std::numeric_limits<int>::min() ||
        v > std::numeric_limits<int>::max()) {
      Fail(r.sources(), item, r.KeyPath("stage_layers") + "[" + std::to_string(i) + "]",
           "expected an integer, found " + Describe(item));
    }
    out->push_back(static_cast<int>(v));
  }
}

// framework_options: the knobs of plan.framework (sim/plan/framework.h), by their own
// names. Every option of every framework is read (so that each is known and typed); one
// that belongs to another framework than the plan's fails.
void DecodeFrameworkOptions(YamlReader& plan, Framework framework, FrameworkOptions* o) {
  if (!plan.Has("framework_options")) {
    plan.Skip("framework_options");
    return;
  }
  YamlReader r = plan.Map("framework_options");
  const std::string& name = NameOf(FrameworkNames(), framework);
  const auto owned_by = [&](const std::string& key, Framework owner) {
    if (r.Has(key) && owner != framework) {
      Fail(r.sources(), r.Child(key), r.KeyPath(key),
           "expected an option of framework " + name + ", found an option of framework " +
               NameOf(FrameworkNames(), owner));
    }
  };
  const auto count = [&](const std::string& key, Framework owner, double* v, bool zero_ok) {
    owned_by(key, owner);
    r.GetDouble(key, v);
    if (!(*v > 0 || (zero_ok && *v == 0)) || *v > PlanSpec::kMaxDpBucketBytes) {
      Fail(r.sources(), r.Child(key), r.KeyPath(key),
           std::string("expected a number of parameters ") + (zero_ok ? ">= 0" : "> 0") +
               " and <= 1e15, found " + Describe(r.Child(key)));
    }
  };
  const auto flag = [&](const std::string& key, Framework owner, bool* v) {
    owned_by(key, owner);
    r.GetBool(key, v);
  };
  count("bucket_size", Framework::kMegatron, &o->bucket_size, true);
  flag("overlap_param_gather", Framework::kMegatron, &o->overlap_param_gather);
  flag("check_for_nan_in_loss_and_grad", Framework::kMegatron, &o->check_for_nan_in_loss_and_grad);
  flag("average_in_collective", Framework::kMegatron, &o->average_in_collective);
  flag("fused_grouped_mlp", Framework::kMegatron, &o->fused_grouped_mlp);
  owned_by("fused_grouped_mlp_cluster_margin", Framework::kMegatron);
  r.GetInt("fused_grouped_mlp_cluster_margin", &o->fused_grouped_mlp_cluster_margin);
  flag("moe_paged_stash", Framework::kMegatron, &o->moe_paged_stash);
  flag("overlap_moe_expert_parallel_comm", Framework::kMegatron,
       &o->overlap_moe_expert_parallel_comm);
  flag("overlap_dispatch_backward_with_experts_wgrad", Framework::kMegatron,
       &o->overlap_dispatch_backward_with_experts_wgrad);
  owned_by("moe_flex_dispatcher_num_sms", Framework::kMegatron);
  r.GetInt("moe_flex_dispatcher_num_sms", &o->moe_flex_dispatcher_num_sms);
  count("reduce_bucket_size", Framework::kDeepSpeed, &o->reduce_bucket_size, false);
  count("allgather_bucket_size", Framework::kDeepSpeed, &o->allgather_bucket_size, false);
  count("stage3_prefetch_bucket_size", Framework::kDeepSpeed, &o->stage3_prefetch_bucket_size,
        true);
  count("stage3_max_live_parameters", Framework::kDeepSpeed, &o->stage3_max_live_parameters, false);
  count("stage3_param_persistence_threshold", Framework::kDeepSpeed,
        &o->stage3_param_persistence_threshold, true);
  owned_by("backward_prefetch", Framework::kFsdp);
  r.GetEnum<BackwardPrefetch>("backward_prefetch", BackwardPrefetchNames(), &o->backward_prefetch);
  flag("forward_prefetch", Framework::kFsdp, &o->forward_prefetch);
  flag("limit_all_gathers", Framework::kFsdp, &o->limit_all_gathers);
  flag("reshard_after_forward", Framework::kFsdp2, &o->reshard_after_forward);
  flag("reshard_after_backward", Framework::kFsdp2, &o->reshard_after_backward);
  flag("requires_gradient_sync", Framework::kFsdp2, &o->requires_gradient_sync);
  r.Finish();
}

// The scopes of training.cuda_graphs, by Megatron-Core's --cuda-graph-scope names.
enum class GraphScope { kNone, kAttn, kMlp, kMoeRouter, kMoePreprocess, kMamba, kFullIteration };
const std::vector<std::pair<std::string, GraphScope>>& GraphScopes() {
  static const std::vector<std::pair<std::string, GraphScope>> scopes = {
      {"none", GraphScope::kNone},
      {"attn", GraphScope::kAttn},
      {"mlp", GraphScope::kMlp},
      {"moe_router", GraphScope::kMoeRouter},
      {"moe_preprocess", GraphScope::kMoePreprocess},
      {"mamba", GraphScope::kMamba},
      {"full_iteration", GraphScope::kFullIteration}};
  return scopes;
}

void AddScope(GraphScope s, CudaGraphScope* g) {
  g->attn = g->attn || s == GraphScope::kAttn;
  g->mlp = g->mlp || s == GraphScope::kMlp;
  g->moe_router = g->moe_router || s == GraphScope::kMoeRouter;
  g->moe_preprocess = g->moe_preprocess || s == GraphScope::kMoePreprocess;
  g->mamba = g->mamba || s == GraphScope::kMamba;
  g->full_iteration = g->full_iteration || s == GraphScope::kFullIteration;
}

// cuda_graphs: one scope, or a list of them ([attn, moe_router, moe_preprocess]).
void DecodeCudaGraphs(YamlReader& r, CudaGraphScope* g) {
  const YAML::Node n = r.Child("cuda_graphs");
  if (!n || !n.IsSequence()) {
    GraphScope s = GraphScope::kNone;
    r.GetEnum<GraphScope>("cuda_graphs", GraphScopes(), &s);
    AddScope(s, g);
    return;
  }
  r.Skip("cuda_graphs");
  for (size_t i = 0; i < n.size(); ++i) {
    const auto& scopes = GraphScopes();
    const auto it = std::find_if(scopes.begin(), scopes.end(), [&](const auto& c) {
      return n[i].IsScalar() && c.first == n[i].Scalar();
    });
    if (it == scopes.end()) {
      Fail(r.sources(), n[i], r.KeyPath("cuda_graphs") + "[" + std::to_string(i) + "]",
           "expected one of attn | mlp | moe_router | moe_preprocess | mamba | full_iteration, "
           "found " +
               Describe(n[i]));
    }
    AddScope(it->second, g);
  }
  if (g->moe_preprocess && !g->moe_router) {
    Fail(r.sources(), n, r.KeyPath("cuda_graphs"),
         "moe_preprocess is captured with the router: add moe_router");
  }
}

// plan.recompute_modules: a list of the modules selective recomputation re-runs
// (config/recompute_modules.h). Read whatever plan.recompute says and used only under
// selective (as Megatron-Core), so that `--set plan.recompute=full` and sweeps over
// recompute run on an experiment that names its modules.
void DecodeRecomputeModules(YamlReader& r, PlanSpec* p) {
  r.Skip("recompute_modules");
  if (!r.Has("recompute_modules")) return;
  const YAML::Node n = r.Child("recompute_modules");
  const std::string key = r.KeyPath("recompute_modules");
  if (!n.IsSequence()) {
    Fail(r.sources(), n, key, "expected a list of module names, found " + Describe(n));
  }
  p->recompute_modules = NoRecomputeModules();
  for (size_t i = 0; i < n.size(); ++i) {
    const std::string item = key + "[" + std::to_string(i) + "]";
    if (n[i].IsScalar() && SetRecomputeModule(n[i].Scalar(), &p->recompute_modules)) continue;
    const auto& other = UnmodelledRecomputeModules();
    const bool known =
        n[i].IsScalar() && std::find(other.begin(), other.end(), n[i].Scalar()) != other.end();
    std::string names;
    for (const auto& [name, flag] : RecomputeModuleNames()) {
      names += (names.empty() ? "" : " | ") + name;
    }
    Fail(r.sources(), n[i], item,
         std::string(known ? "not modelled: " : "") + "expected one of " + names + ", found " +
             Describe(n[i]));
  }
}

}  // namespace

PlanSpec DecodePlan(YamlReader& r) {
  PlanSpec p;
  if (IsJaxPlan(r)) p.jax = DecodeJaxPlan(r);  // its degrees: sim/plan/sharding.h
  r.GetInt("tp", &p.tp);
  r.GetInt("pp", &p.pp);
  r.GetInt("dp", &p.dp);
  r.GetInt("cp", &p.cp);
  r.GetInt("ep", &p.ep);
  r.GetInt("zero", &p.zero);
  r.GetBool("sequence_parallel", &p.sequence_parallel);
  r.GetEnum<Recompute>("recompute", RecomputeNames(), &p.recompute);
  DecodeRecomputeModules(r, &p);
  r.GetInt("cpu_offload_layers", &p.cpu_offload_layers);
  r.GetEnum<ScheduleKind>("schedule", ScheduleNames(), &p.schedule);
  r.GetInt("virtual_stages", &p.virtual_stages);
  DecodeStageLayers(r, &p.stage_layers);
  r.GetInt("micro_batch", &p.micro_batch);
  r.GetInt("global_batch", &p.global_batch, true);
  double bucket_mb = static_cast<double>(p.dp_bucket_bytes) / 1e6;
  r.GetDouble("dp_bucket_mb", &bucket_mb);
  RequirePositive(r, "dp_bucket_mb", bucket_mb);
  if (bucket_mb * 1e6 > PlanSpec::kMaxDpBucketBytes) {
    Fail(r.sources(), r.Child("dp_bucket_mb"), r.KeyPath("dp_bucket_mb"),
         "expected at most 1e9 MB, found " + Describe(r.Child("dp_bucket_mb")));
  }
  p.dp_bucket_bytes = static_cast<int64_t>(bucket_mb * 1e6);
  r.GetBool("overlap_p2p", &p.overlap_p2p);
  r.GetBool("tp_comm_overlap", &p.tp_comm_overlap);
  r.GetDouble("moe_skew", &p.moe_skew);
  r.GetDouble("moe_capacity_factor", &p.moe_capacity_factor);
  r.GetEnum<MoeDispatcher>("moe_dispatcher",
                           {{"alltoall", MoeDispatcher::kAllToAll}, {"flex", MoeDispatcher::kFlex}},
                           &p.moe_dispatcher);
  r.GetEnum<MoeFlexBackend>(
      "moe_flex_backend",
      {{"deepep", MoeFlexBackend::kDeepEp}, {"hybridep", MoeFlexBackend::kHybridEp}},
      &p.moe_flex_backend);
  r.GetEnum<MoeGroupedGemm>("moe_grouped_gemm",
                            {{"te", MoeGroupedGemm::kTe},
                             {"gmm", MoeGroupedGemm::kGmm},
                             {"torch_mm", MoeGroupedGemm::kTorchMm}},
                            &p.moe_grouped_gemm);
  r.GetEnum<MoeRouting>("moe_routing",
                        {{"random", MoeRouting::kRandom}, {"contiguous", MoeRouting::kContiguous}},
                        &p.moe_routing);
  r.GetEnum<Framework>("framework", FrameworkNames(), &p.framework);
  DecodeFrameworkOptions(r, p.framework, &p.framework_options);
  r.GetEnum<AllReduceAlgorithm>("allreduce_algorithm",
                                {{"auto", AllReduceAlgorithm::kAuto},
                                 {"ring", AllReduceAlgorithm::kRing},
                                 {"hierarchical", AllReduceAlgorithm::kHierarchical},
                                 {"tree", AllReduceAlgorithm::kTree}},
                                &p.allreduce_algorithm);
  r.Skip("mesh_order");
  if (r.Has("mesh_order")) {
    const YAML::Node order = r.Child("mesh_order");
    const std::vector<std::pair<std::string, Axis>> names = {{"tp", Axis::kTp},
                                                             {"cp", Axis::kCp},
                                                             {"ep", Axis::kEp},
                                                             {"dp", Axis::kDp},
                                                             {"pp", Axis::kPp}};
    auto bad = [&](const std::string& found) {
      Fail(r.sources(), order, r.KeyPath("mesh_order"),
           "expected a list of the five axes tp, cp, ep, dp, pp in some order, found " + found);
    };
    if (!order.IsSequence() || order.size() != kAxisCount) bad(Describe(order));
    std::array<bool, kAxisCount> seen{};
    for (size_t i = 0; i < order.size(); ++i) {
      const std::string s = order[i].IsScalar() ? order[i].Scalar() : Describe(order[i]);
      auto it =
          std::find_if(names.begin(), names.end(), [&](const auto& n) { return n.first == s; });
      if (it == names.end() || seen[static_cast<int>(it->second)])
        bad("'" + s + "' at position " + std::to_string(i + 1));
      seen[static_cast<int>(it->second)] = true;
      p.mesh_order[i] = it->second;
    }
  }
  r.Finish();
  return p;
}

TrainingSpec DecodeTraining(YamlReader& r) {
  TrainingSpec t;
  r.GetEnum<Dtype>("dtype", {{"bf16", Dtype::kBf16}, {"fp16", Dtype::kFp16}, {"fp8", Dtype::kFp8}},
                   &t.dtype);
  r.GetEnum<Fp8Recipe>("fp8_recipe",
                       {{"delayed", Fp8Recipe::kDelayed},
                        {"current", Fp8Recipe::kCurrent},
                        {"blockwise", Fp8Recipe::kBlockwise},
                        {"mxfp8", Fp8Recipe::kMxfp8}},
                       &t.fp8_recipe);
  r.GetEnum<Optimizer>("optimizer", {{"adam", Optimizer::kAdam}, {"sgd", Optimizer::kSgd}},
                       &t.optimizer);
  r.GetBool("flash_attention", &t.flash_attention);
  r.GetBool("cross_entropy_fusion", &t.cross_entropy_fusion);
  r.GetBool("squared_relu_fusion", &t.squared_relu_fusion);
  r.GetEnum<CrossEntropyImpl>("cross_entropy_fusion_impl",
                              {{"native", CrossEntropyImpl::kNative},
                               {"te", CrossEntropyImpl::kTe},
                               {"torch", CrossEntropyImpl::kTorch},
                               {"torch_fp32", CrossEntropyImpl::kTorchFp32}},
                              &t.cross_entropy_impl);
  r.GetEnum<GradAccumDtype>("grad_accum_dtype",
                            {{"same", GradAccumDtype::kSame}, {"fp32", GradAccumDtype::kFp32}},
                            &t.grad_accum_dtype);
  r.GetBool("fp8_param_gather", &t.fp8_param_gather);
  r.GetBool("cudnn_norm", &t.cudnn_norm);
  r.GetBool("fp8_attention", &t.fp8_attention);
  r.GetEnum<MomentsDtype>("moments_dtype",
                          {{"fp32", MomentsDtype::kFp32}, {"bf16", MomentsDtype::kBf16}},
                          &t.moments_dtype);
  r.GetBool("master_weights", &t.master_weights);
  DecodeCudaGraphs(r, &t.cuda_graphs);
  r.Finish();
  return t;
}

}  // namespace meshsim::config

#include "sim/config/decode.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <limits>

#include "sim/config/decode_jax.h"
#include "sim/config/gemm_table.h"
#include "sim/plan/plan_names.h"

namespace meshsim::config {
namespace {

namespace fs = std::filesystem;

void RequirePositive(YamlReader& r, const std::string& key, double v) {
  if (!(v > 0)) {
    Fail(r.sources(), r.Child(key), r.KeyPath(key),
         "expected a positive number, found " + Describe(r.Child(key)));
  }
}

void RequireAtLeast(YamlReader& r, const std::string& key, int64_t v, int64_t min) {
  if (v < min) {
    Fail(r.sources(), r.Child(key), r.KeyPath(key),
         "expected an integer >= " + std::to_string(min) + ", found " + std::to_string(v));
  }
}

void RequireFraction(YamlReader& r, const std::string& key, double v) {
  if (!(v > 0 && v <= 1)) {
    Fail(r.sources(), r.Child(key), r.KeyPath(key),
         "expected a fraction in (0, 1], found " + Describe(r.Child(key)));
  }
}

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
  r.Finish();
}

// what_if: {links: [{link: NAME, bandwidth_factor: F} | {link: NAME, failed: true}],
//           stragglers: [{gpu: N, slowdown: F}]}
void DecodeWhatIf(YamlReader& cluster, ClusterSpec* c) {
  YamlReader w = cluster.Map("what_if");
  auto list = [&](const std::string& key) {
    w.Skip(key);
    const YAML::Node n = w.Child(key);
    if (n && !n.IsSequence()) {
      Fail(w.sources(), n, w.KeyPath(key), "expected a list, found " + Describe(n));
    }
    return n;
  };
  const YAML::Node links = list("links");
  for (size_t i = 0; links && i < links.size(); ++i) {
    YamlReader item(links[i], w.KeyPath("links") + "[" + std::to_string(i) + "]", w.sources());
    LinkChange change;
    item.GetString("link", &change.link, true);
    item.GetDouble("bandwidth_factor", &change.bandwidth_factor);
    RequirePositive(item, "bandwidth_factor", change.bandwidth_factor);
    item.GetBool("failed", &change.failed);
    item.Finish();
    c->what_if.links.push_back(change);
  }
  const YAML::Node stragglers = list("stragglers");
  for (size_t i = 0; stragglers && i < stragglers.size(); ++i) {
    YamlReader item(stragglers[i], w.KeyPath("stragglers") + "[" + std::to_string(i) + "]",
                    w.sources());
    Straggler s;
    item.GetInt("gpu", &s.gpu, true);
    if (s.gpu < 0 || s.gpu >= c->TotalGpus()) {
      Fail(item.sources(), item.Child("gpu"), item.KeyPath("gpu"),
           "expected a GPU index in 0.." + std::to_string(c->TotalGpus() - 1) + ", found " +
               std::to_string(s.gpu));
    }
    item.GetDouble("slowdown", &s.slowdown, true);
    RequirePositive(item, "slowdown", s.slowdown);
    item.Finish();
    c->what_if.stragglers.push_back(s);
  }
  w.Finish();
}

// Fails when `r` holds an experiment (model:, cluster:, plan:) where a `what` file was
// expected: the user passed the wrong file, and "layers: required key is missing" would
// not say so.
void RejectExperiment(const YamlReader& r, const std::string& what) {
  if (!r.Has("plan") || !(r.Has("model") || r.Has("cluster"))) return;
  std::string where = r.KeyPath("");  // "model." inside an experiment, "" for a file
  if (!where.empty()) where.pop_back();
  Fail(r.sources(), r.node(), where.empty() ? "(top level)" : where,
       "expected a " + what + " YAML, found an experiment (it has model:, cluster: and plan:); " +
           "pass the " + what + " file the experiment names");
}

// The keys of hybrid models (layer_pattern, the Mamba-2 mixer), of LatentMoE and of MTP.
void DecodeHybridKeys(YamlReader& r, ModelSpec* m) {
  r.GetInt64("moe_latent_size", &m->moe_latent_size);
  r.GetString("layer_pattern", &m->layer_pattern);
  r.GetInt("mamba_heads", &m->mamba_heads);
  r.GetInt64("mamba_head_dim", &m->mamba_head_dim);
  r.GetInt64("mamba_state", &m->mamba_state);
  r.GetInt("mamba_groups", &m->mamba_groups);
  r.GetInt("mamba_conv_kernel", &m->mamba_conv_kernel);
  r.GetInt64("mamba_chunk", &m->mamba_chunk);
  r.GetInt("mtp_layers", &m->mtp_layers);
}

void FailKey(YamlReader& r, const std::string& key, const std::string& message) {
  Fail(r.sources(), r.Child(key), r.KeyPath(key), message);
}

// layer_pattern: one of M * - E per layer, layers of them; MoE layers only with experts
// and experts only with MoE layers; the pattern, not dense_layers / moe_every, places them.
void CheckLayerPattern(YamlReader& r, const ModelSpec& m) {
  const std::string& p = m.layer_pattern;
  const size_t bad = p.find_first_not_of("M*-E");
  if (bad != std::string::npos) {
    FailKey(r, "layer_pattern",
            "expected one character per layer, M (Mamba-2), * (attention), - (MLP) or E (MoE), "
            "found '" +
                p.substr(bad, 1) + "' at position " + std::to_string(bad));
  }
  if (p.size() != static_cast<size_t>(m.layers)) {
    FailKey(r, "layer_pattern",
            "expected layers = " + std::to_string(m.layers) + " characters, found " +
                std::to_string(p.size()));
  }
  const bool moe_layers = p.find('E') != std::string::npos;
  if (moe_layers && m.experts == 0) {
    FailKey(r, "layer_pattern", "expected experts >= 1 for its E (MoE) layers, found experts = 0");
  }
  if (!moe_layers && m.experts > 0) {
    FailKey(r, "experts",
            "expected E (MoE) layers in layer_pattern for experts = " + std::to_string(m.experts) +
                ", found none");
  }
  for (const char* key : {"dense_layers", "moe_every"}) {
    if (r.Has(key)) {
      FailKey(r, key,
              std::string("expected no ") + key +
                  " with layer_pattern (the pattern places the MoE layers), found " +
                  Describe(r.Child(key)));
    }
  }
}

// The Mamba-2 mixer's sizes when the pattern has M layers; MTP counts.
void CheckHybrid(YamlReader& r, const ModelSpec& m) {
  RequireAtLeast(r, "mtp_layers", m.mtp_layers, 0);
  RequireAtLeast(r, "moe_latent_size", m.moe_latent_size, 0);
  RequireAtLeast(r, "mamba_groups", m.mamba_groups, 1);
  RequireAtLeast(r, "mamba_conv_kernel", m.mamba_conv_kernel, 1);
  RequireAtLeast(r, "mamba_chunk", m.mamba_chunk, 1);
  if (!m.IsHybrid()) return;
  CheckLayerPattern(r, m);
  if (m.layer_pattern.find('M') == std::string::npos) return;
  const std::pair<const char*, int64_t> sizes[] = {{"mamba_heads", m.mamba_heads},
                                                   {"mamba_head_dim", m.mamba_head_dim},
                                                   {"mamba_state", m.mamba_state}};
  for (const auto& [key, v] : sizes) {
    if (v < 1) {
      FailKey(r, key,
              std::string("expected ") + key +
                  " >= 1 for the M (Mamba-2) layers of layer_pattern, found " +
                  (r.Has(key) ? Describe(r.Child(key)) : std::string("none")));
    }
  }
  if (m.mamba_heads % m.mamba_groups != 0) {
    FailKey(r, "mamba_groups",
            "mamba_groups = " + std::to_string(m.mamba_groups) +
                " does not divide mamba_heads = " + std::to_string(m.mamba_heads));
  }
}

}  // namespace

ModelSpec DecodeModel(YamlReader& r) {
  RejectExperiment(r, "model");
  ModelSpec m;
  r.GetString("name", &m.name, true);
  r.GetInt("layers", &m.layers, true);
  r.GetInt64("hidden", &m.hidden, true);
  r.GetInt("heads", &m.heads, true);
  m.kv_heads = m.heads;
  r.GetInt("kv_heads", &m.kv_heads);
  r.GetInt64("ffn_hidden", &m.ffn_hidden, true);
  r.GetEnum<FfnKind>("ffn_kind", {{"gelu", FfnKind::kGelu}, {"swiglu", FfnKind::kSwiglu}},
                     &m.ffn_kind);
  r.GetInt64("vocab", &m.vocab, true);
  r.GetInt64("seq_len", &m.seq_len, true);
  r.GetBool("tied_embeddings", &m.tied_embeddings);
  r.GetInt("experts", &m.experts);
  r.GetInt("top_k", &m.top_k);
  r.GetInt64("moe_ffn_hidden", &m.moe_ffn_hidden);
  r.GetInt("shared_experts", &m.shared_experts);
  r.GetInt("moe_every", &m.moe_every);
  r.GetInt("dense_layers", &m.dense_layers);
  r.GetInt64("head_dim", &m.head_dim);
  r.GetInt64("v_head_dim", &m.v_head_dim);
  r.GetInt64("q_lora_rank", &m.q_lora_rank);
  r.GetInt64("kv_lora_rank", &m.kv_lora_rank);
  r.GetInt64("qk_rope_head_dim", &m.qk_rope_head_dim);
  r.GetInt64("sliding_window", &m.sliding_window);
  r.GetInt("sliding_window_pattern", &m.sliding_window_pattern);
  DecodeHybridKeys(r, &m);
  r.Finish();
  RequireAtLeast(r, "layers", m.layers, 1);
  RequireAtLeast(r, "hidden", m.hidden, 1);
  RequireAtLeast(r, "heads", m.heads, 1);
  RequireAtLeast(r, "kv_heads", m.kv_heads, 1);
  RequireAtLeast(r, "ffn_hidden", m.ffn_hidden, 1);
  RequireAtLeast(r, "vocab", m.vocab, 1);
  RequireAtLeast(r, "seq_len", m.seq_len, 1);
  RequireAtLeast(r, "experts", m.experts, 0);
  RequireAtLeast(r, "shared_experts", m.shared_experts, 0);
  RequireAtLeast(r, "moe_every", m.moe_every, 1);
  RequireAtLeast(r, "dense_layers", m.dense_layers, 0);
  RequireAtLeast(r, "head_dim", m.head_dim, 0);
  RequireAtLeast(r, "v_head_dim", m.v_head_dim, 0);
  RequireAtLeast(r, "q_lora_rank", m.q_lora_rank, 0);
  RequireAtLeast(r, "kv_lora_rank", m.kv_lora_rank, 0);
  RequireAtLeast(r, "qk_rope_head_dim", m.qk_rope_head_dim, 0);
  RequireAtLeast(r, "sliding_window", m.sliding_window, 0);
  RequireAtLeast(r, "sliding_window_pattern", m.sliding_window_pattern, 1);
  // Megatron's default: experts as wide as the dense MLP.
  if (m.experts > 0 && m.moe_ffn_hidden == 0) m.moe_ffn_hidden = m.ffn_hidden;
  if (m.head_dim == 0 && m.hidden % m.heads != 0) {
    Fail(r.sources(), r.Child("heads"), r.KeyPath("heads"),
         "heads = " + std::to_string(m.heads) + " does not divide hidden = " +
             std::to_string(m.hidden) + " (set head_dim when heads x head_dim != hidden)");
  }
  if (m.IsMla() && m.kv_heads != m.heads) {
    Fail(r.sources(), r.Child("kv_heads"), r.KeyPath("kv_heads"),
         "Multi-head Latent Attention (kv_lora_rank > 0) needs kv_heads = heads = " +
             std::to_string(m.heads) + ", found " + std::to_string(m.kv_heads));
  }
  if (!m.IsMla() && (m.q_lora_rank > 0 || m.qk_rope_head_dim > 0)) {
    const char* key = m.q_lora_rank > 0 ? "q_lora_rank" : "qk_rope_head_dim";
    Fail(r.sources(), r.Child(key), r.KeyPath(key),
         std::string("expected ") + key +
             " only with Multi-head Latent Attention (kv_lora_rank > 0), found " +
             std::to_string(m.q_lora_rank > 0 ? m.q_lora_rank : m.qk_rope_head_dim));
  }
  if (m.heads % m.kv_heads != 0) {
    Fail(r.sources(), r.Child("kv_heads"), r.KeyPath("kv_heads"),
         "kv_heads = " + std::to_string(m.kv_heads) +
             " does not divide heads = " + std::to_string(m.heads));
  }
  if (m.experts > 0 && (m.top_k < 1 || m.top_k > m.experts)) {
    Fail(r.sources(), r.Child("top_k"), r.KeyPath("top_k"),
         "a MoE model needs 1 <= top_k <= experts = " + std::to_string(m.experts) + ", found " +
             std::to_string(m.top_k));
  }
  CheckHybrid(r, m);
  return m;
}

namespace {

// flash_attention: {seq_lens: [...], efficiency: [...], backward_factor, causal_factor}
void DecodeFlashAttention(YamlReader f, FlashAttentionSpec* fa) {
  f.GetNumberList("seq_lens", &fa->seq_lens, true);
  f.GetNumberList("efficiency", &fa->efficiency, true);
  const auto bad = [&](const std::string& key, const std::string& expected) {
    Fail(f.sources(), f.Child(key), f.KeyPath(key),
         "expected " + expected + ", found " + Describe(f.Child(key)));
  };
  if (fa->seq_lens.empty()) bad("seq_lens", "a non-empty list of sequence lengths");
  for (size_t i = 0; i < fa->seq_lens.size(); ++i) {
    if (!(fa->seq_lens[i] > 0) || (i > 0 && !(fa->seq_lens[i] > fa->seq_lens[i - 1]))) {
      bad("seq_lens", "ascending positive sequence lengths");
    }
  }
  if (fa->efficiency.size() != fa->seq_lens.size()) {
    bad("efficiency", "one value per seq_lens entry (" + std::to_string(fa->seq_lens.size()) + ")");
  }
  for (double e : fa->efficiency) {
    if (!(e > 0 && e <= 1)) bad("efficiency", "fractions in (0, 1]");
  }
  f.GetDouble("backward_factor", &fa->backward_factor);
  RequireFraction(f, "backward_factor", fa->backward_factor);
  f.GetDouble("causal_factor", &fa->causal_factor);
  RequireFraction(f, "causal_factor", fa->causal_factor);
  f.Finish();
}

void DecodeGpu(YamlReader g, GpuSpec* gpu) {
  g.GetString("kind", &gpu->kind, true);
  g.GetEnum<GpuArch>("architecture",
                     {{"ampere", GpuArch::kAmpere},
                      {"hopper", GpuArch::kHopper},
                      {"blackwell", GpuArch::kBlackwell},
                      {"cdna2", GpuArch::kCdna2},
                      {"cdna3", GpuArch::kCdna3}},
                     &gpu->architecture);
  g.GetDouble("memory_gib", &gpu->memory_gib, true);
  RequirePositive(g, "memory_gib", gpu->memory_gib);
  YamlReader peak = g.Map("peak_tflops");
  peak.GetDouble("bf16", &gpu->peak_tflops_bf16, true);
  peak.GetDouble("fp16", &gpu->peak_tflops_fp16);
  peak.GetDouble("fp8", &gpu->peak_tflops_fp8);
  peak.Finish();
  RequirePositive(peak, "bf16", gpu->peak_tflops_bf16);
  g.GetDouble("hbm_gbps", &gpu->hbm_gbps, true);
  RequirePositive(g, "hbm_gbps", gpu->hbm_gbps);
  g.GetInt("sms", &gpu->sms);
  RequireAtLeast(g, "sms", gpu->sms, 1);
  g.GetDouble("gemm_tile_m", &gpu->gemm_tile_m);
  RequirePositive(g, "gemm_tile_m", gpu->gemm_tile_m);
  g.GetDouble("gemm_tile_n", &gpu->gemm_tile_n);
  RequirePositive(g, "gemm_tile_n", gpu->gemm_tile_n);
  g.GetDouble("gemm_k_half", &gpu->gemm_k_half);
  if (gpu->gemm_k_half < 0) {
    Fail(g.sources(), g.Child("gemm_k_half"), g.KeyPath("gemm_k_half"),
         "expected a number >= 0, found " + Describe(g.Child("gemm_k_half")));
  }
  if (g.Has("flash_attention"))
    DecodeFlashAttention(g.Map("flash_attention"), &gpu->flash_attention);
  g.Finish();
}

// nvlink_domain_nodes: >= 1; the cluster is one domain (nodes <= it) or whole domains.
void DecodeNvlinkDomain(YamlReader& r, ClusterSpec* c) {
  r.GetInt("nvlink_domain_nodes", &c->nvlink_domain_nodes);
  RequireAtLeast(r, "nvlink_domain_nodes", c->nvlink_domain_nodes, 1);
  const int d = c->nvlink_domain_nodes;
  if (c->nodes > d && c->nodes % d != 0) {
    Fail(r.sources(), r.Child("nvlink_domain_nodes"), r.KeyPath("nvlink_domain_nodes"),
         "expected a divisor of nodes = " + std::to_string(c->nodes) +
             " (whole NVLink domains) or at least nodes, found " + std::to_string(d));
  }
}

// torus: the slice shape (1 to 3 dimensions whose product is gpus_per_node).
void DecodeTorusShape(YamlReader& in, int gpus_per_node, TorusSpec* t) {
  std::vector<double> dims;
  in.GetNumberList("torus", &dims, true);
  const YAML::Node node = in.Child("torus");
  if (dims.empty() || dims.size() > kMaxTorusDims) {
    Fail(in.sources(), node, in.KeyPath("torus"),
         "expected the slice shape as a list of 1 to 3 chip counts, e.g. [4, 4, 8], found " +
             Describe(node));
  }
  int64_t chips = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (!(dims[i] >= 1 && dims[i] <= kMaxClusterGpus) || dims[i] != static_cast<int>(dims[i])) {
      Fail(in.sources(), node[i], in.KeyPath("torus") + "[" + std::to_string(i) + "]",
           "expected an integer >= 1, found " + Describe(node[i]));
    }
    t->dims.push_back(static_cast<int>(dims[i]));
    chips *= t->dims.back();
  }
  if (chips != gpus_per_node) {
    Fail(in.sources(), node, in.KeyPath("torus"),
         "expected a shape whose chips multiply to gpus_per_node = " +
             std::to_string(gpus_per_node) + " (a slice is a node), found " +
             std::to_string(chips) + " chips");
  }
}

// wraparound: one boolean for every dimension, or a list of one per dimension.
void DecodeWraparound(YamlReader& in, TorusSpec* t) {
  t->wraparound.assign(t->dims.size(), true);
  in.Skip("wraparound");
  if (!in.Has("wraparound")) return;
  const YAML::Node node = in.Child("wraparound");
  auto flag = [&](const YAML::Node& v, const std::string& key) {
    if (v.IsScalar() && (v.Scalar() == "true" || v.Scalar() == "false")) {
      return v.Scalar() == "true";
    }
    Fail(in.sources(), v, key, "expected true or false, found " + Describe(v));
    return false;
  };
  if (node.IsSequence()) {
    if (node.size() != t->dims.size()) {
      Fail(in.sources(), node, in.KeyPath("wraparound"),
           "expected one flag per torus dimension (" + std::to_string(t->dims.size()) +
               "), found " + Describe(node));
    }
    for (size_t i = 0; i < node.size(); ++i) {
      t->wraparound[i] = flag(node[i], in.KeyPath("wraparound") + "[" + std::to_string(i) + "]");
    }
    return;
  }
  t->wraparound.assign(t->dims.size(), flag(node, in.KeyPath("wraparound")));
}

void DecodeIntraNode(YamlReader in, int gpus_per_node, IntraNodeSpec* n) {
  in.GetEnum<IntraNodeKind>("kind",
                            {{"nvswitch", IntraNodeKind::kNvswitch},
                             {"ring", IntraNodeKind::kRing},
                             {"full_mesh", IntraNodeKind::kFullMesh},
                             {"torus", IntraNodeKind::kTorus}},
                            &n->kind, true);
  if (n->kind == IntraNodeKind::kTorus) {
    DecodeTorusShape(in, gpus_per_node, &n->torus);
    DecodeWraparound(in, &n->torus);
    in.GetDouble("gbps_per_link", &n->gbps_per_link, true);
    RequirePositive(in, "gbps_per_link", n->gbps_per_link);
    n->gbps_per_gpu = n->gbps_per_link * std::max(1, n->torus.PortsPerChip());
    if (in.Has("gbps_per_gpu")) {
      Fail(in.sources(), in.Child("gbps_per_gpu"), in.KeyPath("gbps_per_gpu"),
           "expected no gbps_per_gpu with kind torus (give gbps_per_link, per ICI link and "
           "direction), found " +
               Describe(in.Child("gbps_per_gpu")));
    }
  } else {
    in.GetDouble("gbps_per_gpu", &n->gbps_per_gpu, true);
    RequirePositive(in, "gbps_per_gpu", n->gbps_per_gpu);
  }
  in.GetDouble("latency_us", &n->latency_us);
  const bool nvls_given = in.Has("nvls");
  bool nvls = false;
  in.GetBool("nvls", &nvls);  // absent: derived (NvlsMode::kAuto)
  if (nvls_given) n->nvls = nvls ? NvlsMode::kOn : NvlsMode::kOff;
  in.Finish();
}

void DecodeInterNode(YamlReader out, InterNodeSpec* n) {
  out.GetEnum<InterNodeKind>("kind",
                             {{"fat_tree", InterNodeKind::kFatTree},
                              {"rail_optimized", InterNodeKind::kRailOptimized},
                              {"single_switch", InterNodeKind::kSingleSwitch}},
                             &n->kind, true);
  out.GetInt("nics_per_node", &n->nics_per_node, true);
  RequireAtLeast(out, "nics_per_node", n->nics_per_node, 1);
  out.GetDouble("gbps_per_nic", &n->gbps_per_nic, true);
  RequirePositive(out, "gbps_per_nic", n->gbps_per_nic);
  out.GetDouble("latency_us", &n->latency_us);
  out.GetDouble("oversubscription", &n->oversubscription);
  out.GetInt("switch_ports", &n->switch_ports);
  RequireAtLeast(out, "switch_ports", n->switch_ports, 1);
  if (n->oversubscription < 1) {
    Fail(out.sources(), out.Child("oversubscription"), out.KeyPath("oversubscription"),
         "expected a ratio >= 1, found " + Describe(out.Child("oversubscription")));
  }
  out.Finish();
}

// gemm_table: FILE.csv, relative to the file that names it (the working directory when
// set with --set).
void DecodeGemmTable(YamlReader& e, EfficiencySpec* eff) {
  std::string file;
  e.GetString("gemm_table", &file);
  const std::string key = e.KeyPath("gemm_table");
  const std::string origin = OriginFile(e.sources(), key);
  const fs::path path = origin.empty() ? fs::path(file) : fs::path(origin).parent_path() / file;
  Result<std::vector<GemmMeasurement>> table = LoadGemmTable(path.string(), key);
  if (!table.ok()) throw ConfigError{table.error()};
  eff->gemm_table = std::move(table.value());
}

// comm_interference: one number for every kind, or {all_reduce, all_gather,
// reduce_scatter, all_to_all, p2p}; each >= 0.
void DecodeInterference(YamlReader& e, CommInterference* ci) {
  const auto check = [](YamlReader& r, const std::string& key, double v) {
    if (!(v >= 0)) {
      Fail(r.sources(), r.Child(key), r.KeyPath(key),
           "expected a slowdown >= 0, found " + Describe(r.Child(key)));
    }
  };
  if (e.Child("comm_interference").IsScalar()) {
    double all = 0;
    e.GetDouble("comm_interference", &all);
    check(e, "comm_interference", all);
    *ci = CommInterference{all, all, all, all, all};
    return;
  }
  YamlReader m = e.Map("comm_interference");
  const std::pair<const char*, double*> kinds[] = {{"all_reduce", &ci->all_reduce},
                                                   {"all_gather", &ci->all_gather},
                                                   {"reduce_scatter", &ci->reduce_scatter},
                                                   {"all_to_all", &ci->all_to_all},
                                                   {"p2p", &ci->p2p}};
  for (const auto& [key, value] : kinds) {
    m.GetDouble(key, value);
    check(m, key, *value);
  }
  m.Finish();
}

void DecodeEfficiency(YamlReader e, EfficiencySpec* eff) {
  e.GetDouble("matmul", &eff->matmul);
  RequireFraction(e, "matmul", eff->matmul);
  if (e.Has("matmul_fp8")) {
    e.GetDouble("matmul_fp8", &eff->matmul_fp8);
    RequireFraction(e, "matmul_fp8", eff->matmul_fp8);
  } else {
    e.Skip("matmul_fp8");
  }
  e.GetDouble("memory", &eff->memory);
  RequireFraction(e, "memory", eff->memory);
  e.GetDouble("network", &eff->network);
  RequireFraction(e, "network", eff->network);
  if (e.Has("nic")) {
    e.GetDouble("nic", &eff->nic);
    RequireFraction(e, "nic", eff->nic);
  } else {
    e.Skip("nic");
  }
  e.GetDouble("kernel_overhead_us", &eff->kernel_overhead_us);
  if (eff->kernel_overhead_us < 0) {
    Fail(e.sources(), e.Child("kernel_overhead_us"), e.KeyPath("kernel_overhead_us"),
         "expected a time >= 0, found " + Describe(e.Child("kernel_overhead_us")));
  }
  e.GetEnum<KernelModelKind>(
      "kernel_model",
      {{"shapes", KernelModelKind::kShapes}, {"roofline", KernelModelKind::kRoofline}},
      &eff->kernel_model);
  if (e.Has("gemm_table")) DecodeGemmTable(e, eff);
  e.Skip("gemm_table");
  if (e.Has("comm_interference")) DecodeInterference(e, &eff->comm_interference);
  e.Skip("comm_interference");
  e.Finish();
}

}  // namespace

ClusterSpec DecodeCluster(YamlReader& r) {
  RejectExperiment(r, "cluster");
  ClusterSpec c;
  r.GetString("name", &c.name, true);
  DecodeGpu(r.Map("gpu"), &c.gpu);
  r.GetInt("nodes", &c.nodes, true);
  RequireAtLeast(r, "nodes", c.nodes, 1);
  r.GetInt("gpus_per_node", &c.gpus_per_node, true);
  RequireAtLeast(r, "gpus_per_node", c.gpus_per_node, 1);
  const int64_t gpus = int64_t{c.nodes} * c.gpus_per_node;
  if (gpus > kMaxClusterGpus) {
    Fail(r.sources(), r.Child("nodes"), r.KeyPath("nodes"),
         "expected at most " + std::to_string(kMaxClusterGpus) + " GPUs, found nodes " +
             std::to_string(c.nodes) + " x gpus_per_node " + std::to_string(c.gpus_per_node) +
             " = " + std::to_string(gpus));
  }
  DecodeNvlinkDomain(r, &c);
  DecodeIntraNode(r.Map("intra_node"), c.gpus_per_node, &c.intra_node);
  if (c.Torus() && c.nvlink_domain_nodes != 1) {
    Fail(r.sources(), r.Child("nvlink_domain_nodes"), r.KeyPath("nvlink_domain_nodes"),
         "expected 1 with intra_node.kind torus (a TPU slice is one node), found " +
             std::to_string(c.nvlink_domain_nodes));
  }
  if (r.Has("inter_node")) {
    DecodeInterNode(r.Map("inter_node"), &c.inter_node);
  } else if (c.nodes > 1) {
    Fail(r.sources(), r.node(), r.KeyPath("inter_node"),
         "a cluster of " + std::to_string(c.nodes) + " nodes needs an inter_node network");
  }
  if (r.Has("efficiency")) DecodeEfficiency(r.Map("efficiency"), &c.efficiency);
  r.GetEnum<NetworkModelKind>(
      "network_model",
      {{"flow", NetworkModelKind::kFlow}, {"alpha_beta", NetworkModelKind::kAlphaBeta}},
      &c.network_model);
  r.GetEnum<MirrorTraffic>("mirror_traffic",
                           {{"near", MirrorTraffic::kNear}, {"full", MirrorTraffic::kFull}},
                           &c.mirror_traffic);
  if (r.Has("what_if")) DecodeWhatIf(r, &c);
  r.Skip("what_if");
  r.Finish();
  return c;
}

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
  r.GetEnum<GradAccumDtype>("grad_accum_dtype",
                            {{"same", GradAccumDtype::kSame}, {"fp32", GradAccumDtype::kFp32}},
                            &t.grad_accum_dtype);
  r.Finish();
  return t;
}

}  // namespace meshsim::config

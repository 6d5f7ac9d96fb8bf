// Decodes a cluster YAML (experiment key `cluster`, or a file under topologies/).
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <utility>

#include "sim/config/decode.h"
#include "sim/config/decode_checks.h"
#include "sim/config/gemm_table.h"
#include "sim/plan/plan_names.h"

namespace meshsim::config {
namespace {

namespace fs = std::filesystem;

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

// window: {keys, forward, backward, fp8_backward_full_causal}: a measured band kernel.
void DecodeAttentionWindow(YamlReader w, FlashAttentionSpec::Window* window) {
  w.GetDouble("keys", &window->keys, true);
  RequirePositive(w, "keys", window->keys);
  w.GetDouble("forward", &window->forward, true);
  RequireFraction(w, "forward", window->forward);
  w.GetDouble("backward", &window->backward, true);
  RequireFraction(w, "backward", window->backward);
  if (w.Has("fp8_backward_full_causal")) {
    w.GetDouble("fp8_backward_full_causal", &window->fp8_backward_full_causal);
    RequireFraction(w, "fp8_backward_full_causal", window->fp8_backward_full_causal);
  }
  w.Finish();
}

// flash_attention: {seq_lens: [...], efficiency: [...], causal: [...], causal_backward:
// [...], backward_factor, causal_factor, window: {...}}
void DecodeFlashAttention(YamlReader f, FlashAttentionSpec* fa) {
  f.GetNumberList("seq_lens", &fa->seq_lens, true);
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
  // A curve: one fraction in (0, 1] per seq_lens entry.
  const auto curve = [&](const std::string& key, std::vector<double>* out, bool required) {
    f.GetNumberList(key, out, required);
    if (!required && !f.Has(key)) return;
    if (out->size() != fa->seq_lens.size()) {
      Fail(f.sources(), f.Child(key), f.KeyPath(key),
           "expected one value per seq_lens entry (" + std::to_string(fa->seq_lens.size()) +
               "), found " + std::to_string(out->size()));
    }
    for (double e : *out) {
      if (!(e > 0 && e <= 1)) bad(key, "fractions in (0, 1]");
    }
  };
  curve("efficiency", &fa->efficiency, true);
  curve("causal", &fa->causal, false);
  curve("causal_backward", &fa->causal_backward, false);
  if (f.Has("causal") != f.Has("causal_backward")) {
    const std::string given = f.Has("causal") ? "causal" : "causal_backward";
    const std::string missing = f.Has("causal") ? "causal_backward" : "causal";
    Fail(f.sources(), f.Child(given), f.KeyPath(given),
         "expected " + missing + " beside it (the causal kernels are measured in pairs), found " +
             given + " alone");
  }
  f.GetDouble("backward_factor", &fa->backward_factor);
  RequireFraction(f, "backward_factor", fa->backward_factor);
  f.GetDouble("causal_factor", &fa->causal_factor);
  RequireFraction(f, "causal_factor", fa->causal_factor);
  if (f.Has("window")) DecodeAttentionWindow(f.Map("window"), &fa->window);
  f.Finish();
}

// fused_grouped_mlp: {experts, tokens_per_expert, hidden, ffn, efficiency: {fc1_forward,
// fc2_forward, fc2_dgrad, fc1_dgrad, fc1_wgrad, fc2_wgrad}}: measured fused grouped MLP.
void DecodeFusedGroupedMlp(YamlReader f, FusedGroupedMlpSpec* spec) {
  for (const auto& [key, value] : {std::pair<const char*, double*>{"experts", &spec->experts},
                                   {"tokens_per_expert", &spec->tokens_per_expert},
                                   {"hidden", &spec->hidden},
                                   {"ffn", &spec->ffn}}) {
    f.GetDouble(key, value, true);
    RequirePositive(f, key, *value);
  }
  YamlReader e = f.Map("efficiency");
  using K = FusedGroupedMlpSpec;
  for (const auto& [key, kernel] : {std::pair<const char*, K::Kernel>{"fc1_forward", K::kFc1Fwd},
                                    {"fc2_forward", K::kFc2Fwd},
                                    {"fc2_dgrad", K::kFc2Dgrad},
                                    {"fc1_dgrad", K::kFc1Dgrad},
                                    {"fc1_wgrad", K::kFc1Wgrad},
                                    {"fc2_wgrad", K::kFc2Wgrad}}) {
    e.GetDouble(key, &spec->efficiency[kernel], true);
    RequireFraction(e, key, spec->efficiency[kernel]);
  }
  e.Finish();
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
  if (g.Has("fused_grouped_mlp"))
    DecodeFusedGroupedMlp(g.Map("fused_grouped_mlp"), &gpu->fused_grouped_mlp);
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

// nics_per_node: any count up to gpus_per_node (GPUs share NICs), or a multiple of it
// (each GPU owns nics / gpus_per_node NICs: InterNodeSpec).
void DecodeInterNode(YamlReader out, int gpus_per_node, InterNodeSpec* n) {
  out.GetEnum<InterNodeKind>("kind",
                             {{"fat_tree", InterNodeKind::kFatTree},
                              {"rail_optimized", InterNodeKind::kRailOptimized},
                              {"single_switch", InterNodeKind::kSingleSwitch}},
                             &n->kind, true);
  out.GetInt("nics_per_node", &n->nics_per_node, true);
  RequireAtLeast(out, "nics_per_node", n->nics_per_node, 1);
  if (n->nics_per_node > gpus_per_node && n->nics_per_node % gpus_per_node != 0) {
    Fail(out.sources(), out.Child("nics_per_node"), out.KeyPath("nics_per_node"),
         "expected at most gpus_per_node = " + std::to_string(gpus_per_node) +
             " NICs or a multiple of it (each GPU owns the same number), found " +
             std::to_string(n->nics_per_node));
  }
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
// reduce_scatter, all_to_all, p2p}; each >= 0, a fixed slowdown. Kinds not given keep
// their defaults (CommInterference: the NCCL collectives' from their kernels' SMs).
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
    if (!m.Has(key)) continue;  // the default (CommInterference): kFromKernel or a number
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
  e.GetDouble("grouped_gemm", &eff->grouped_gemm);
  RequireFraction(e, "grouped_gemm", eff->grouped_gemm);
  e.GetDouble("gmm", &eff->gmm);
  RequireFraction(e, "gmm", eff->gmm);
  e.GetDouble("fused_grouped_gemm", &eff->fused_grouped_gemm);
  RequireFraction(e, "fused_grouped_gemm", eff->fused_grouped_gemm);
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

// An optional time >= 0 (µs) at `key`, left as it is when absent.
void DecodeOptionalUs(YamlReader& h, const char* key, double* us) {
  if (!h.Has(key)) return;
  h.GetDouble(key, us);
  if (!(*us >= 0)) {
    Fail(h.sources(), h.Child(key), h.KeyPath(key),
         "expected a time >= 0, found " + Describe(h.Child(key)));
  }
}

void DecodeHost(YamlReader h, HostSpec* host) {
  h.GetDouble("launch_us", &host->launch_us);
  if (!(host->launch_us >= 0)) {
    Fail(h.sources(), h.Child("launch_us"), h.KeyPath("launch_us"),
         "expected a time >= 0, found " + Describe(h.Child("launch_us")));
  }
  DecodeOptionalUs(h, "expert_us", &host->expert_us);
  DecodeOptionalUs(h, "call_us", &host->call_us);
  h.Finish();
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
    DecodeInterNode(r.Map("inter_node"), c.gpus_per_node, &c.inter_node);
  } else if (c.nodes > 1) {
    Fail(r.sources(), r.node(), r.KeyPath("inter_node"),
         "a cluster of " + std::to_string(c.nodes) + " nodes needs an inter_node network");
  }
  if (r.Has("efficiency")) DecodeEfficiency(r.Map("efficiency"), &c.efficiency);
  if (r.Has("host")) DecodeHost(r.Map("host"), &c.host);
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

}  // namespace meshsim::config

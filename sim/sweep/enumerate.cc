#include "sim/sweep/enumerate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <iterator>
#include <tuple>

#include "sim/plan/mesh_torus.h"
#include "sim/plan/plan_names.h"
#include "sim/plan/sharding.h"
#include "sim/plan/stages.h"
#include "sim/sweep/mesh_axes.h"

namespace meshsim {
namespace {

enum class MeshKey { kTp, kPp, kCp, kDp };
constexpr MeshKey kMeshKeys[] = {MeshKey::kTp, MeshKey::kPp, MeshKey::kCp, MeshKey::kDp};

int& MeshField(PlanSpec& p, MeshKey k) {
  switch (k) {
    case MeshKey::kTp:
      return p.tp;
    case MeshKey::kPp:
      return p.pp;
    case MeshKey::kCp:
      return p.cp;
    case MeshKey::kDp:
      return p.dp;
  }
  return p.dp;
}

const char* MeshName(MeshKey k) {
  switch (k) {
    case MeshKey::kTp:
      return "plan.tp";
    case MeshKey::kPp:
      return "plan.pp";
    case MeshKey::kCp:
      return "plan.cp";
    case MeshKey::kDp:
      return "plan.dp";
  }
  return "";
}

using Emit = std::function<void(const PlanSpec&, const std::optional<InputError>&)>;

// One step of the expansion of a group: calls `next` once per value it gives the plan.
using Expander = std::function<void(const PlanSpec&, const std::function<void(const PlanSpec&)>&)>;

template <typename T>
Expander Values(T PlanSpec::*field, std::vector<T> values) {
  return [field, values](const PlanSpec& p, const std::function<void(const PlanSpec&)>& next) {
    PlanSpec q = p;
    for (const T& v : values) {
      q.*field = v;
      next(q);
    }
  };
}

// plan.virtual_stages: auto. pp dividing the layers: every v >= 2 with pp*v dividing them
// (an even split); otherwise every pp*v dividing layers + 2 (Megatron's split accounting for
// the embedding and the loss runs evenly). 1 unless the schedule is interleaved.
Expander VirtualStages(int layers) {
  return [layers](const PlanSpec& p, const std::function<void(const PlanSpec&)>& next) {
    PlanSpec q = p;
    q.virtual_stages = 1;
    const int split = p.pp < 1 ? 0 : layers % p.pp == 0 ? layers : layers + 2;
    if (p.schedule != ScheduleKind::kInterleaved || split == 0 || split % p.pp != 0) {
      next(q);
      return;
    }
    for (int v : Divisors(split / p.pp)) {
      if (v == 1) continue;  // one chunk per stage is 1F1B, not interleaving
      q.virtual_stages = v;
      next(q);
    }
  };
}

// plan.stage_layers: auto. The default split written out; none (ValidatePlan then says
// why) when there is none.
Expander StageLayers(int layers) {
  return [layers](const PlanSpec& p, const std::function<void(const PlanSpec&)>& next) {
    PlanSpec q = p;
    if (p.pp >= 1 && p.virtual_stages >= 1) {
      q.stage_layers =
          DefaultStageLayers(layers, p.pp, p.virtual_stages).value_or(std::vector<int>());
    }
    next(q);
  };
}

// plan.ep: auto. Every divisor of tp*dp*cp (the ranks of a stage that Megatron-Core folds
// expert parallelism over, with expert tensor parallelism 1) that divides the model's
// experts, ascending; 1 for a dense model, and where the mesh leaves no such ranks (the
// configuration is invalid anyway: ValidatePlan says why).
Expander ExpertDegrees(int experts) {
  return [experts](const PlanSpec& p, const std::function<void(const PlanSpec&)>& next) {
    PlanSpec q = p;
    const int64_t ranks = int64_t{p.tp} * p.dp * p.cp;
    if (experts <= 0 || ranks < 1 || ranks > INT32_MAX) {
      q.ep = 1;
      next(q);
      return;
    }
    for (int d : Divisors(static_cast<int>(ranks))) {
      if (experts % d != 0) continue;
      q.ep = d;
      next(q);
    }
  };
}

class GroupExpander {
 public:
  GroupExpander(const SweepSpec& spec, const Experiment& e) : e_(e) {
    for (const SweepAxis& a : spec.axes) {
      const std::optional<MeshSizeKey> size = ParseMeshSizeKey(a.key, e.plan.jax);
      if (size && a.is_auto) auto_sizes_.push_back(*size);
      for (MeshKey k : kMeshKeys) {
        if (a.key == MeshName(k)) {
          in_axes_.push_back(k);
          if (a.is_auto) auto_mesh_.push_back(k);
        }
      }
    }
    // Fixed nesting order after the mesh: expert parallelism, schedule, virtual stages,
    // stage layers, micro-batch, zero, recompute, sequence parallelism.
    auto is_auto = [&spec](const char* key) {
      for (const SweepAxis& a : spec.axes) {
        if (a.key == key && a.is_auto) return true;
      }
      return false;
    };
    if (is_auto("plan.ep")) steps_.push_back(ExpertDegrees(e.model.experts));
    if (is_auto("plan.schedule")) {
      steps_.push_back(
          Values(&PlanSpec::schedule,
                 std::vector<ScheduleKind>{ScheduleKind::kGpipe, ScheduleKind::kOneFOneB,
                                           ScheduleKind::kInterleaved}));
    }
    if (is_auto("plan.virtual_stages")) steps_.push_back(VirtualStages(e.model.layers));
    if (is_auto("plan.stage_layers")) steps_.push_back(StageLayers(e.model.layers));
    if (is_auto("plan.micro_batch")) {
      steps_.push_back([](const PlanSpec& p, const std::function<void(const PlanSpec&)>& next) {
        if (p.dp < 1 || p.global_batch < 1 || p.global_batch % p.dp != 0) {
          next(p);  // invalid whatever the micro-batch: ValidatePlan says why
          return;
        }
        PlanSpec q = p;
        for (int b : Divisors(p.global_batch / p.dp)) {
          q.micro_batch = b;
          next(q);
        }
      });
    }
    if (is_auto("plan.zero"))
      steps_.push_back(Values(&PlanSpec::zero, std::vector<int>{0, 1, 2, 3}));
    if (is_auto("plan.recompute")) {
      steps_.push_back(Values(
          &PlanSpec::recompute,
          std::vector<Recompute>{Recompute::kNone, Recompute::kSelective, Recompute::kFull}));
    }
    if (is_auto("plan.sequence_parallel")) {
      steps_.push_back(Values(&PlanSpec::sequence_parallel, std::vector<bool>{false, true}));
    }
    derive_dp_ = std::find(in_axes_.begin(), in_axes_.end(), MeshKey::kDp) == in_axes_.end() &&
                 !in_axes_.empty();
  }

  void Run(const Emit& emit) {
    emit_ = &emit;
    if (e_.plan.jax.Empty()) {
      Mesh(e_.plan, 0);
    } else {
      JaxMesh(e_.plan);
    }
  }

 private:
  // A JAX-style plan: each choice of its auto mesh sizes, with the degrees derived from
  // the mesh and rules (invalid where they have no PlanSpec equivalent).
  void JaxMesh(const PlanSpec& p) {
    for (const JaxPlan& jax : ExpandMeshSizes(p.jax, auto_sizes_, e_.cluster)) {
      PlanSpec q = p;
      q.jax = jax;
      const Status derived = DerivePlan(jax, e_.cluster, &q);
      if (derived.ok()) {
        Rest(q, 0);
      } else {
        Rest(q, 0, derived.error());
      }
    }
  }

  // Chooses the auto mesh axes one by one, then derives dp (or the last auto axis).
  void Mesh(const PlanSpec& p, size_t i) {
    const int gpus = e_.cluster.TotalGpus();
    // The axis that takes whatever is left of the GPU count: a derived dp, else the last
    // auto mesh axis.
    const bool sink_is_dp = derive_dp_;
    const size_t free_count = sink_is_dp ? auto_mesh_.size() : auto_mesh_.size() - 1;
    if (auto_mesh_.empty() && !derive_dp_) {
      Rest(p, 0);
      return;
    }
    if (i == 0) {
      // Product of the mesh degrees that are neither chosen here nor the sink.
      fixed_ = 1;
      PlanSpec base = p;
      for (MeshKey k : kMeshKeys) {
        const bool chosen = std::find(auto_mesh_.begin(), auto_mesh_.end(), k) != auto_mesh_.end();
        const bool sink = sink_is_dp && k == MeshKey::kDp;
        if (!chosen && !sink) fixed_ *= std::max(1, MeshField(base, k));
      }
      if (fixed_ < 1 || gpus % fixed_ != 0) {
        // No choice can make the product the GPU count: one invalid configuration.
        PlanSpec q = p;
        if (sink_is_dp) {
          InputError err;
          err.key = "plan.dp";
          err.message = "dp = gpus / (tp*pp*cp) = " + std::to_string(gpus) + " / (" +
                        std::to_string(q.tp) + "*" + std::to_string(q.pp) + "*" +
                        std::to_string(q.cp) + ") is not a whole number";
          Rest(q, 0, err);
        } else {
          Rest(q, 0);
        }
        return;
      }
      remaining_ = gpus / fixed_;
    }
    if (i < free_count) {
      const int before = remaining_;
      PlanSpec q = p;
      for (int d : Divisors(before)) {
        MeshField(q, auto_mesh_[i]) = d;
        remaining_ = before / d;
        Mesh(q, i + 1);
      }
      remaining_ = before;
      return;
    }
    PlanSpec q = p;
    MeshField(q, sink_is_dp ? MeshKey::kDp : auto_mesh_.back()) = remaining_;
    Rest(q, 0);
  }

  void Rest(const PlanSpec& p, size_t step, const std::optional<InputError>& invalid = {}) {
    if (step == steps_.size()) {
      (*emit_)(p, invalid);
      return;
    }
    steps_[step](p, [&](const PlanSpec& q) { Rest(q, step + 1, invalid); });
  }

  const Experiment& e_;
  std::vector<MeshKey> in_axes_;         // mesh keys that are axes (explicit or auto)
  std::vector<MeshKey> auto_mesh_;       // those that are auto, in tp, pp, cp, dp order
  std::vector<MeshSizeKey> auto_sizes_;  // a JAX-style plan's auto mesh sizes, file order
  std::vector<Expander> steps_;
  bool derive_dp_ = false;
  int fixed_ = 1;
  int remaining_ = 1;
  const Emit* emit_ = nullptr;
};

uint64_t Fnv(uint64_t h, const std::string& s) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  h ^= 0xff;
  h *= 1099511628211ull;
  return h;
}

}  // namespace

const std::vector<std::string>& AutoKeys() {
  static const std::vector<std::string> keys = {"plan.tp",
                                                "plan.pp",
                                                "plan.cp",
                                                "plan.dp",
                                                "plan.ep",
                                                "plan.micro_batch",
                                                "plan.zero",
                                                "plan.recompute",
                                                "plan.schedule",
                                                "plan.virtual_stages",
                                                "plan.stage_layers",
                                                "plan.sequence_parallel",
                                                "plan.mesh.ici.NAME",
                                                "plan.mesh.dcn.NAME"};
  return keys;
}

bool SupportsAuto(const std::string& key) {
  const auto& keys = AutoKeys();
  return IsMeshSizeKey(key) || std::find(keys.begin(), keys.end(), key) != keys.end();
}

std::vector<int> Divisors(int n) {
  std::vector<int> small, large;
  for (int d = 1; static_cast<int64_t>(d) * d <= n; ++d) {
    if (n % d != 0) continue;
    small.push_back(d);
    if (d != n / d) large.push_back(n / d);
  }
  small.insert(small.end(), large.rbegin(), large.rend());
  return small;
}

std::vector<Configuration> Enumerate(const SweepSpec& spec) {
  std::vector<Configuration> out;
  for (size_t g = 0; g < spec.groups.size(); ++g) {
    GroupExpander expander(spec, spec.groups[g].experiment);
    expander.Run([&](const PlanSpec& p, const std::optional<InputError>& invalid) {
      Configuration c;
      c.index = static_cast<int64_t>(out.size());
      c.group = static_cast<int>(g);
      c.plan = p;
      c.invalid = invalid;
      out.push_back(std::move(c));
    });
  }
  return out;
}

Experiment ConfigurationExperiment(const SweepSpec& spec, const Configuration& c) {
  Experiment e = spec.groups[c.group].experiment;
  e.plan = c.plan;
  PlaceRanksOnTorus(e.plan, &e.cluster);  // the candidate's axes, not the base's (a TPU slice)
  return e;
}

namespace {

// The model keys beyond the dense GPT shape (MoE, head sizes, MLA, sliding window, MTP, the
// hybrid layer pattern and Mamba-2 sizes), as text; empty for a model that sets none of
// them, so that older sweeps keep their fingerprints.
std::string ModelVariantText(const ModelSpec& m) {
  std::string t;
  const auto add = [&t](const char* key, int64_t v, int64_t unset) {
    if (v != unset) t += std::string(key) + "=" + std::to_string(v) + ";";
  };
  if (m.IsMoe()) {
    add("top_k", m.top_k, -1);
    add("moe_ffn_hidden", m.moe_ffn_hidden, -1);
    add("shared_experts", m.shared_experts, -1);
    add("moe_every", m.moe_every, -1);
    add("dense_layers", m.dense_layers, -1);
  }
  add("head_dim", m.head_dim, 0);
  add("v_head_dim", m.v_head_dim, 0);
  add("q_lora_rank", m.q_lora_rank, 0);
  add("kv_lora_rank", m.kv_lora_rank, 0);
  add("qk_rope_head_dim", m.qk_rope_head_dim, 0);
  add("sliding_window", m.sliding_window, 0);
  add("sliding_window_pattern", m.sliding_window_pattern, 1);
  add("mtp_layers", m.mtp_layers, 0);
  add("mtp_repeated_layer", m.mtp_repeated_layer ? 1 : 0, 0);
  add("moe_latent_size", m.moe_latent_size, 0);
  add("parallel_block", m.parallel_block ? 1 : 0, 0);
  add("expert_bias", m.expert_bias ? 1 : 0, 0);
  add("qk_norm", m.qk_norm ? 1 : 0, 0);
  if (m.glu_clamp > 0) t += "glu_clamp=" + std::to_string(m.glu_clamp) + ";";
  if (m.rope_mscale != 1.0) t += "rope_mscale=" + std::to_string(m.rope_mscale) + ";";
  if (m.IsHybrid()) {
    t += "layer_pattern=" + m.layer_pattern + ";";
    add("mamba_heads", m.mamba_heads, -1);
    add("mamba_head_dim", m.mamba_head_dim, -1);
    add("mamba_state", m.mamba_state, -1);
    add("mamba_groups", m.mamba_groups, -1);
    add("mamba_conv_kernel", m.mamba_conv_kernel, -1);
    add("mamba_chunk", m.mamba_chunk, -1);
  }
  return t.empty() ? t : "model|" + t;
}

// Appends "key=value;" to a fingerprint text when value is not the default.
struct VariantText {
  std::string text;
  void Add(const char* key, double v, double unset) {
    if (v != unset) text += fmt::format("{}={:.9g};", key, v);
  }
};

void AddEfficiencyText(const EfficiencySpec& e, VariantText* t) {
  const EfficiencySpec e0;
  t->Add("matmul_fp8", e.matmul_fp8, e0.matmul_fp8);
  t->Add("memory", e.memory, e0.memory);
  t->Add("nic", e.nic, e0.nic);
  t->Add("kernel_overhead_us", e.kernel_overhead_us, e0.kernel_overhead_us);
  t->Add("grouped_gemm", e.grouped_gemm, e0.grouped_gemm);
  t->Add("gmm", e.gmm, e0.gmm);
  t->Add("fused_grouped_gemm", e.fused_grouped_gemm, e0.fused_grouped_gemm);
  t->Add("kernel_model", static_cast<int>(e.kernel_model), static_cast<int>(e0.kernel_model));
  for (const GemmMeasurement& g : e.gemm_table) {
    t->text += fmt::format("gemm={:.9g},{:.9g},{:.9g},{:.9g},{},{:.9g};", g.m, g.n, g.k, g.batch,
                           static_cast<int>(g.dtype), g.tflops);
  }
  const CommInterference& ci = e.comm_interference;
  const CommInterference& ci0 = e0.comm_interference;
  t->Add("interference.all_reduce", ci.all_reduce, ci0.all_reduce);
  t->Add("interference.all_gather", ci.all_gather, ci0.all_gather);
  t->Add("interference.reduce_scatter", ci.reduce_scatter, ci0.reduce_scatter);
  t->Add("interference.all_to_all", ci.all_to_all, ci0.all_to_all);
  t->Add("interference.p2p", ci.p2p, ci0.p2p);
}

void AddGpuText(const GpuSpec& g, VariantText* t) {
  const GpuSpec g0;
  t->Add("gpu.architecture", static_cast<int>(g.architecture), static_cast<int>(g0.architecture));
  t->Add("gpu.peak_tflops_fp16", g.peak_tflops_fp16, g0.peak_tflops_fp16);
  t->Add("gpu.sms", g.sms, g0.sms);
  t->Add("gpu.gemm_tile_m", g.gemm_tile_m, g0.gemm_tile_m);
  t->Add("gpu.gemm_tile_n", g.gemm_tile_n, g0.gemm_tile_n);
  t->Add("gpu.gemm_k_half", g.gemm_k_half, g0.gemm_k_half);
  const FlashAttentionSpec& fa = g.flash_attention;
  const FlashAttentionSpec& fa0 = g0.flash_attention;
  if (fa.seq_lens != fa0.seq_lens || fa.efficiency != fa0.efficiency) {
    for (size_t i = 0; i < fa.seq_lens.size() && i < fa.efficiency.size(); ++i) {
      t->text += fmt::format("flash={:.9g},{:.9g};", fa.seq_lens[i], fa.efficiency[i]);
    }
  }
  for (const auto& [name, curve, curve0] :
       {std::tuple{"flash.causal", &fa.causal, &fa0.causal},
        std::tuple{"flash.causal_backward", &fa.causal_backward, &fa0.causal_backward}}) {
    if (*curve == *curve0) continue;
    t->text += fmt::format("{}=", name);
    for (double v : *curve) t->text += fmt::format("{:.9g},", v);
    t->text += ";";
  }
  t->Add("flash.backward_factor", fa.backward_factor, fa0.backward_factor);
  t->Add("flash.causal_factor", fa.causal_factor, fa0.causal_factor);
  t->Add("flash.window.keys", fa.window.keys, fa0.window.keys);
  t->Add("flash.window.forward", fa.window.forward, fa0.window.forward);
  t->Add("flash.window.backward", fa.window.backward, fa0.window.backward);
  t->Add("flash.window.fp8_backward_full_causal", fa.window.fp8_backward_full_causal,
         fa0.window.fp8_backward_full_causal);
  const FusedGroupedMlpSpec& fm = g.fused_grouped_mlp;
  const FusedGroupedMlpSpec& fm0 = g0.fused_grouped_mlp;
  t->Add("fused_mlp.experts", fm.experts, fm0.experts);
  t->Add("fused_mlp.tokens_per_expert", fm.tokens_per_expert, fm0.tokens_per_expert);
  t->Add("fused_mlp.hidden", fm.hidden, fm0.hidden);
  t->Add("fused_mlp.ffn", fm.ffn, fm0.ffn);
  constexpr const char* kKernels[] = {"fused_mlp.fc1_forward", "fused_mlp.fc2_forward",
                                      "fused_mlp.fc2_dgrad",   "fused_mlp.fc1_dgrad",
                                      "fused_mlp.fc1_wgrad",   "fused_mlp.fc2_wgrad"};
  static_assert(std::size(kKernels) == FusedGroupedMlpSpec::kKernels);
  for (size_t i = 0; i < fm.efficiency.size(); ++i) {
    t->Add(kKernels[i], fm.efficiency[i], fm0.efficiency[i]);
  }
}

void AddLinksText(const ClusterSpec& k, VariantText* t) {
  const ClusterSpec k0;
  const IntraNodeSpec& i = k.intra_node;
  t->Add("intra.kind", static_cast<int>(i.kind), static_cast<int>(k0.intra_node.kind));
  t->Add("intra.latency_us", i.latency_us, k0.intra_node.latency_us);
  t->Add("intra.gbps_per_link", i.gbps_per_link, k0.intra_node.gbps_per_link);
  for (size_t d = 0; d < i.torus.dims.size(); ++d) {
    const bool wrap = d < i.torus.wraparound.size() && i.torus.wraparound[d];
    t->text += fmt::format("torus={},{};", i.torus.dims[d], wrap ? 1 : 0);
  }
  const InterNodeSpec& in = k.inter_node;
  const InterNodeSpec& in0 = k0.inter_node;
  t->Add("inter.kind", static_cast<int>(in.kind), static_cast<int>(in0.kind));
  t->Add("inter.nics_per_node", in.nics_per_node, in0.nics_per_node);
  t->Add("inter.gbps_per_nic", in.gbps_per_nic, in0.gbps_per_nic);
  t->Add("inter.latency_us", in.latency_us, in0.latency_us);
  t->Add("inter.oversubscription", in.oversubscription, in0.oversubscription);
  t->Add("inter.switch_ports", in.switch_ports, in0.switch_ports);
  for (const LinkChange& l : k.what_if.links) {
    t->text += fmt::format("link={},{:.9g},{};", l.link, l.bandwidth_factor, l.failed ? 1 : 0);
  }
  for (const Straggler& s : k.what_if.stragglers) {
    t->text += fmt::format("straggler={},{:.9g};", s.gpu, s.slowdown);
  }
}

// The cluster's keys that the fixed part of the fingerprint leaves out (efficiencies beyond
// matmul and network, the GPU's kernel-model sizes, the links' kinds and latencies, what-if
// changes, a measured GEMM table), as text; empty when all are at their defaults, so that
// older sweeps keep their fingerprints.
std::string ClusterVariantText(const ClusterSpec& k) {
  VariantText t;
  AddEfficiencyText(k.efficiency, &t);
  AddGpuText(k.gpu, &t);
  AddLinksText(k, &t);
  return t.text.empty() ? t.text : "cluster|" + t.text;
}

// A JAX-style plan's mesh sizes, rules and XLA knobs, as text.
std::string JaxText(const JaxPlan& jax) {
  std::string t = "jax|" + MeshSizesText(jax) + "|";
  for (int d = 0; d < kLogicalDimCount; ++d) {
    t += std::string(LogicalDimNames()[d]) + "=";
    for (const int a : jax.rules[d]) t += jax.axes[a].name + ",";
    t += ";";
  }
  return t + (jax.xla.async_collectives ? "async" : "sync") +
         (jax.xla.collective_matmul ? "|collective_matmul" : "");
}

}  // namespace

std::string Fingerprint(const SweepSpec& spec, const std::vector<Configuration>& configs) {
  uint64_t h = 1469598103934665603ull;
  h = Fnv(h, spec.name);
  for (const SweepAxis& a : spec.axes) {
    h = Fnv(h, a.key + (a.is_auto ? "=auto" : ""));
    for (const std::string& v : a.values) h = Fnv(h, v);
  }
  // What each group simulates besides its plan (a changed base file changes the space).
  for (const SweepGroup& g : spec.groups) {
    const Experiment& e = g.experiment;
    const ModelSpec& m = e.model;
    const ClusterSpec& k = e.cluster;
    char buf[512];
    std::snprintf(
        buf, sizeof buf,
        "%d,%lld,%d,%d,%lld,%d,%lld,%lld,%d,%d|%d,%d,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%d|%d,%d,%d",
        m.layers, static_cast<long long>(m.hidden), m.heads, m.kv_heads,
        static_cast<long long>(m.ffn_hidden), static_cast<int>(m.ffn_kind),
        static_cast<long long>(m.vocab), static_cast<long long>(m.seq_len),
        static_cast<int>(m.tied_embeddings), m.experts, k.nodes, k.gpus_per_node, k.gpu.memory_gib,
        k.gpu.peak_tflops_bf16, k.gpu.hbm_gbps, k.efficiency.matmul, k.efficiency.network,
        k.intra_node.gbps_per_gpu, static_cast<int>(k.network_model),
        static_cast<int>(e.training.dtype), static_cast<int>(e.training.optimizer),
        static_cast<int>(e.training.grad_accum_dtype));
    h = Fnv(h, e.name + "|" + m.name + "|" + k.name + "|" + k.gpu.kind + "|" + buf);
    // Hashed only when not the default, so that older sweeps keep their fingerprints.
    if (e.training.dtype == Dtype::kFp8) {
      h = Fnv(h, "fp8|" + std::string(Fp8RecipeName(e.training.fp8_recipe)) + "|" +
                     std::to_string(k.gpu.peak_tflops_fp8));
    }
    if (e.training.dtype == Dtype::kFp8 && e.training.fp8_attention) h = Fnv(h, "fp8|attention");
    if (e.training.dtype == Dtype::kFp8 && e.training.cudnn_norm) h = Fnv(h, "fp8|cudnn_norm");
    if (!e.training.master_weights) h = Fnv(h, "master|0");
    if (!e.training.cross_entropy_fusion) h = Fnv(h, "ce|unfused");
    if (!e.training.squared_relu_fusion) h = Fnv(h, "srelu|unfused");
    if (e.training.cross_entropy_impl == CrossEntropyImpl::kTe) h = Fnv(h, "ce|te");
    if (e.training.cross_entropy_impl == CrossEntropyImpl::kTorch) h = Fnv(h, "ce|torch");
    if (e.training.cross_entropy_impl == CrossEntropyImpl::kTorchFp32) h = Fnv(h, "ce|torch32");
    if (e.training.moments_dtype == MomentsDtype::kBf16) h = Fnv(h, "moments|bf16");
    if (k.nvlink_domain_nodes != 1) h = Fnv(h, "nvl|" + std::to_string(k.nvlink_domain_nodes));
    if (k.mirror_traffic != MirrorTraffic::kNear) h = Fnv(h, "mirrors|full");
    if (k.intra_node.nvls != NvlsMode::kAuto) {
      h = Fnv(h, "nvls|" + std::to_string(static_cast<int>(k.intra_node.nvls)));
    }
    if (const std::string variant = ModelVariantText(m); !variant.empty()) h = Fnv(h, variant);
    if (const std::string variant = ClusterVariantText(k); !variant.empty()) h = Fnv(h, variant);
  }
  for (const Configuration& c : configs) {
    const PlanSpec& p = c.plan;
    char buf[160];
    std::snprintf(buf, sizeof buf, "%d|%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d", c.group, p.tp, p.pp,
                  p.dp, p.cp, p.ep, p.zero, static_cast<int>(p.sequence_parallel),
                  static_cast<int>(p.recompute), static_cast<int>(p.schedule), p.virtual_stages,
                  p.micro_batch, p.global_batch);
    h = Fnv(h, buf);
    if (!p.stage_layers.empty()) h = Fnv(h, "stage_layers=" + StageLayersText(p.stage_layers));
    if (p.framework != Framework::kMegatron) {
      h = Fnv(h, "framework=" + std::string(NameOf(FrameworkNames(), p.framework)));
    }
    if (p.tp_comm_overlap) h = Fnv(h, "tp_comm_overlap");
    if (!p.jax.Empty()) h = Fnv(h, JaxText(p.jax));
  }
  char out[17];
  std::snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(h));
  return out;
}

}  // namespace meshsim

#include "sim/plan/sharding.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>

namespace meshsim {
namespace {

using D = LogicalDim;

std::string DimName(LogicalDim d) { return LogicalDimNames()[static_cast<int>(d)]; }
std::string RuleKey(LogicalDim d) { return "plan.rules." + DimName(d); }

std::string ArrayText(const LogicalArray& a) {
  std::string s = a.name + " (";
  for (size_t i = 0; i < a.dims.size(); ++i) s += (i ? ", " : "") + DimName(a.dims[i]);
  return s + ")";
}

bool Contains(const std::vector<int>& v, int x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

bool SameSet(std::vector<int> a, std::vector<int> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return a == b;
}

std::string Names(const JaxPlan& jax, const std::vector<int>& axes) {
  if (axes.empty()) return "[]";
  std::string s = "[";
  for (size_t i = 0; i < axes.size(); ++i) s += (i ? ", " : "") + jax.axes[axes[i]].name;
  return s + "]";
}

// Axis sizes multiply to the cluster's GPUs; ICI sizes to a node, DCN sizes to the nodes.
Status CheckSizes(const JaxPlan& jax, const ClusterSpec& cluster) {
  int64_t total = 1, ici = 1, dcn = 1;
  std::string product;
  for (const MeshAxisSpec& a : jax.axes) {
    total = std::min<int64_t>(total * a.ici * a.dcn, int64_t{1} << 40);
    ici = std::min<int64_t>(ici * a.ici, int64_t{1} << 40);
    dcn = std::min<int64_t>(dcn * a.dcn, int64_t{1} << 40);
    product += (product.empty() ? "" : " x ") + a.name + " " + std::to_string(a.Size());
  }
  const std::string n = std::to_string(cluster.nodes), g = std::to_string(cluster.gpus_per_node);
  if (total != cluster.TotalGpus()) {
    return BadKey("plan.mesh",
                  "expected mesh axis sizes (ici x dcn) that multiply to the cluster's " +
                      std::to_string(cluster.TotalGpus()) + " GPUs (nodes " + n +
                      " x gpus_per_node " + g + "), found " + product + " = " +
                      std::to_string(total));
  }
  if (ici != cluster.gpus_per_node) {
    return BadKey("plan.mesh.ici", "expected ICI sizes that multiply to gpus_per_node = " + g +
                                       " (one slice is one node), found " + std::to_string(ici));
  }
  (void)dcn;  // total and ici match, so dcn multiplies to the nodes
  return Ok{};
}

// The PlanSpec axis of each mesh axis (kEp for one that shards nothing: no rank axis).
struct Roles {
  std::vector<Axis> of;
};

// Axes T (heads), D (batch), C (sequence without T), P (layers) and the SP flag.
struct Groups {
  std::vector<int> t, d, c, p;
  bool sp = false;
};

Status CheckTensorRules(const JaxPlan& jax, Groups* g) {
  g->t = jax.Rule(D::kHeads);
  if (!SameSet(jax.Rule(D::kMlp), g->t)) {
    return BadKey(RuleKey(D::kMlp), "expected the axes of heads " + Names(jax, g->t) +
                                        " (Megatron tensor parallelism splits attention and MLP "
                                        "over one group), found " +
                                        Names(jax, jax.Rule(D::kMlp)) +
                                        "; no PlanSpec equivalent yet");
  }
  if (!SameSet(jax.Rule(D::kVocab), g->t)) {
    return BadKey(RuleKey(D::kVocab), "expected the axes of heads " + Names(jax, g->t) +
                                          " (Megatron's vocabulary-parallel embedding), found " +
                                          Names(jax, jax.Rule(D::kVocab)) +
                                          "; no PlanSpec equivalent yet");
  }
  if (!jax.Rule(D::kKv).empty()) {
    return BadKey(RuleKey(D::kKv), "expected [] (a head's dimension is not split), found " +
                                       Names(jax, jax.Rule(D::kKv)) +
                                       "; no PlanSpec equivalent yet");
  }
  for (const int a : jax.Rule(D::kEmbed)) {
    if (Contains(g->t, a)) {
      return BadKey(RuleKey(D::kEmbed), "mesh axis '" + jax.axes[a].name +
                                            "' shards heads and embed (2D tensor parallelism); "
                                            "no PlanSpec equivalent yet");
    }
  }
  return Ok{};
}

Status CheckDataRules(const JaxPlan& jax, Groups* g) {
  g->d = jax.Rule(D::kBatch);
  const std::vector<int>& seq = jax.Rule(D::kSequence);
  size_t on_t = 0;
  for (const int a : seq) {
    if (Contains(g->t, a)) {
      ++on_t;
    } else {
      g->c.push_back(a);
    }
  }
  if (on_t != 0 && on_t != g->t.size()) {
    return BadKey(RuleKey(D::kSequence), "expected all or none of the heads axes " +
                                             Names(jax, g->t) + " (sequence parallelism), found " +
                                             Names(jax, seq) + "; no PlanSpec equivalent yet");
  }
  g->sp = on_t != 0;
  g->p = jax.Rule(D::kLayers);
  for (const int a : g->p) {
    if (Contains(g->d, a) || Contains(g->c, a) || Contains(g->t, a)) {
      return BadKey(RuleKey(D::kLayers), "mesh axis '" + jax.axes[a].name +
                                             "' shards layers and activations; a pipeline axis "
                                             "must shard layers only");
    }
  }
  std::vector<int> dc = g->d;
  dc.insert(dc.end(), g->c.begin(), g->c.end());
  const std::vector<int>& embed = jax.Rule(D::kEmbed);
  if (!embed.empty() && !SameSet(embed, dc)) {
    return BadKey(RuleKey(D::kEmbed),
                  "expected [] (replicated weights) or the batch and context axes " +
                      Names(jax, dc) + " (FSDP, ZeRO-3), found " + Names(jax, embed) +
                      "; no PlanSpec equivalent yet");
  }
  for (const int a : jax.Rule(D::kExperts)) {
    if (!Contains(dc, a)) {
      return BadKey(RuleKey(D::kExperts),
                    "expected axes of batch or sequence " + Names(jax, dc) +
                        " (experts are spread over the data-parallel ranks, as "
                        "in Megatron-Core), found '" +
                        jax.axes[a].name + "'");
    }
  }
  return Ok{};
}

// Each mesh axis's PlanSpec axis; an axis of size > 1 that shards nothing is refused.
Status AssignRoles(const JaxPlan& jax, const Groups& g, Roles* roles) {
  roles->of.assign(jax.axes.size(), Axis::kEp);
  for (size_t a = 0; a < jax.axes.size(); ++a) {
    const int i = static_cast<int>(a);
    Axis role = Axis::kEp;
    if (Contains(g.t, i)) role = Axis::kTp;
    if (Contains(g.d, i)) role = Axis::kDp;
    if (Contains(g.c, i)) role = Axis::kCp;
    if (Contains(g.p, i)) role = Axis::kPp;
    if (role == Axis::kEp && jax.axes[a].Size() > 1) {
      return BadKey("plan.mesh",
                    "mesh axis '" + jax.axes[a].name + "' (size " +
                        std::to_string(jax.axes[a].Size()) +
                        ") shards no dimension: every array would be replicated on it; "
                        "name it in a rule or give it size 1");
    }
    roles->of[a] = role;
  }
  return Ok{};
}

// mesh_order: the PlanSpec axes in the order the mesh lays them over the devices,
// innermost first (ICI factors of the last mesh axis first, then the DCN factors).
Status DeriveOrder(const JaxPlan& jax, const Roles& roles, PlanSpec* plan) {
  std::vector<Axis> runs;
  auto visit = [&](int a, int size) -> Status {
    if (size == 1) return Ok{};
    const Axis r = roles.of[a];
    if (!runs.empty() && runs.back() == r) return Ok{};
    if (std::find(runs.begin(), runs.end(), r) != runs.end()) {
      return BadKey("plan.mesh", "mesh axis '" + jax.axes[a].name +
                                     "' puts its ranks apart from the other ranks of its group "
                                     "(a group must be one block of the device order); "
                                     "reorder plan.mesh.axes");
    }
    runs.push_back(r);
    return Ok{};
  };
  const int n = static_cast<int>(jax.axes.size());
  for (int a = n - 1; a >= 0; --a) {
    if (Status s = visit(a, jax.axes[a].ici); !s.ok()) return s;
  }
  for (int a = n - 1; a >= 0; --a) {
    if (Status s = visit(a, jax.axes[a].dcn); !s.ok()) return s;
  }
  for (const Axis a : {Axis::kTp, Axis::kCp, Axis::kEp, Axis::kDp, Axis::kPp}) {
    if (std::find(runs.begin(), runs.end(), a) == runs.end()) runs.push_back(a);
  }
  std::copy(runs.begin(), runs.end(), plan->mesh_order.begin());
  return Ok{};
}

int Degree(const JaxPlan& jax, const std::vector<int>& axes) {
  return static_cast<int>(jax.SizeOf(axes));
}

}  // namespace

const std::vector<LogicalArray>& LogicalArrays() {
  static const std::vector<LogicalArray> arrays = {
      {"attention weight", {D::kLayers, D::kEmbed, D::kHeads, D::kKv}},
      {"MLP weight", {D::kLayers, D::kEmbed, D::kMlp}},
      {"expert weight", {D::kLayers, D::kExperts, D::kEmbed, D::kMlp}},
      {"embedding", {D::kVocab, D::kEmbed}},
      {"residual stream", {D::kBatch, D::kSequence}},
      {"attention activations", {D::kBatch, D::kHeads, D::kKv}},
      {"MLP activations", {D::kBatch, D::kMlp}},
      {"logits", {D::kBatch, D::kVocab}},
  };
  return arrays;
}

Status CheckRules(const JaxPlan& jax) {
  for (const LogicalArray& array : LogicalArrays()) {
    std::vector<std::pair<int, LogicalDim>> used;  // mesh axis, the dimension it shards
    for (const LogicalDim d : array.dims) {
      for (const int a : jax.Rule(d)) {
        for (const auto& [axis, dim] : used) {
          if (axis != a) continue;
          return BadKey(RuleKey(d), "mesh axis '" + jax.axes[a].name + "' already shards " +
                                        DimName(dim) + " of the " + ArrayText(array) +
                                        "; an axis may shard one dimension of an array");
        }
        used.emplace_back(a, d);
      }
    }
  }
  return Ok{};
}

Status DerivePlan(const JaxPlan& jax, const ClusterSpec& cluster, PlanSpec* plan) {
  if (Status s = CheckSizes(jax, cluster); !s.ok()) return s;
  if (Status s = CheckRules(jax); !s.ok()) return s;
  Groups g;
  if (Status s = CheckTensorRules(jax, &g); !s.ok()) return s;
  if (Status s = CheckDataRules(jax, &g); !s.ok()) return s;
  Roles roles;
  if (Status s = AssignRoles(jax, g, &roles); !s.ok()) return s;
  if (Status s = DeriveOrder(jax, roles, plan); !s.ok()) return s;
  plan->tp = Degree(jax, g.t);
  plan->dp = Degree(jax, g.d);
  plan->cp = Degree(jax, g.c);
  plan->pp = Degree(jax, g.p);
  plan->ep = Degree(jax, jax.Rule(D::kExperts));
  plan->zero = jax.Rule(D::kEmbed).empty() ? 0 : 3;
  plan->sequence_parallel = g.sp;
  plan->async_collectives = jax.xla.async_collectives;
  plan->tp_comm_overlap = jax.xla.collective_matmul;
  return Ok{};
}

std::vector<std::string> AxisNames(const JaxPlan& jax) {
  Groups g;
  CheckTensorRules(jax, &g);
  CheckDataRules(jax, &g);
  std::vector<std::string> names(kAxisCount);
  auto add = [&](Axis axis, const std::vector<int>& axes) {
    for (const int a : axes) {
      std::string& s = names[static_cast<int>(axis)];
      s += (s.empty() ? "" : ",") + jax.axes[a].name;
    }
  };
  add(Axis::kTp, g.t);
  add(Axis::kCp, g.c);
  add(Axis::kEp, jax.Rule(D::kExperts));
  add(Axis::kDp, g.d);
  add(Axis::kPp, g.p);
  return names;
}

namespace {

int64_t Ceil(int64_t a, int64_t b) { return (a + b - 1) / b; }

DeviceShape Shape(std::string array, std::vector<std::string> dims, std::vector<int64_t> global,
                  const std::vector<int64_t>& split) {
  DeviceShape s{std::move(array), std::move(dims), std::move(global), {}};
  for (size_t i = 0; i < s.global.size(); ++i) s.local.push_back(Ceil(s.global[i], split[i]));
  return s;
}

}  // namespace

std::vector<DeviceShape> PerDeviceShapes(const ModelSpec& m, const PlanSpec& p) {
  const int64_t fsdp = p.zero == 3 ? int64_t{p.dp} * p.cp : 1;
  const int64_t seq = int64_t{p.cp} * (p.sequence_parallel ? p.tp : 1);
  const int64_t batch = int64_t{p.micro_batch} * p.dp;
  std::vector<DeviceShape> out;
  out.push_back(Shape("attention weight", {"layers", "embed", "heads", "kv"},
                      {m.layers, m.hidden, m.heads, m.HeadDim()}, {p.pp, fsdp, p.tp, 1}));
  out.push_back(Shape("MLP weight", {"layers", "embed", "mlp"}, {m.layers, m.hidden, m.ffn_hidden},
                      {p.pp, fsdp, p.tp}));
  if (m.experts > 0) {
    const int64_t expert_fsdp = p.zero == 3 ? std::max<int64_t>(1, fsdp / p.ep) : 1;
    out.push_back(Shape("expert weight", {"layers", "experts", "embed", "mlp"},
                        {m.layers, m.experts, m.hidden, m.ExpertFfnHidden()},
                        {p.pp, p.ep, expert_fsdp, p.tp}));
  }
  out.push_back(Shape("embedding", {"vocab", "embed"}, {m.vocab, m.hidden}, {p.tp, fsdp}));
  out.push_back(Shape("residual stream", {"batch", "sequence", "embed"},
                      {batch, m.seq_len, m.hidden}, {p.dp, seq, 1}));
  out.push_back(Shape("attention activations", {"batch", "sequence", "heads", "kv"},
                      {batch, m.seq_len, m.heads, m.HeadDim()}, {p.dp, p.cp, p.tp, 1}));
  out.push_back(Shape("MLP activations", {"batch", "sequence", "mlp"},
                      {batch, m.seq_len, m.ffn_hidden}, {p.dp, p.cp, p.tp}));
  out.push_back(Shape("logits", {"batch", "sequence", "vocab"}, {batch, m.seq_len, m.vocab},
                      {p.dp, p.cp, p.tp}));
  return out;
}

}  // namespace meshsim

#include "sim/config/maxtext_mesh.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>

namespace meshsim::config {
namespace {

using D = LogicalDim;

constexpr int64_t kMaxSize = 1 << 20;  // decode_jax.cc's bound on one axis

// base.yml @76bd53b0.
const std::vector<std::string> kDefaultMeshAxes = {"data", "fsdp", "sequence", "tensor"};

std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

std::vector<std::string> MeshAxes(const MaxTextConfig& c) {
  std::vector<std::string> axes = c.StringList("mesh_axes", kDefaultMeshAxes);
  if (axes.empty() || axes.size() > 32) {
    c.Fail("mesh_axes", "expected a list of 1 to 32 axis names, found " +
                            std::to_string(axes.size()) + " names");
  }
  for (size_t i = 0; i < axes.size(); ++i) {
    bool ok = !axes[i].empty();
    for (const char ch : axes[i])
      ok = ok && (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_');
    for (size_t j = 0; j < i; ++j) ok = ok && axes[j] != axes[i];
    if (!ok) {
      c.Fail("mesh_axes",
             "expected distinct axis names of letters, digits and '_', found [" + Join(axes) + "]");
    }
  }
  return axes;
}

// ici_fsdp_parallelism, dcn_pipeline_parallelism (the `stage` axis), ...
std::string ParallelismKey(const std::string& kind, const std::string& axis) {
  return kind + "_" + (axis == "stage" ? std::string("pipeline") : axis) + "_parallelism";
}

// base.yml @76bd53b0: dcn_data -1 and ici_fsdp -1 (auto), every other axis 1.
int64_t DefaultParallelism(const std::string& kind, const std::string& axis) {
  return (kind == "dcn" && axis == "data") || (kind == "ici" && axis == "fsdp") ? -1 : 1;
}

int64_t ReadParallelism(const MaxTextConfig& c, const std::string& kind, const std::string& axis) {
  const std::string key = ParallelismKey(kind, axis);
  const int64_t v = c.Int(key, DefaultParallelism(kind, axis), -1, kMaxSize);
  if (v == 0) c.Fail(key, "expected -1 (auto) or a positive integer, found 0");
  return v;
}

// MaxText's fill_unspecified_mesh_axes for one kind ("ici" over the chips of a slice,
// "dcn" over the slices).
std::vector<int64_t> FillKind(const MaxTextConfig& c, const std::vector<std::string>& axes,
                              const std::string& kind, int64_t target, MaxTextMesh* out) {
  std::vector<int64_t> sizes;
  int auto_axis = -1;
  int64_t known = 1;
  for (size_t i = 0; i < axes.size(); ++i) {
    sizes.push_back(ReadParallelism(c, kind, axes[i]));
    if (sizes.back() == -1) {
      if (auto_axis >= 0) {
        c.Fail(ParallelismKey(kind, axes[i]),
               "expected at most one -1 among the " + kind + "_*_parallelism values, found " +
                   ParallelismKey(kind, axes[auto_axis]) + " -1 too");
      }
      auto_axis = static_cast<int>(i);
    } else {
      known = std::min<int64_t>(known * sizes.back(), int64_t{1} << 40);
    }
  }
  const std::string what = kind == "ici" ? "the chips of a slice" : "the slices";
  // The key to name: the -1, else the first value other than 1.
  size_t at = auto_axis >= 0 ? static_cast<size_t>(auto_axis) : 0;
  while (auto_axis < 0 && at + 1 < axes.size() && sizes[at] == 1) ++at;
  const std::string named = ParallelismKey(kind, axes[at]);
  if (auto_axis >= 0) {
    if (target % known != 0) {
      c.Fail(named, "expected the other " + kind + "_*_parallelism values to divide " + what +
                        " (" + std::to_string(target) + "), found their product " +
                        std::to_string(known));
    }
    sizes[auto_axis] = target / known;
    out->notes.push_back(named + " -1: " + std::to_string(sizes[auto_axis]) + " (" + what + ", " +
                         std::to_string(target) + ", over the other axes' " +
                         std::to_string(known) + ")");
  } else if (known != target) {
    c.Fail(named, "expected " + kind + "_*_parallelism values that multiply to " + what + " (" +
                      std::to_string(target) + "), found " + std::to_string(known));
  }
  return sizes;
}

struct RuleName {
  D dim;
  const char* maxtext;
};
constexpr RuleName kRuleNames[] = {
    {D::kBatch, "activation_batch"},
    {D::kSequence, "activation_length"},
    {D::kEmbed, "embed"},
    {D::kHeads, "heads"},
    {D::kKv, "kv"},
    {D::kMlp, "mlp"},
    {D::kVocab, "vocab"},
    {D::kExperts, "exp"},
    {D::kLayers, "layers"},
};

// base.yml @76bd53b0's logical_axis_rules, as YAML flow text.
constexpr const char* kDefaultRules =
    "[['activation_batch', ['data', 'fsdp']], ['activation_heads', ['tensor', 'sequence']], "
    "['activation_length', 'sequence'], ['activation_embed', 'tensor'], "
    "['activation_mlp', 'tensor'], ['activation_kv', 'tensor'], "
    "['activation_vocab', ['tensor', 'sequence']], ['mlp', 'tensor'], ['vocab', 'tensor'], "
    "['embed', ['fsdp', 'sequence']], ['heads', 'tensor']]";

// One rule's mesh axes (a name, a list of names, or nothing), as indices of jax.axes.
std::vector<int> RuleAxes(const MaxTextConfig& c, const YAML::Node& rule, const JaxPlan& jax,
                          const std::string& subkey) {
  const YAML::Node axes = rule[1];
  std::vector<YAML::Node> items;
  if (axes.IsScalar()) items.push_back(axes);
  if (axes.IsSequence()) {
    for (const auto& a : axes) items.push_back(a);
  }
  if (axes.IsMap())
    c.Fail("logical_axis_rules", "expected mesh axis names, found a mapping", &axes, subkey);
  std::vector<std::string> names;
  for (const MeshAxisSpec& a : jax.axes) names.push_back(a.name);
  std::vector<int> out;
  for (const YAML::Node& item : items) {
    const std::string s = item.IsScalar() ? item.Scalar() : std::string();
    const auto it = std::find(names.begin(), names.end(), s);
    if (it == names.end()) {
      c.Fail("logical_axis_rules",
             "expected an axis of mesh_axes (" + Join(names) + "), found " + Describe(item), &item,
             subkey);
    }
    const int a = static_cast<int>(it - names.begin());
    if (std::find(out.begin(), out.end(), a) != out.end()) {
      c.Fail("logical_axis_rules", "expected each mesh axis once, found '" + s + "' twice", &item,
             subkey);
    }
    out.push_back(a);
  }
  return out;
}

// The first rule of each MaxText name, as mesh-axis indices (all of them, any size).
std::map<std::string, std::vector<int>> ReadRules(const MaxTextConfig& c, const JaxPlan& jax,
                                                  MaxTextMesh* mesh) {
  YAML::Node rules = c.Node("logical_axis_rules");
  if (!c.Has("logical_axis_rules")) {
    rules = YAML::Load(kDefaultRules);
    mesh->notes.push_back("logical_axis_rules: not in the config, base.yml @76bd53b0's rules");
  }
  if (!rules.IsSequence()) {
    c.Fail("logical_axis_rules",
           "expected a list of [name, mesh axes] pairs, found " + Describe(rules));
  }
  std::map<std::string, std::vector<int>> out;
  for (size_t i = 0; i < rules.size(); ++i) {
    const YAML::Node rule = rules[i];
    const std::string subkey = "[" + std::to_string(i) + "]";
    if (!rule.IsSequence() || rule.size() != 2 || !rule[0].IsScalar()) {
      c.Fail("logical_axis_rules", "expected a pair [name, mesh axes], found " + Describe(rule),
             &rule, subkey);
    }
    const std::vector<int> axes = RuleAxes(c, rule, jax, subkey);
    out.emplace(rule[0].Scalar(), axes);  // the first rule of a name stays
  }
  return out;
}

std::vector<int> Sized(const JaxPlan& jax, const std::vector<int>& axes) {
  std::vector<int> out;
  for (const int a : axes) {
    if (jax.axes[a].Size() > 1) out.push_back(a);
  }
  return out;
}

bool Has(const std::vector<int>& v, int x) { return std::find(v.begin(), v.end(), x) != v.end(); }

std::string Names(const JaxPlan& jax, const std::vector<int>& axes) {
  std::vector<std::string> names;
  for (const int a : axes) names.push_back(jax.axes[a].name);
  return "[" + Join(names) + "]";
}

// activation_embed on the heads' axes: written as sequence parallelism.
void EmbedActivationsAsSequence(const std::map<std::string, std::vector<int>>& rules,
                                MaxTextMesh* out) {
  JaxPlan& jax = out->jax;
  const auto it = rules.find("activation_embed");
  const std::vector<int>& heads = jax.rules[static_cast<int>(D::kHeads)];
  std::vector<int>& seq = jax.rules[static_cast<int>(D::kSequence)];
  if (it == rules.end() || heads.empty()) return;
  const std::vector<int> embed = Sized(jax, it->second);
  bool same = embed.size() == heads.size();
  for (const int a : embed) same = same && Has(heads, a);
  if (!same) return;
  for (const int a : heads) {
    if (Has(seq, a)) return;
  }
  seq.insert(seq.end(), heads.begin(), heads.end());
  out->warnings.push_back(
      "activation_embed on " + Names(jax, heads) +
      " (the residual stream split along embed between blocks) is modelled as the sequence on " +
      Names(jax, heads) +
      " (sequence parallelism: the same reduce-scatter and all-gather bytes and activation "
      "memory)");
}

// embed on part of the batch (and context) axes: HSDP, written as FSDP over all of them.
void HsdpAsFsdp(MaxTextMesh* out) {
  JaxPlan& jax = out->jax;
  std::vector<int>& embed = jax.rules[static_cast<int>(D::kEmbed)];
  const std::vector<int>& heads = jax.rules[static_cast<int>(D::kHeads)];
  std::vector<int> dc = jax.rules[static_cast<int>(D::kBatch)];
  for (const int a : jax.rules[static_cast<int>(D::kSequence)]) {
    if (!Has(heads, a) && !Has(dc, a)) dc.push_back(a);
  }
  if (embed.empty() || embed.size() >= dc.size()) return;
  for (const int a : embed) {
    if (!Has(dc, a)) return;  // not HSDP: left for the plan's checks to name
  }
  std::vector<int> all;
  for (int a = 0; a < static_cast<int>(jax.axes.size()); ++a) {
    if (Has(dc, a)) all.push_back(a);
  }
  out->warnings.push_back(
      "embed on " + Names(jax, embed) + " but the batch on " + Names(jax, dc) +
      " (HSDP: parameters sharded inside a group, replicated across the others) is modelled as "
      "embed on " +
      Names(jax, all) +
      " (FSDP over all of them: the parameter all-gathers and gradient reduce-scatters span "
      "every batch axis, DCN included; meshsim has no hybrid sharding yet)");
  embed = all;
}

}  // namespace

int MaxTextSlicesOf(const MaxTextConfig& c) {
  int64_t slices = 1;
  for (const std::string& axis : MeshAxes(c)) {
    const int64_t v = ReadParallelism(c, "dcn", axis);
    if (v > 0) slices = std::min<int64_t>(slices * v, kMaxSize);
  }
  return static_cast<int>(slices);
}

MaxTextMesh DecodeMaxTextMesh(const MaxTextConfig& c, int chips_per_slice, int slices) {
  MaxTextMesh out;
  const std::vector<std::string> axes = MeshAxes(c);
  const std::vector<int64_t> ici = FillKind(c, axes, "ici", chips_per_slice, &out);
  const std::vector<int64_t> dcn = FillKind(c, axes, "dcn", slices, &out);
  for (size_t i = 0; i < axes.size(); ++i) {
    out.jax.axes.push_back({axes[i], static_cast<int>(ici[i]), static_cast<int>(dcn[i])});
  }
  const std::map<std::string, std::vector<int>> rules = ReadRules(c, out.jax, &out);
  for (const RuleName& r : kRuleNames) {
    const auto it = rules.find(r.maxtext);
    if (it != rules.end()) out.jax.rules[static_cast<int>(r.dim)] = Sized(out.jax, it->second);
  }
  EmbedActivationsAsSequence(rules, &out);
  HsdpAsFsdp(&out);
  return out;
}

}  // namespace meshsim::config

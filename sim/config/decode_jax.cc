#include "sim/config/decode_jax.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

namespace meshsim::config {
namespace {

// The most axes a mesh may name: far above MaxText's 12.
constexpr size_t kMaxMeshAxes = 32;

YAML::Node ListAt(YamlReader& r, const std::string& key, bool required) {
  r.Skip(key);
  const YAML::Node list = r.Child(key);
  if (!list && !required) return list;
  if (!list || !list.IsSequence() || list.size() == 0 || list.size() > kMaxMeshAxes) {
    Fail(r.sources(), list ? list : r.node(), r.KeyPath(key),
         "expected a list of 1 to " + std::to_string(kMaxMeshAxes) + " entries, found " +
             Describe(list));
  }
  return list;
}

std::vector<std::string> AxisNames(YamlReader& mesh) {
  const YAML::Node list = ListAt(mesh, "axes", true);
  std::vector<std::string> names;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string key = mesh.KeyPath("axes") + "[" + std::to_string(i) + "]";
    const std::string s = list[i].IsScalar() ? list[i].Scalar() : std::string();
    bool ok = !s.empty();
    for (const char c : s) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
    if (!ok)
      Fail(mesh.sources(), list[i], key, "expected an axis name, found " + Describe(list[i]));
    for (const std::string& n : names) {
      if (n == s)
        Fail(mesh.sources(), list[i], key, "expected a new axis name, found '" + s + "' again");
    }
    names.push_back(s);
  }
  return names;
}

// ici or dcn: one integer >= 1 per axis; all 1 when absent and not required.
std::vector<int> Sizes(YamlReader& mesh, const std::string& key, size_t axes, bool required) {
  std::vector<int> sizes(axes, 1);
  const YAML::Node list = ListAt(mesh, key, required);
  if (!list) return sizes;
  if (list.size() != axes) {
    Fail(mesh.sources(), list, mesh.KeyPath(key),
         "expected one size per axis (" + std::to_string(axes) + "), found " +
             std::to_string(list.size()));
  }
  for (size_t i = 0; i < axes; ++i) {
    const std::string s = list[i].IsScalar() ? list[i].Scalar() : std::string();
    errno = 0;
    char* end = nullptr;
    const long long v = std::strtoll(s.c_str(), &end, 10);
    if (s.empty() || errno != 0 || *end != '\0' || v < 1 || v > (1 << 20)) {
      Fail(mesh.sources(), list[i], mesh.KeyPath(key) + "[" + std::to_string(i) + "]",
           "expected an integer in 1..1048576, found " + Describe(list[i]));
    }
    sizes[i] = static_cast<int>(v);
  }
  return sizes;
}

// One rule: an axis name, a list of them, or [] / null (replicated).
std::vector<int> Rule(YamlReader& rules, const std::string& dim, const JaxPlan& jax) {
  rules.Skip(dim);
  const YAML::Node n = rules.Child(dim);
  std::vector<YAML::Node> items;
  if (n && n.IsScalar()) {
    items.push_back(n);
  } else if (n && n.IsSequence()) {
    for (const auto& item : n) items.push_back(item);
  } else if (n && !n.IsNull()) {
    Fail(rules.sources(), n, rules.KeyPath(dim),
         "expected a mesh axis or a list of them, found " + Describe(n));
  }
  std::string known;
  for (const MeshAxisSpec& a : jax.axes) known += (known.empty() ? "" : ", ") + a.name;
  std::vector<int> out;
  for (const YAML::Node& item : items) {
    const std::string s = item.IsScalar() ? item.Scalar() : Describe(item);
    int found = -1;
    for (size_t a = 0; a < jax.axes.size(); ++a) {
      if (jax.axes[a].name == s) found = static_cast<int>(a);
    }
    if (found < 0) {
      Fail(rules.sources(), item, rules.KeyPath(dim),
           "expected a mesh axis (one of " + known + "), found '" + s + "'");
    }
    for (const int a : out) {
      if (a == found) {
        Fail(rules.sources(), item, rules.KeyPath(dim),
             "expected each mesh axis once, found '" + s + "' twice");
      }
    }
    out.push_back(found);
  }
  return out;
}

// plan.xla: {async_collectives: BOOL, collective_matmul: BOOL}, both optional.
XlaOptions DecodeXla(YamlReader& plan) {
  XlaOptions xla;
  plan.Skip("xla");
  if (!plan.Has("xla")) return xla;
  YamlReader r = plan.Map("xla");
  r.GetBool("async_collectives", &xla.async_collectives);
  r.GetBool("collective_matmul", &xla.collective_matmul);
  r.Finish();
  return xla;
}

void RejectDegreeKeys(const YamlReader& plan) {
  for (const char* key : {"tp", "pp", "dp", "cp", "ep", "zero", "sequence_parallel", "mesh_order",
                          "tp_comm_overlap"}) {
    if (!plan.Has(key)) continue;
    Fail(plan.sources(), plan.Child(key), plan.KeyPath(key),
         std::string("expected no ") + key + " in a JAX-style plan (" +
             (std::string(key) == "tp_comm_overlap" ? "plan.xla.collective_matmul sets it"
                                                    : "plan.mesh and plan.rules determine it") +
             "), found " + Describe(plan.Child(key)));
  }
}

}  // namespace

bool IsJaxPlan(const YamlReader& plan) {
  return plan.Has("mesh") || plan.Has("rules") || plan.Has("xla");
}

JaxPlan DecodeJaxPlan(YamlReader& plan) {
  RejectDegreeKeys(plan);
  if (!plan.Has("mesh") || !plan.Has("rules")) {
    const std::string missing = plan.Has("mesh") ? "rules" : "mesh";
    Fail(plan.sources(), plan.node(), plan.KeyPath(missing),
         "a JAX-style plan needs both mesh and rules; " + missing + " is missing");
  }
  JaxPlan jax;
  YamlReader mesh = plan.Map("mesh");
  const std::vector<std::string> names = AxisNames(mesh);
  const std::vector<int> ici = Sizes(mesh, "ici", names.size(), true);
  const std::vector<int> dcn = Sizes(mesh, "dcn", names.size(), false);
  mesh.Finish();
  for (size_t i = 0; i < names.size(); ++i) jax.axes.push_back({names[i], ici[i], dcn[i]});
  YamlReader rules = plan.Map("rules");
  for (int d = 0; d < kLogicalDimCount; ++d) {
    jax.rules[d] = Rule(rules, LogicalDimNames()[d], jax);
  }
  rules.Finish();
  jax.xla = DecodeXla(plan);
  return jax;
}

}  // namespace meshsim::config

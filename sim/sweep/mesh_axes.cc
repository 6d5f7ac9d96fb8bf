#include "sim/sweep/mesh_axes.h"

#include "sim/sweep/enumerate.h"

namespace meshsim {
namespace {

constexpr const char* kIciPrefix = "plan.mesh.ici.";
constexpr const char* kDcnPrefix = "plan.mesh.dcn.";

bool StartsWith(const std::string& s, const std::string& prefix) {
  return s.size() > prefix.size() && s.compare(0, prefix.size(), prefix) == 0;
}

// Ordered factorizations of `total` over `keys` (the last takes the rest); calls `emit`
// with each. `jax` holds the choices so far.
template <typename Emit>
void Factor(JaxPlan& jax, const std::vector<MeshSizeKey>& keys, size_t i, int total,
            const Emit& emit) {
  if (keys.empty()) {
    emit();
    return;
  }
  if (i + 1 == keys.size()) {
    MeshSize(jax, keys[i]) = total;
    emit();
    return;
  }
  for (const int d : Divisors(total)) {
    MeshSize(jax, keys[i]) = d;
    Factor(jax, keys, i + 1, total / d, emit);
  }
}

// What is left of `whole` for the `keys` of one kind: whole / the other sizes of that
// kind; nullopt when that is not a whole number.
std::optional<int> Left(const JaxPlan& jax, const std::vector<MeshSizeKey>& keys, bool dcn,
                        int whole) {
  int64_t fixed = 1;
  for (size_t a = 0; a < jax.axes.size(); ++a) {
    bool varied = false;
    for (const MeshSizeKey& k : keys) varied |= k.axis == static_cast<int>(a);
    if (!varied) fixed *= dcn ? jax.axes[a].dcn : jax.axes[a].ici;
    if (fixed > whole) return std::nullopt;
  }
  if (whole % fixed != 0) return std::nullopt;
  return static_cast<int>(whole / fixed);
}

}  // namespace

bool IsMeshSizeKey(const std::string& key) {
  return StartsWith(key, kIciPrefix) || StartsWith(key, kDcnPrefix);
}

std::optional<MeshSizeKey> ParseMeshSizeKey(const std::string& key, const JaxPlan& jax) {
  if (!IsMeshSizeKey(key)) return std::nullopt;
  const bool dcn = StartsWith(key, kDcnPrefix);
  const int axis = jax.AxisIndex(key.substr(std::string(kIciPrefix).size()));
  if (axis < 0) return std::nullopt;
  return MeshSizeKey{axis, dcn};
}

int& MeshSize(JaxPlan& jax, const MeshSizeKey& k) {
  return k.dcn ? jax.axes[k.axis].dcn : jax.axes[k.axis].ici;
}

int MeshSize(const JaxPlan& jax, const MeshSizeKey& k) {
  return k.dcn ? jax.axes[k.axis].dcn : jax.axes[k.axis].ici;
}

std::vector<JaxPlan> ExpandMeshSizes(const JaxPlan& jax, const std::vector<MeshSizeKey>& auto_keys,
                                     const ClusterSpec& cluster) {
  std::vector<MeshSizeKey> ici, dcn;
  for (const MeshSizeKey& k : auto_keys) (k.dcn ? dcn : ici).push_back(k);
  const std::optional<int> ici_left = Left(jax, ici, false, cluster.gpus_per_node);
  const std::optional<int> dcn_left = Left(jax, dcn, true, cluster.nodes);
  if ((!ici.empty() && !ici_left) || (!dcn.empty() && !dcn_left)) return {jax};
  std::vector<JaxPlan> out;
  JaxPlan work = jax;
  Factor(work, ici, 0, ici_left.value_or(1),
         [&] { Factor(work, dcn, 0, dcn_left.value_or(1), [&] { out.push_back(work); }); });
  return out;
}

std::string MeshSizesText(const JaxPlan& jax) {
  std::string s;
  for (const MeshAxisSpec& a : jax.axes) {
    s +=
        (s.empty() ? "" : " ") + a.name + " " + std::to_string(a.ici) + "x" + std::to_string(a.dcn);
  }
  return s;
}

}  // namespace meshsim

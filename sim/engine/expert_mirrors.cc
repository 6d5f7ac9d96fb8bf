#include "sim/engine/expert_mirrors.h"

#include <algorithm>

namespace meshsim {
namespace {

std::vector<int> GroupOf(const Mesh& mesh, int rank, ExpertFamily family) {
  return family == ExpertFamily::kExpert ? mesh.ExpertGroup(rank) : mesh.ExpertDataGroup(rank);
}

// Calls visit(group) once for every group of `family` in stage `pp`, in order of their
// lowest rank.
template <typename Visit>
void ForEachGroup(const Mesh& mesh, int pp, ExpertFamily family, Visit visit) {
  std::vector<bool> covered(mesh.Size(), false);
  for (int r = 0; r < mesh.Size(); ++r) {
    if (covered[r] || mesh.CoordsOf(r).pp != pp) continue;
    const std::vector<int> group = GroupOf(mesh, r, family);
    for (int m : group) covered[m] = true;
    visit(group);
  }
}

// Per member, the index of the first member on the same domain: equal for two groups
// exactly when their members share domains alike.
std::vector<int> DomainPattern(const std::vector<int>& group, int domain_gpus) {
  std::vector<int> pattern(group.size());
  for (size_t i = 0; i < group.size(); ++i) {
    size_t j = 0;
    while (group[j] / domain_gpus != group[i] / domain_gpus) ++j;
    pattern[i] = static_cast<int>(j);
  }
  return pattern;
}

}  // namespace

ExpertFamily FamilyOf(const Mesh& mesh, const std::vector<int>& group) {
  if (mesh.ExpertDegree() == 1 || group.size() < 2) return ExpertFamily::kNone;
  if (group == mesh.ExpertGroup(group.front())) return ExpertFamily::kExpert;
  if (group == mesh.ExpertDataGroup(group.front())) return ExpertFamily::kExpertData;
  return ExpertFamily::kNone;
}

std::vector<std::vector<int>> ExpertMirrors(const Mesh& mesh, const std::vector<int>& group,
                                            ExpertFamily family,
                                            const std::vector<bool>& replayed) {
  std::vector<std::vector<int>> out;
  ForEachGroup(mesh, mesh.CoordsOf(group.front()).pp, family, [&](const std::vector<int>& g) {
    if (std::none_of(g.begin(), g.end(), [&](int m) { return replayed[m]; })) out.push_back(g);
  });
  return out;
}

bool ExpertGroupsAlike(const Mesh& mesh, int domain_gpus) {
  if (mesh.ExpertDegree() == 1) return true;
  bool alike = true;
  for (int pp = 0; pp < mesh.Degree(Axis::kPp); ++pp) {
    for (ExpertFamily family : {ExpertFamily::kExpert, ExpertFamily::kExpertData}) {
      std::vector<int> first;
      ForEachGroup(mesh, pp, family, [&](const std::vector<int>& g) {
        std::vector<int> pattern = DomainPattern(g, domain_gpus);
        if (first.empty())
          first = std::move(pattern);
        else
          alike = alike && pattern == first;
      });
    }
  }
  return alike;
}

}  // namespace meshsim

#include "sim/sweep/planner.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "sim/sweep/mesh_axes.h"
#include "sim/sweep/runner.h"

namespace meshsim {

int DefaultGlobalBatch(int gpus) { return gpus * ((64 + gpus - 1) / gpus); }

Result<std::vector<KeyValue>> PlannerKeys(const ClusterSpec& cluster, const PlannerOptions& o) {
  if (o.gpus < 1)
    return BadKey("--gpus", "expected an integer >= 1, found " + std::to_string(o.gpus));
  if (o.budget_gib < 0) return BadKey("--budget-gib", "expected a positive size in GiB");
  if (o.headroom_gib < 0) return BadKey("--headroom", "expected a size in GiB >= 0");
  if (o.global_batch < 0) return BadKey("--global-batch", "expected an integer >= 1");
  const double budget = o.budget_gib > 0 ? o.budget_gib : cluster.gpu.memory_gib;
  if (o.headroom_gib >= budget) {
    return BadKey("--headroom", fmt::format("a headroom of {:g} GiB leaves nothing of the {:g} GiB "
                                            "budget",
                                            o.headroom_gib, budget));
  }
  std::vector<KeyValue> keys;
  if (o.gpus <= cluster.gpus_per_node) {
    keys.push_back({"cluster.nodes", "1"});
    keys.push_back({"cluster.gpus_per_node", std::to_string(o.gpus)});
  } else if (o.gpus % cluster.gpus_per_node != 0) {
    return BadKey("--gpus", std::to_string(o.gpus) + " GPUs do not fill whole nodes of " +
                                std::to_string(cluster.gpus_per_node) + " GPUs (cluster " +
                                cluster.name + ")");
  } else if (const int domain = cluster.nvlink_domain_nodes * cluster.gpus_per_node;
             o.gpus > domain && o.gpus % domain != 0) {
    return BadKey("--gpus", std::to_string(o.gpus) + " GPUs do not fill whole NVLink domains of " +
                                std::to_string(domain) + " GPUs (cluster " + cluster.name +
                                "): use at most " + std::to_string(domain) + " or a multiple");
  } else {
    keys.push_back({"cluster.nodes", std::to_string(o.gpus / cluster.gpus_per_node)});
  }
  if (o.budget_gib > 0 || o.headroom_gib > 0) {
    keys.push_back({"cluster.gpu.memory_gib", fmt::format("{}", budget - o.headroom_gib)});
  }
  const int global_batch = o.global_batch > 0 ? o.global_batch : DefaultGlobalBatch(o.gpus);
  if (o.jax) {
    // Sizes to be varied; the rules as the class comment says.
    keys.push_back({"plan.mesh", "{axes: [stage, data, tensor], ici: [1, 1, 1], dcn: [1, 1, 1]}"});
    keys.push_back({"plan.rules",
                    "{batch: data, sequence: tensor, heads: tensor, mlp: tensor, "
                    "vocab: tensor, layers: stage}"});
  } else {
    keys.push_back({"plan.tp", "1"});
    keys.push_back({"plan.pp", "1"});
    keys.push_back({"plan.dp", std::to_string(o.gpus)});
    keys.push_back({"plan.sequence_parallel", "true"});
  }
  keys.push_back({"plan.micro_batch", std::to_string(o.micro_batch)});
  keys.push_back({"plan.global_batch", std::to_string(global_batch)});
  keys.push_back({"plan.recompute", "selective"});
  keys.push_back({"plan.schedule", "1f1b"});
  return keys;
}

const std::vector<std::string>& PlannerAxisKeys() {
  static const std::vector<std::string> keys = {"plan.tp",   "plan.pp",   "plan.dp",   "plan.ep",
                                                "plan.zero", "plan.mesh", "plan.rules"};
  return keys;
}

Status CheckPlannerSets(const std::vector<std::string>& sets, const std::string& fix_with) {
  for (const std::string& set : sets) {
    for (const std::string& key : PlannerAxisKeys()) {
      if (set.rfind(key + "=", 0) != 0 && set.rfind(key + ".", 0) != 0) continue;
      InputError e = BadKey(key,
                            "the planner varies tp, pp, dp, zero and, for a MoE model, ep "
                            "(JAX-style: plan.mesh and plan.rules) itself; fix them with " +
                                fix_with);
      e.file = "--set " + set;
      return e;
    }
  }
  return Ok{};
}

namespace {

// The JAX-style space: every ICI and DCN size of stage, data and tensor, with the embed
// rule [] and [data] as two groups.
void JaxPlannerSpec(const Experiment& e, SweepSpec* spec) {
  for (const char* kind : {"ici", "dcn"}) {
    for (const char* axis : {"stage", "data", "tensor"}) {
      SweepAxis a;
      a.key = std::string("plan.mesh.") + kind + "." + axis;
      a.is_auto = true;
      spec->axes.push_back(a);
    }
  }
  SweepAxis embed;
  embed.key = "plan.rules.embed";
  embed.values = {"[]", "data"};
  spec->axes.push_back(embed);
  std::vector<int> choice(spec->axes.size(), -1);
  for (int v = 0; v < 2; ++v) {
    Experiment g = e;
    g.plan.jax.rules[static_cast<int>(LogicalDim::kEmbed)] =
        v == 0 ? std::vector<int>{} : std::vector<int>{g.plan.jax.AxisIndex("data")};
    choice.back() = v;
    spec->groups.push_back({choice, std::move(g)});
  }
}

}  // namespace

PlannerSpace MakePlannerSpace(const Experiment& base, int gpus) {
  Experiment e = base;
  e.name = e.model.name + "-" + std::to_string(gpus) + "gpus";
  PlannerSpace space;
  space.spec.name = e.name;
  if (!e.plan.jax.Empty()) {
    JaxPlannerSpec(e, &space.spec);
    for (Configuration& c : Enumerate(space.spec)) {
      const std::vector<int>& embed = c.plan.jax.Rule(LogicalDim::kEmbed);
      if (!embed.empty() && c.plan.jax.SizeOf(embed) == 1) continue;  // FSDP over one: DP
      c.index = static_cast<int64_t>(space.configs.size());
      space.configs.push_back(std::move(c));
    }
    return space;
  }
  std::vector<const char*> keys = {"plan.tp", "plan.pp", "plan.zero"};
  if (e.model.IsMoe()) keys.push_back("plan.ep");
  for (const char* key : keys) {
    SweepAxis a;
    a.key = key;
    a.is_auto = true;
    space.spec.axes.push_back(a);
  }
  space.spec.groups.push_back({std::vector<int>(keys.size(), -1), e});
  for (Configuration& c : Enumerate(space.spec)) {
    if (c.plan.zero > 0 && c.plan.dp * c.plan.cp == 1) continue;
    c.index = static_cast<int64_t>(space.configs.size());
    space.configs.push_back(std::move(c));
  }
  return space;
}

namespace {

// Plans that fit, fastest first; then the others, least memory first.
bool RankedBefore(const ResultRow& a, size_t ia, const ResultRow& b, size_t ib) {
  const bool fa = a.status == ConfigStatus::kOk, fb = b.status == ConfigStatus::kOk;
  if (fa != fb) return fa;
  if (fa && a.summary->step_time_s != b.summary->step_time_s) {
    return a.summary->step_time_s < b.summary->step_time_s;
  }
  if (a.MemoryGibShown() != b.MemoryGibShown()) return a.MemoryGibShown() < b.MemoryGibShown();
  return ia < ib;
}

}  // namespace

PlannerResult RunPlanner(const PlannerSpace& space, int threads,
                         const std::function<void(int64_t, int64_t)>& progress) {
  PlannerResult result;
  result.table.axis_keys = NonPlanAxisKeys(space.spec);
  std::vector<size_t> todo(space.configs.size());
  std::iota(todo.begin(), todo.end(), 0);
  const int64_t total = static_cast<int64_t>(todo.size());
  EvaluateInOrder(space.spec, space.configs, todo, threads,
                  [&](size_t, ResultRow row, const RowInfo&) {
                    result.table.rows.push_back(std::move(row));
                    if (progress) progress(static_cast<int64_t>(result.table.rows.size()), total);
                  });
  const std::vector<ResultRow>& rows = result.table.rows;
  for (size_t r = 0; r < rows.size(); ++r) {
    if (rows[r].status != ConfigStatus::kInvalid) {
      result.ranked.push_back(r);
    } else if (result.invalid++ == 0) {
      result.invalid_example =
          rows[r].plan.jax.Empty()
              ? fmt::format("tp {} pp {}: {}", rows[r].plan.tp, rows[r].plan.pp, rows[r].message)
              : fmt::format("mesh {}: {}", MeshSizesText(rows[r].plan.jax), rows[r].message);
    }
  }
  std::sort(result.ranked.begin(), result.ranked.end(),
            [&rows](size_t a, size_t b) { return RankedBefore(rows[a], a, rows[b], b); });
  return result;
}

}  // namespace meshsim

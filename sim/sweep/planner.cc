#include "sim/sweep/planner.h"

namespace meshsim {

int DefaultGlobalBatch(int gpus) { return gpus * ((64 + gpus - 1) / gpus); }

Result<PlannerSpace> MakePlannerSpace(const ModelSpec& model, const ClusterSpec& cluster,
                                      const PlannerOptions& o) {
  auto bad = [](const std::string& key, const std::string& message) {
    InputError e;
    e.key = key;
    e.message = message;
    return e;
  };
  if (o.gpus < 1) return bad("--gpus", "expected an integer >= 1, found " + std::to_string(o.gpus));
  if (o.budget_gib < 0) return bad("--budget-gib", "expected a positive size in GiB");
  if (o.global_batch < 0) return bad("--global-batch", "expected an integer >= 1");
  Experiment e;
  e.name = model.name + "-" + std::to_string(o.gpus) + "gpus";
  e.model = model;
  e.cluster = cluster;
  if (o.gpus <= cluster.gpus_per_node) {
    e.cluster.nodes = 1;
    e.cluster.gpus_per_node = o.gpus;
  } else if (o.gpus % cluster.gpus_per_node != 0) {
    return bad("--gpus", std::to_string(o.gpus) + " GPUs do not fill whole nodes of " +
                             std::to_string(cluster.gpus_per_node) + " GPUs (cluster " +
                             cluster.name + ")");
  } else {
    e.cluster.nodes = o.gpus / cluster.gpus_per_node;
  }
  if (o.budget_gib > 0) e.cluster.gpu.memory_gib = o.budget_gib;
  e.plan.micro_batch = o.micro_batch;
  e.plan.global_batch = o.global_batch > 0 ? o.global_batch : DefaultGlobalBatch(o.gpus);
  e.plan.recompute = Recompute::kSelective;
  e.plan.sequence_parallel = true;
  e.plan.schedule = ScheduleKind::kOneFOneB;

  PlannerSpace space;
  space.spec.name = e.name;
  for (const char* key : {"plan.tp", "plan.pp", "plan.zero"}) {
    SweepAxis a;
    a.key = key;
    a.is_auto = true;
    space.spec.axes.push_back(a);
  }
  space.spec.groups.push_back({{-1, -1, -1}, e});
  for (Configuration& c : Enumerate(space.spec)) {
    if (c.plan.zero > 0 && c.plan.dp * c.plan.cp == 1) continue;
    c.index = static_cast<int64_t>(space.configs.size());
    space.configs.push_back(std::move(c));
  }
  return space;
}

}  // namespace meshsim

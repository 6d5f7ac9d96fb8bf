// One experiment: a model, a cluster and a plan, fully resolved.
#pragma once

#include <string>

#include "sim/hw/cluster_spec.h"
#include "sim/plan/plan_spec.h"
#include "sim/workload/model_spec.h"

namespace meshsim {

struct Experiment {
  std::string name;
  ModelSpec model;
  ClusterSpec cluster;
  PlanSpec plan;
  TrainingSpec training;
};

}  // namespace meshsim

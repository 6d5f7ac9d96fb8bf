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

// Whether the experiment models each rank's host thread (sim/schedule/host_launch.h): a
// cluster with a host launch cost.
inline bool HostThreads(const Experiment& e) { return e.cluster.host.launch_us > 0; }

}  // namespace meshsim

// Decoders from YAML mappings to option structs (config-layer internal).
#pragma once

#include "sim/config/yaml_reader.h"
#include "sim/hw/cluster_spec.h"
#include "sim/plan/plan_spec.h"
#include "sim/workload/model_spec.h"

namespace meshsim::config {

ModelSpec DecodeModel(YamlReader& r);
ClusterSpec DecodeCluster(YamlReader& r);
PlanSpec DecodePlan(YamlReader& r);
TrainingSpec DecodeTraining(YamlReader& r);

}  // namespace meshsim::config

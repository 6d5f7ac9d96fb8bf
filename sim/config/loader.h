// Loading model, cluster and experiment YAML files into plain option structs.
//
// Schemas are those of SPEC.md. Paths inside an experiment are relative to the
// experiment file. `sets` are --set overrides "dotted.key=VALUE" (VALUE is YAML), applied
// after cluster_overrides; keys under model. and cluster. reach into the loaded files.
// Every problem comes back as an InputError with the file, line, column and dotted key.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "sim/core/status.h"
#include "sim/hw/cluster_spec.h"
#include "sim/plan/experiment.h"
#include "sim/workload/model_spec.h"

namespace meshsim {

Result<ModelSpec> LoadModelFile(const std::string& path);
Result<ClusterSpec> LoadClusterFile(const std::string& path);
struct LoadOptions {
  // false: skip ValidatePlan (and let a JAX-style plan that DerivePlan rejects through);
  // the caller checks the plan itself (a sweep counts invalid combinations instead of
  // failing on them).
  bool validate_plan = true;
};

// Loads, resolves and validates (plan against model and cluster) an experiment.
Result<Experiment> LoadExperimentFile(const std::string& path,
                                      const std::vector<std::string>& sets = {},
                                      const LoadOptions& options = {});
// The same for the YAML `text` of an experiment file at `path`: `path` names it in errors
// and relative model and cluster paths resolve against its folder; it is not read and
// need not exist. (For checks that generate experiments, such as the fuzz targets.)
Result<Experiment> LoadExperimentText(const std::string& text, const std::string& path,
                                      const std::vector<std::string>& sets = {},
                                      const LoadOptions& options = {});

// An experiment without an experiment file, as `meshsim plan` builds one: the model and
// cluster files, then `keys` (dotted key, YAML value; "cluster.*" keys act as
// cluster_overrides), then the --set `sets`. Errors in `keys` name `origin` (e.g.
// "meshsim plan"); files and --set arguments are named as in LoadExperimentFile. The plan
// is not validated (the caller varies it); the cluster's what-if links are checked.
Result<Experiment> ComposeExperiment(const std::string& name, const std::string& model_path,
                                     const std::string& cluster_path,
                                     const std::vector<std::pair<std::string, std::string>>& keys,
                                     const std::string& origin,
                                     const std::vector<std::string>& sets = {});

}  // namespace meshsim

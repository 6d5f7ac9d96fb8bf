#include "sim/config/loader.h"

#include <filesystem>
#include <utility>

#include "sim/config/decode.h"
#include "sim/config/experiment_node.h"
#include "sim/config/folder_name.h"
#include "sim/config/yaml_reader.h"
#include "sim/hw/topology.h"
#include "sim/plan/mesh_torus.h"
#include "sim/plan/sharding.h"
#include "sim/plan/validate.h"

namespace meshsim {
namespace {

using config::ConfigError;
using config::Fail;
using config::Sources;
using config::YamlReader;
namespace fs = std::filesystem;

// A sub-document (model or cluster) of an experiment: its tree and where it came from.
struct SubDoc {
  YAML::Node node;
  Sources sources;
  bool from_file = false;  // node was loaded from its own file (not part of the experiment)
};

std::vector<std::string> SplitKey(const std::string& key) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t dot = key.find('.', start);
    parts.push_back(key.substr(start, dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return parts;
}

// Sets node[path[i]]...[path.back()] = value, creating mappings on the way.
void SetPath(YAML::Node node, const std::vector<std::string>& path, size_t i,
             const YAML::Node& value) {
  if (i + 1 == path.size()) {
    node[path[i]] = value;
    return;
  }
  YAML::Node child = node[path[i]];
  if (child && child.IsMap()) {
    SetPath(child, path, i + 1, value);
  } else {
    YAML::Node fresh(YAML::NodeType::Map);
    SetPath(fresh, path, i + 1, value);
    node[path[i]] = fresh;
  }
}

// Records `origin` for every leaf key under `prefix` of `node`.
void RecordOrigins(const YAML::Node& node, const std::string& prefix, const std::string& origin,
                   std::map<std::string, std::string>* out) {
  (*out)[prefix] = origin;
  if (!node.IsMap()) return;
  for (const auto& kv : node)
    RecordOrigins(kv.second, prefix + "." + kv.first.Scalar(), origin, out);
}

// Merges `over` into `base` recursively (mappings merge, anything else replaces).
// A key new to `base` keeps its node from `over`, so that an error about it (an unknown
// key) can name its line in the file it came from.
void Merge(YAML::Node base, const YAML::Node& over) {
  for (const auto& kv : over) {
    const std::string key = kv.first.Scalar();
    const YAML::Node existing = std::as_const(base)[key];  // const: does not insert
    if (!existing) {
      base.force_insert(kv.first, kv.second);
    } else if (existing.IsMap() && kv.second.IsMap()) {
      Merge(base[key], kv.second);
    } else {
      base[key] = kv.second;
    }
  }
}

struct Override {
  std::string arg;
  std::vector<std::string> path;
  YAML::Node value;
};

std::vector<Override> ParseOverrides(const std::vector<std::string>& sets) {
  std::vector<Override> out;
  for (const std::string& arg : sets) {
    const size_t eq = arg.find('=');
    InputError e;
    e.file = "--set " + arg;
    if (eq == std::string::npos || eq == 0) {
      e.message = "expected KEY=VALUE with a dotted key, e.g. plan.tp=4";
      throw ConfigError{e};
    }
    Override o;
    o.arg = arg;
    o.path = SplitKey(arg.substr(0, eq));
    for (const std::string& part : o.path) {
      if (part.empty()) {
        e.message = "empty component in dotted key '" + arg.substr(0, eq) + "'";
        throw ConfigError{e};
      }
    }
    o.value = config::LoadYamlText(arg.substr(eq + 1), "--set " + arg);
    out.push_back(std::move(o));
  }
  return out;
}

std::string Join(const std::vector<std::string>& parts, size_t from) {
  std::string s;
  for (size_t i = from; i < parts.size(); ++i) s += (s.empty() ? "" : ".") + parts[i];
  return s;
}

// Applies the overrides whose first key is `root` (or, with root empty, those whose first
// key is neither model nor cluster) to `node`, recording them in `sources`.
void ApplyOverrides(const std::vector<Override>& overrides, const std::string& root,
                    YAML::Node node, Sources* sources) {
  for (const Override& o : overrides) {
    const bool sub = o.path[0] == "model" || o.path[0] == "cluster";
    if (root.empty() ? sub : o.path[0] != root) continue;
    if (!root.empty() && o.path.size() == 1) continue;  // replaces the whole file: done earlier
    const size_t from = root.empty() ? 0 : 1;
    SetPath(node, o.path, from, o.value);
    const std::string key = root.empty() ? Join(o.path, 0) : root + "." + Join(o.path, 1);
    sources->set_args[key] = o.arg;
  }
}

// Resolves `model:` or `cluster:`: an inline mapping, or a path relative to the experiment.
SubDoc Resolve(YamlReader& exp, const std::string& key, const fs::path& dir) {
  exp.Skip(key);
  if (!exp.Has(key)) Fail(exp.sources(), exp.node(), key, "required key is missing");
  YAML::Node n = exp.Child(key);
  SubDoc doc;
  doc.sources.file = exp.sources().file;
  if (n.IsMap()) {
    doc.node = n;
    return doc;
  }
  if (!n.IsScalar()) {
    Fail(exp.sources(), n, key, "expected a file path or a mapping, found " + config::Describe(n));
  }
  const fs::path path = dir / n.Scalar();
  std::error_code ec;  // a name the system rejects (too long) is not found; no exception
  if (!fs::is_regular_file(path, ec)) {
    Fail(exp.sources(), n, key, "file not found: " + path.lexically_normal().string());
  }
  doc.node = config::LoadYamlFile(path.lexically_normal().string());
  doc.sources.file = path.lexically_normal().string();
  doc.from_file = true;
  return doc;
}

}  // namespace

YAML::Node config::FindKey(const YAML::Node& root, const std::string& key, size_t skip) {
  const std::vector<std::string> path = SplitKey(key);
  YAML::Node n = root;
  for (size_t i = skip; i < path.size(); ++i) {
    std::string part = path[i];
    int index = -1;
    const size_t bracket = part.find('[');
    if (bracket != std::string::npos) {
      index = std::atoi(part.c_str() + bracket + 1);
      part = part.substr(0, bracket);
    }
    if (!n.IsMap() || !n[part]) break;
    n = n[part];
    if (index >= 0) {
      if (!n.IsSequence() || index >= static_cast<int>(n.size())) break;
      n = n[index];
    }
  }
  return n;
}

namespace {

// Gives an error about a key of the cluster (its node and sources) a file position.
InputError LocateIn(InputError e, const YAML::Node& cluster, const Sources& src) {
  const YAML::Node n = config::FindKey(cluster, e.key, 1);
  try {
    Fail(src, n, e.key, e.message);
  } catch (const ConfigError& located) {
    return located.error;
  }
}

InputError Locate(InputError e, const YAML::Node& root, const Sources& src) {
  const YAML::Node n = config::FindKey(root, e.key, 0);
  // A plan-wide check may disagree with keys set on the command line: name them.
  std::string set_here;
  for (const auto& [key, arg] : src.set_args) {
    if (key.rfind(e.key + ".", 0) == 0)
      set_here += (set_here.empty() ? "" : ", ") + ("--set " + arg);
  }
  if (!set_here.empty()) e.message += " (with " + set_here + ")";
  try {
    Fail(src, n, e.key, e.message);
  } catch (const ConfigError& located) {
    return located.error;
  }
}

}  // namespace

namespace config {

Experiment DecodeExperimentNode(YAML::Node root, const std::string& path,
                                const std::vector<std::string>& sets, bool validate_plan) {
  const std::vector<Override> overrides = ParseOverrides(sets);
  Sources src;
  src.file = path;
  if (!root.IsMap()) {
    Fail(src, root, "(top level)", "expected a mapping, found " + config::Describe(root));
  }
  ApplyOverrides(overrides, "", root, &src);
  // A --set model=PATH or cluster=PATH replaces the file reference itself.
  for (const Override& o : overrides) {
    if (o.path.size() == 1 && (o.path[0] == "model" || o.path[0] == "cluster")) {
      root[o.path[0]] = o.value;
      src.set_args[o.path[0]] = o.arg;
    }
  }
  YamlReader exp(root, "", src);
  const fs::path dir = fs::path(path).parent_path();
  Experiment e;
  config::GetFolderName(exp, "name", &e.name);

  SubDoc model = Resolve(exp, "model", dir);
  ApplyOverrides(overrides, "model", model.node, &model.sources);
  YamlReader mr(model.node, "model", model.sources);
  e.model = config::DecodeModel(mr);

  SubDoc cluster = Resolve(exp, "cluster", dir);
  exp.Skip("cluster_overrides");
  if (exp.Has("cluster_overrides")) {
    const YAML::Node over = exp.Child("cluster_overrides");
    if (!over.IsMap()) {
      Fail(src, over, "cluster_overrides", "expected a mapping, found " + config::Describe(over));
    }
    // An inline cluster is merged into a copy so that the experiment's own tree stays as
    // written (a copy loses the nodes' positions); a file's tree was loaded for this call.
    if (!cluster.from_file) cluster.node = YAML::Clone(cluster.node);
    Merge(cluster.node, over);
    for (const auto& kv : over) {
      RecordOrigins(kv.second, "cluster." + kv.first.Scalar(), path, &cluster.sources.origins);
    }
  }
  ApplyOverrides(overrides, "cluster", cluster.node, &cluster.sources);
  YamlReader cr(cluster.node, "cluster", cluster.sources);
  e.cluster = config::DecodeCluster(cr);

  YamlReader pr = exp.Map("plan");
  e.plan = config::DecodePlan(pr);
  if (exp.Has("training")) {
    YamlReader tr = exp.Map("training");
    e.training = config::DecodeTraining(tr);
  }
  exp.Finish();

  if (!e.plan.jax.Empty()) {
    // Without validate_plan the caller derives and checks the plan itself (a sweep
    // re-derives each configuration and counts the mesh sizes that do not fit as invalid).
    const Status derived = DerivePlan(e.plan.jax, e.cluster, &e.plan);
    if (!derived.ok() && validate_plan) throw ConfigError{Locate(derived.error(), root, src)};
  }
  PlaceRanksOnTorus(e.plan, &e.cluster);  // a TPU slice: mesh axes onto torus dimensions
  if (validate_plan) {
    Status valid = ValidatePlan(e.plan, e.training, e.model, e.cluster);
    if (!valid.ok()) throw ConfigError{Locate(valid.error(), root, src)};
  }
  // A fabric with no link changed is connected by construction (topology.h): only what-if
  // links (their names, a failure that disconnects) need the graph, which on 100,000 GPUs
  // is large. The flow network builds its own when it runs.
  if (!e.cluster.what_if.links.empty()) {
    Result<std::shared_ptr<const Topology>> topology = Topology::Build(e.cluster);
    if (!topology.ok())
      throw ConfigError{LocateIn(topology.error(), cluster.node, cluster.sources)};
  }
  return e;
}

}  // namespace config

Result<Experiment> ComposeExperiment(const std::string& name, const std::string& model_path,
                                     const std::string& cluster_path,
                                     const std::vector<std::pair<std::string, std::string>>& keys,
                                     const std::string& origin,
                                     const std::vector<std::string>& sets) {
  try {
    YAML::Node root(YAML::NodeType::Map);
    root["name"] = name;
    root["model"] = model_path;
    root["cluster"] = cluster_path;
    for (const auto& [key, value] : keys) {
      std::vector<std::string> path = SplitKey(key);
      if (path.front() == "cluster") path.front() = "cluster_overrides";
      SetPath(root, path, 0, config::LoadYamlText(value, origin));
    }
    return config::DecodeExperimentNode(root, origin, sets, false);
  } catch (const ConfigError& e) {
    return e.error;
  } catch (const YAML::Exception& e) {
    return config::FromYamlException(origin, e);
  }
}

Result<ModelSpec> LoadModelFile(const std::string& path) {
  try {
    Sources src;
    src.file = path;
    YamlReader r(config::LoadYamlFile(path), "", src);
    return config::DecodeModel(r);
  } catch (const ConfigError& e) {
    return e.error;
  }
}

Result<ClusterSpec> LoadClusterFile(const std::string& path) {
  try {
    Sources src;
    src.file = path;
    YamlReader r(config::LoadYamlFile(path), "", src);
    return config::DecodeCluster(r);
  } catch (const ConfigError& e) {
    return e.error;
  }
}

namespace {

// Decodes the tree that `parse` returns, turning every failure into an InputError.
template <typename Parse>
Result<Experiment> LoadExperiment(Parse parse, const std::string& path,
                                  const std::vector<std::string>& sets,
                                  const LoadOptions& options) {
  try {
    return config::DecodeExperimentNode(parse(), path, sets, options.validate_plan);
  } catch (const ConfigError& e) {
    return e.error;
  } catch (const YAML::Exception& e) {
    return config::FromYamlException(path, e);
  }
}

}  // namespace

Result<Experiment> LoadExperimentFile(const std::string& path, const std::vector<std::string>& sets,
                                      const LoadOptions& options) {
  return LoadExperiment([&] { return config::LoadYamlFile(path); }, path, sets, options);
}

Result<Experiment> LoadExperimentText(const std::string& text, const std::string& path,
                                      const std::vector<std::string>& sets,
                                      const LoadOptions& options) {
  return LoadExperiment([&] { return config::ParseYamlFileText(text, path); }, path, sets, options);
}

}  // namespace meshsim

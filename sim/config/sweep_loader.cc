#include "sim/config/sweep_loader.h"

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <set>

#include "sim/config/experiment_node.h"
#include "sim/config/folder_name.h"
#include "sim/config/yaml_reader.h"
#include "sim/sweep/enumerate.h"
#include "sim/sweep/mesh_axes.h"

namespace meshsim {
namespace {

using config::ConfigError;
using config::Fail;
using config::Sources;
namespace fs = std::filesystem;

constexpr size_t kMaxGroups = 1'000'000;

// Where an explicit value was written, to point errors at it.
struct ValueSource {
  std::string key;
  std::string text;  // YAML text, as passed to the loader
  YAML::Node node;   // in the sweep file
};

std::string FlowText(const YAML::Node& node) {
  if (node.IsScalar()) {
    // A plain scalar re-parses to itself; quote only what YAML would read otherwise.
    YAML::Emitter em;
    em << node.Scalar();
    return em.c_str();
  }
  YAML::Emitter em;
  em << YAML::Flow << node;
  return em.c_str();
}

class SweepLoader {
 public:
  SweepLoader(const std::string& path, const std::vector<std::string>& base_sets)
      : path_(path), base_sets_(base_sets) {
    src_.file = path;
  }

  // `root`: the parsed sweep file.
  SweepSpec Load(YAML::Node root) {
    config::YamlReader top(root, "", src_);
    SweepSpec spec;
    config::GetFolderName(top, "name", &spec.name);
    top.Skip("base");
    top.Skip("axes");
    top.Finish();
    LoadBase(top);
    LoadAxes(top, &spec);
    // Each explicit value alone, so that a bad one is named where it is written.
    for (size_t a = 0; a < spec.axes.size(); ++a) {
      if (mesh_sizes_[a]) continue;  // checked in MeshSizeAxis
      for (size_t v = 0; v < spec.axes[a].values.size(); ++v) Resolve({&sources_[a][v]});
    }
    BuildGroups(&spec);
    return spec;
  }

 private:
  void LoadBase(config::YamlReader& top) {
    if (!top.Has("base")) Fail(src_, top.node(), "base", "required key is missing");
    const YAML::Node base = top.Child("base");
    if (base.IsMap()) {
      base_ = base;
      base_file_ = path_;
      return;
    }
    if (!base.IsScalar()) {
      Fail(src_, base, "base",
           "expected an experiment file path or mapping, found " + config::Describe(base));
    }
    const fs::path file = (fs::path(path_).parent_path() / base.Scalar()).lexically_normal();
    std::error_code ec;  // a name the system rejects (too long) is not found; no exception
    if (!fs::is_regular_file(file, ec))
      Fail(src_, base, "base", "file not found: " + file.string());
    base_file_ = file.string();
    base_ = config::LoadYamlFile(base_file_);
  }

  void LoadAxes(config::YamlReader& top, SweepSpec* spec) {
    if (!top.Has("axes")) Fail(src_, top.node(), "axes", "required key is missing");
    const YAML::Node axes = top.Child("axes");
    if (!axes.IsMap()) {
      Fail(src_, axes, "axes",
           "expected a mapping of dotted keys to lists of values or auto, found " +
               config::Describe(axes));
    }
    if (axes.size() == 0) {
      Fail(src_, axes, "axes",
           "expected at least one axis (a dotted key with a list of values or auto, e.g. "
           "plan.tp: [1, 2, 4]), found an empty mapping");
    }
    std::set<std::string> seen;
    for (const auto& kv : axes) {
      const std::string key = kv.first.Scalar();
      const std::string where = "axes." + key;
      if (key.empty() || key.front() == '.' || key.back() == '.' ||
          key.find("..") != std::string::npos) {
        Fail(src_, kv.first, where, "expected a dotted experiment key like plan.tp");
      }
      if (!seen.insert(key).second) Fail(src_, kv.first, where, "this axis appears twice");
      SweepAxis axis;
      axis.key = key;
      std::vector<ValueSource> sources;
      const YAML::Node& v = kv.second;
      mesh_sizes_.push_back(MeshSizeAxis(kv.first, v, where));
      if (!mesh_sizes_.back()) RejectDegreeAuto(key, kv.first, v, where);
      if (v.IsScalar() && v.Scalar() == "auto") {
        if (!SupportsAuto(key)) {
          FailIfUnknownKey(key, kv.first, where);
          std::string keys;
          for (const std::string& k : AutoKeys()) keys += (keys.empty() ? "" : ", ") + k;
          Fail(src_, v, where, "auto is supported only for " + keys + "; give a list of values");
        }
        axis.is_auto = true;
      } else if (v.IsSequence() && v.size() > 0) {
        std::set<std::string> values;
        for (size_t i = 0; i < v.size(); ++i) {
          const std::string text = FlowText(v[i]);
          if (!values.insert(text).second) {
            Fail(src_, v[i], where, "the value " + text + " appears twice");
          }
          axis.values.push_back(v[i].IsScalar() ? v[i].Scalar() : text);
          sources.push_back({key, text, v[i]});
        }
      } else {
        Fail(src_, v, where,
             "expected a non-empty list of values (e.g. [1, 2, 4]) or auto, found " +
                 config::Describe(v));
      }
      spec->axes.push_back(std::move(axis));
      sources_.push_back(std::move(sources));
    }
  }

  // The base experiment's JAX-style plan (empty for a PyTorch-style plan).
  const JaxPlan& BaseJax() {
    if (!base_jax_) base_jax_ = Resolve({}).plan.jax;
    return *base_jax_;
  }

  // A mesh-size axis (plan.mesh.ici.NAME / plan.mesh.dcn.NAME): the size it names, its
  // explicit values checked (integers in 1..2^20); none for other keys.
  std::optional<MeshSizeKey> MeshSizeAxis(const YAML::Node& key, const YAML::Node& v,
                                          const std::string& where) {
    if (!IsMeshSizeKey(key.Scalar())) return std::nullopt;
    const JaxPlan& jax = BaseJax();
    const std::optional<MeshSizeKey> size = ParseMeshSizeKey(key.Scalar(), jax);
    if (!size) {
      std::string names;
      for (const MeshAxisSpec& a : jax.axes) names += (names.empty() ? "" : ", ") + a.name;
      Fail(src_, key, where,
           jax.Empty() ? std::string("expected a JAX-style base plan (plan.mesh) for a mesh "
                                     "size axis, found a plan without plan.mesh")
                       : "expected a mesh axis of the base's plan.mesh.axes (" + names +
                             ") after plan.mesh.ici. or plan.mesh.dcn., found '" +
                             key.Scalar().substr(14) + "'");
    }
    if (!v.IsSequence()) return size;
    for (size_t i = 0; i < v.size(); ++i) {
      const std::string text = v[i].IsScalar() ? v[i].Scalar() : std::string();
      errno = 0;
      char* end = nullptr;
      const long long n = std::strtoll(text.c_str(), &end, 10);
      if (text.empty() || errno != 0 || *end != '\0' || n < 1 || n > (1 << 20)) {
        Fail(src_, v[i], where,
             "expected a mesh size (an integer in 1..1048576), found " + config::Describe(v[i]));
      }
    }
    return size;
  }

  // A JAX-style base derives tp, pp, dp, cp, zero and sequence parallelism from its mesh
  // and rules: `auto` on them is refused (explicit values fail in the decoder).
  void RejectDegreeAuto(const std::string& key, const YAML::Node& at, const YAML::Node& v,
                        const std::string& where) {
    static const std::set<std::string> degrees = {"plan.tp",
                                                  "plan.pp",
                                                  "plan.cp",
                                                  "plan.dp",
                                                  "plan.ep",
                                                  "plan.zero",
                                                  "plan.sequence_parallel"};
    if (!v.IsScalar() || v.Scalar() != "auto" || degrees.count(key) == 0) return;
    if (BaseJax().Empty()) return;
    Fail(src_, at, where,
         "expected plan.mesh.ici.NAME or plan.mesh.dcn.NAME for a JAX-style base plan (its "
         "degrees follow from plan.mesh and plan.rules), found " +
             key + ": auto");
  }

  // Fails with the decoder's "unknown key" message when the base experiment has no `key`
  // (checked by decoding it with key set to null: a known key then fails on its value
  // instead, an unknown one in the check for unread keys).
  void FailIfUnknownKey(const std::string& key, const YAML::Node& at, const std::string& where) {
    try {
      std::vector<std::string> sets = base_sets_;
      sets.push_back(key + "=null");
      config::DecodeExperimentNode(YAML::Clone(base_), base_file_, sets, false);
    } catch (const ConfigError& e) {
      if (e.error.message.rfind("unknown key", 0) == 0) Fail(src_, at, where, e.error.message);
    } catch (const YAML::Exception&) {
    }
  }

  // Loads the base with the given values applied; errors are pointed at the sweep file.
  Experiment Resolve(const std::vector<const ValueSource*>& values) {
    std::vector<std::string> sets = base_sets_;
    for (const ValueSource* v : values) sets.push_back(v->key + "=" + v->text);
    try {
      return config::DecodeExperimentNode(YAML::Clone(base_), base_file_, sets, false);
    } catch (const ConfigError& e) {
      for (const ValueSource* v : values) {
        if (e.error.file == "--set " + v->key + "=" + v->text) {
          Fail(src_, v->node, "axes." + v->key, e.error.message);
        }
      }
      InputError err = e.error;
      if (err.file == base_file_) Reposition(&err);
      std::string with;
      for (const ValueSource* v : values) {
        with += (with.empty() ? "" : ", ") + v->key + " = " + v->text + " (" + path_ + ":" +
                std::to_string(v->node.Mark().line + 1) + ")";
      }
      if (!with.empty()) err.message += " (with " + with + ")";
      throw ConfigError{err};
    } catch (const YAML::Exception& e) {
      InputError err;
      err.file = base_file_;
      err.message = std::string("YAML error: ") + e.what();
      throw ConfigError{err};
    }
  }

  // The base is decoded from a copy, which has no file positions: an error about one of
  // its keys gets the position of that key (or of the deepest mapping above it) in the
  // base as written, and an inline base's keys are named from the sweep's top level.
  void Reposition(InputError* err) const {
    if (!err->key.empty()) {
      const YAML::Node n = config::FindKey(base_, err->key);
      if (n.Mark().line >= 0) {
        err->line = n.Mark().line + 1;
        err->column = n.Mark().column + 1;
      }
    }
    if (base_file_ == path_) err->key = err->key.empty() ? "base" : "base." + err->key;
  }

  void BuildGroups(SweepSpec* spec) {
    std::vector<size_t> explicit_axes;
    size_t count = 1;
    for (size_t a = 0; a < spec->axes.size(); ++a) {
      if (spec->axes[a].is_auto) continue;
      explicit_axes.push_back(a);
      count *= spec->axes[a].values.size();
      if (count > kMaxGroups) {
        InputError e;
        e.file = path_;
        e.key = "axes";
        e.message = "more than " + std::to_string(kMaxGroups) +
                    " combinations of explicit values; use auto or fewer values";
        throw ConfigError{e};
      }
    }
    std::vector<int> choice(spec->axes.size(), -1);
    for (size_t a : explicit_axes) choice[a] = 0;
    for (size_t g = 0; g < count; ++g) {
      std::vector<const ValueSource*> values;
      for (size_t a : explicit_axes) {
        if (!mesh_sizes_[a]) values.push_back(&sources_[a][choice[a]]);
      }
      Experiment e = Resolve(values);
      for (size_t a : explicit_axes) {
        if (mesh_sizes_[a]) {
          MeshSize(e.plan.jax, *mesh_sizes_[a]) =
              std::atoi(spec->axes[a].values[choice[a]].c_str());
        }
      }
      spec->groups.push_back({choice, std::move(e)});
      // Next combination: the last explicit axis varies fastest.
      for (size_t k = explicit_axes.size(); k-- > 0;) {
        const size_t a = explicit_axes[k];
        if (++choice[a] < static_cast<int>(spec->axes[a].values.size())) break;
        choice[a] = 0;
      }
    }
  }

  std::string path_;
  std::vector<std::string> base_sets_;
  Sources src_;
  YAML::Node base_;
  std::string base_file_;
  std::vector<std::vector<ValueSource>> sources_;  // per axis, per explicit value
  // Per axis: the mesh size it varies (plan.mesh.ici.NAME, plan.mesh.dcn.NAME), or none.
  std::vector<std::optional<MeshSizeKey>> mesh_sizes_;
  std::optional<JaxPlan> base_jax_;  // the base's JAX-style plan (empty: none), once read
};

}  // namespace

namespace {

// Loads the sweep tree that `parse` returns, turning every failure into an InputError.
template <typename Parse>
Result<SweepSpec> LoadSweep(Parse parse, const std::string& path,
                            const std::vector<std::string>& base_sets) {
  try {
    return SweepLoader(path, base_sets).Load(parse());
  } catch (const ConfigError& e) {
    return e.error;
  } catch (const YAML::Exception& e) {
    return config::FromYamlException(path, e);
  }
}

}  // namespace

Result<SweepSpec> LoadSweepFile(const std::string& path,
                                const std::vector<std::string>& base_sets) {
  return LoadSweep([&] { return config::LoadYamlFile(path); }, path, base_sets);
}

Result<SweepSpec> LoadSweepText(const std::string& text, const std::string& path,
                                const std::vector<std::string>& base_sets) {
  return LoadSweep([&] { return config::ParseYamlFileText(text, path); }, path, base_sets);
}

}  // namespace meshsim

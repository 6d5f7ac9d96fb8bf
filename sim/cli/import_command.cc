// `meshsim import hf`, `meshsim import megatron` and `meshsim import maxtext`: file handling around
// the pure importers of sim/config. Outputs are checked by loading them back (the model through the
// model decoder, the experiment through the full experiment validation) before they are renamed
// into place, so a failed import leaves no file behind.
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "sim/cli/commands.h"
#include "sim/config/folder_name.h"
#include "sim/config/import_hf.h"
#include "sim/config/import_maxtext.h"
#include "sim/config/import_megatron.h"
#include "sim/config/loader.h"
#include "sim/core/atomic_file.h"

namespace meshsim::cli {
namespace {

namespace fs = std::filesystem;

constexpr const char* kDefaultCluster = "topologies/selene-a100.yaml";

// The whole of `path` ("-": stdin); false when it cannot be read.
bool ReadAll(const std::string& path, std::string* out) {
  std::ostringstream ss;
  if (path == "-") {
    ss << std::cin.rdbuf();
  } else {
    std::error_code ec;
    if (fs::is_directory(path, ec)) return false;
    std::ifstream in(path, std::ios::binary);
    if (!in) return false;
    ss << in.rdbuf();
    if (in.bad()) return false;
  }
  *out = ss.str();
  return true;
}

// Writes `yaml` to `output` (stdout when empty) once `check` accepted it as a file: to
// the output file's temporary name, or for stdout to a scratch file that is removed.
int Emit(const std::string& yaml, const std::string& output,
         const std::function<Status(const std::string&)>& check) {
  AtomicWriteOptions options;
  options.check = check;
  if (!output.empty()) {
    const Status written = WriteFileAtomically(output, yaml, options);
    if (!written.ok()) return ReportError(written.error());
    spdlog::info("wrote {}", output);
    return kOk;
  }
  const fs::path scratch =
      fs::temp_directory_path() / ("meshsim-import-" + std::to_string(::getpid()) + ".yaml");
  const Status written = WriteFileAtomically(scratch.string(), yaml, options);
  std::error_code ec;
  fs::remove(scratch, ec);
  if (!written.ok()) return ReportError(written.error());
  std::cout << yaml;
  return kOk;
}

std::string Quoted(const std::string& s) {
  const bool plain = !s.empty() && s.find_first_of(" \t\n'\"\\$*?;&|<>()") == std::string::npos;
  if (plain) return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// A bundled file (topologies/...): relative to the working directory, else to the
// executable's folder or its parent (build/meshsim in a source tree).
fs::path FindBundled(const fs::path& relative) {
  if (fs::exists(relative)) return relative;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (const fs::path& dir : {exe.parent_path(), exe.parent_path().parent_path()}) {
      if (fs::exists(dir / relative)) return dir / relative;
    }
  }
  return relative;
}

fs::path FindDefaultCluster() { return FindBundled(kDefaultCluster); }

// How the experiment names its cluster: relative to the output file's folder, or
// absolute when the experiment goes to stdout.
std::string ClusterReference(const fs::path& cluster, const std::string& output) {
  std::error_code ec;
  const fs::path absolute = fs::weakly_canonical(fs::absolute(cluster), ec);
  if (output.empty() || ec) return absolute.string();
  const fs::path dir = fs::weakly_canonical(fs::absolute(fs::path(output)).parent_path(), ec);
  if (ec) return absolute.string();
  // Relative only when the two share a folder below the root.
  const auto a = absolute.begin(), d = dir.begin();
  const bool related = std::distance(a, absolute.end()) > 1 && std::distance(d, dir.end()) > 1 &&
                       *std::next(a) == *std::next(d);
  const fs::path relative = absolute.lexically_relative(dir);
  return !related || relative.empty() ? absolute.string() : relative.string();
}

// The argument text: one word is the whole string ("@FILE" reads it from FILE); several
// words were split by the shell already.
bool MegatronText(const std::vector<std::string>& words, std::string* text, std::string* error) {
  if (words.size() == 1 && !words[0].empty() && words[0][0] == '@') {
    if (!ReadAll(words[0].substr(1), text)) {
      *error = words[0].substr(1);
      return false;
    }
    return true;
  }
  if (words.size() == 1) {
    *text = words[0];
    return true;
  }
  for (const std::string& w : words) *text += (text->empty() ? "" : " ") + Quoted(w);
  return true;
}

// The importer's warnings, once the experiment is written (a bad input prints only its
// error): unknown flags in one line, then each approximation and each flag not modelled.
void WarnMegatron(const MegatronImport& run) {
  if (!run.unknown.empty()) {
    std::string list;
    for (const std::string& u : run.unknown) list += (list.empty() ? "" : ", ") + u;
    spdlog::warn("{}: ignored {} flag(s) meshsim does not know: {}", kMegatronSource,
                 run.unknown.size(), list);
  }
  for (const std::string& w : run.warnings) spdlog::warn("{}: {}", kMegatronSource, w);
  for (const std::string& f : run.not_modelled) spdlog::warn("{}: {}", kMegatronSource, f);
}

// The experiment's name: --name, else the output file's stem, else `fallback`; an
// InputError when it cannot be a folder name.
Result<std::string> ExperimentName(const std::string& given, const std::string& output,
                                   const std::string& fallback) {
  std::string name = given;
  if (name.empty()) name = output.empty() ? fallback : fs::path(output).stem().string();
  if (config::IsFolderName(name)) return name;
  InputError e;
  e.key = given.empty() ? "-o" : "--name";
  e.message =
      "the experiment's name becomes a folder name: expected 1-128 letters, digits, "
      "'.', '_', '-', '+', not starting with '.', found '" +
      name + "'" + (given.empty() ? " (from the output file's name; use --name)" : "");
  return e;
}

// --topology: a path when it names a YAML file or a folder, else topologies/NAME.yaml.
fs::path TopologyPath(const std::string& topology) {
  const fs::path p(topology);
  const std::string ext = p.extension().string();
  if (ext == ".yaml" || ext == ".yml" || topology.find('/') != std::string::npos) return p;
  return FindBundled(fs::path("topologies") / (topology + ".yaml"));
}

// The model config: --model, else models/<model_name>.yml next to the base config when
// the base config or an override names a model (empty when there is none).
Result<MaxTextFile> MaxTextModelFile(const ImportMaxTextArgs& args, const MaxTextFile& base) {
  std::string path = args.model;
  if (path.empty()) {
    Result<std::string> model_name = MaxTextModelName(base, args.overrides);
    if (!model_name.ok()) return model_name.error();
    if (model_name.value() == "default") return MaxTextFile{};
    const fs::path guess = fs::path(args.base == "-" ? "." : args.base).parent_path() / "models" /
                           (model_name.value() + ".yml");
    if (!fs::exists(guess)) return MaxTextFile{};
    path = guess.string();
  }
  MaxTextFile model{path, ""};
  if (!ReadAll(path, &model.text)) {
    return BadInput(path, "cannot read the file (missing, unreadable or a folder)");
  }
  return model;
}

// --slice-shape "4x4x8": 1 to 3 integers in 1..2^20 joined by 'x'; empty: none.
Result<std::vector<int>> SliceShape(const std::string& text) {
  std::vector<int> shape;
  if (text.empty()) return shape;
  std::istringstream parts(text.back() == 'x' ? std::string() : text);
  std::string part;
  while (std::getline(parts, part, 'x')) {
    const bool digits = !part.empty() && part.size() <= 7 &&
                        part.find_first_not_of("0123456789") == std::string::npos;
    const long v = digits ? std::stol(part) : 0;
    if (v < 1 || v > (1 << 20) || shape.size() == 3) {
      shape.clear();
      break;
    }
    shape.push_back(static_cast<int>(v));
  }
  if (shape.empty()) {
    InputError e;
    e.key = "--slice-shape";
    e.message = "expected 1 to 3 chip counts joined by 'x', e.g. 4x4x8, found '" + text + "'";
    return e;
  }
  return shape;
}

std::string MaxTextCommand(const ImportMaxTextArgs& args) {
  std::string command = "meshsim import maxtext " + Quoted(args.base);
  for (const std::string& o : args.overrides) command += " " + Quoted(o);
  if (!args.model.empty()) command += " --model " + Quoted(args.model);
  command += " --topology " + Quoted(args.topology);
  if (args.slices > 0) command += " --slices " + std::to_string(args.slices);
  if (args.chips_per_slice > 0) {
    command += " --chips-per-slice " + std::to_string(args.chips_per_slice);
  }
  if (!args.slice_shape.empty()) command += " --slice-shape " + Quoted(args.slice_shape);
  if (!args.name.empty()) command += " --name " + Quoted(args.name);
  return command;
}

void WarnMaxText(const std::string& source, const MaxTextImport& run) {
  if (!run.unknown.empty()) {
    std::string list;
    for (const std::string& u : run.unknown) list += (list.empty() ? "" : ", ") + u;
    spdlog::warn("{}: {} key(s) meshsim does not know, not modelled: {}", source,
                 run.unknown.size(), list);
  }
  for (const std::string& w : run.warnings) spdlog::warn("{}: {}", source, w);
  for (const std::string& f : run.not_modelled) spdlog::warn("{}: {}", source, f);
}

}  // namespace

int ImportMaxText(const ImportMaxTextArgs& args) {
  MaxTextImportOptions options;
  options.base.file = args.base == "-" ? "<stdin>" : args.base;
  if (!ReadAll(args.base, &options.base.text)) {
    return ReportError(
        BadInput(args.base, "cannot read the file (missing, unreadable or a folder)"));
  }
  Result<MaxTextFile> model = MaxTextModelFile(args, options.base);
  if (!model.ok()) return ReportError(model.error());
  options.model = model.value();
  options.overrides = args.overrides;
  const fs::path cluster = TopologyPath(args.topology);
  Result<ClusterSpec> spec = LoadClusterFile(cluster.string());
  if (!spec.ok()) return ReportError(spec.error());
  options.slices = args.slices;
  options.torus = spec.value().Torus();
  options.cluster_gpus_per_node = spec.value().gpus_per_node;
  options.cluster_nics_per_node = spec.value().inter_node.nics_per_node;
  Result<std::vector<int>> shape = SliceShape(args.slice_shape);
  if (!shape.ok()) return ReportError(shape.error());
  options.slice_shape = shape.value();
  int64_t shape_chips = 1;
  for (const int d : options.slice_shape) shape_chips *= d;  // each <= 2^20, at most 3
  options.chips_per_slice = args.chips_per_slice > 0       ? args.chips_per_slice
                            : !options.slice_shape.empty() ? static_cast<int>(shape_chips)
                                                           : spec.value().gpus_per_node;
  Result<std::string> name = ExperimentName(args.name, args.output, "maxtext");
  if (!name.ok()) return ReportError(name.error());
  options.name = name.value();
  Result<MaxTextImport> imported = ImportMaxTextConfig(options);
  if (!imported.ok()) return ReportError(imported.error());
  const std::string yaml =
      MaxTextExperimentYaml(imported.value(), name.value(), ClusterReference(cluster, args.output),
                            spec.value().gpus_per_node, MaxTextCommand(args));
  const std::string source = options.base.file;
  const int code = Emit(yaml, args.output, [&source](const std::string& path) -> Status {
    Result<Experiment> back = LoadExperimentFile(path);
    if (back.ok()) return Ok{};
    // Name the MaxText key behind the experiment key that failed.
    InputError e = back.error();
    const std::string key = MaxTextKeyOf(e.key);
    e.message += " (experiment key " + e.key + ")";
    e.key = key.empty() ? e.key : key;
    e.file = source;
    e.line = e.column = 0;
    return e;
  });
  if (code == kOk) WarnMaxText(source, imported.value());
  return code;
}

int ImportHf(const ImportHfArgs& args) {
  std::string text;
  if (!ReadAll(args.config, &text)) {
    return ReportError(
        BadInput(args.config, "cannot read the file (missing, unreadable or a folder)"));
  }
  HfImportOptions options;
  options.source = args.config;
  options.name = args.name;
  options.seq_len = args.seq_len;
  options.command = "meshsim import hf " + Quoted(args.config);
  if (args.seq_len > 0) options.command += " --seq-len " + std::to_string(args.seq_len);
  if (!args.name.empty()) options.command += " --name " + Quoted(args.name);
  Result<HfImport> imported = ImportHfConfig(text, options);
  if (!imported.ok()) return ReportError(imported.error());
  const std::string yaml = HfModelYaml(imported.value(), options);
  const int code = Emit(yaml, args.output, [](const std::string& path) -> Status {
    Result<ModelSpec> back = LoadModelFile(path);
    if (back.ok()) return Ok{};
    InputError e = back.error();
    e.kind = ErrorKind::kInternal;
    e.message = "the imported model does not load: " + e.message;
    return e;
  });
  // The approximations, each on stderr (they are in the file's header too).
  if (code == kOk) {
    for (const std::string& w : imported.value().warnings) spdlog::warn("{}: {}", args.config, w);
  }
  return code;
}

int ImportMegatron(const ImportMegatronArgs& args) {
  std::string text, unreadable;
  if (!MegatronText(args.args, &text, &unreadable)) {
    return ReportError(BadInput(unreadable, "cannot read the argument file"));
  }
  Result<MegatronImport> parsed = ParseMegatronArgs(text);
  if (!parsed.ok()) return ReportError(parsed.error());
  MegatronImport& run = parsed.value();

  const fs::path cluster = args.cluster.empty() ? FindDefaultCluster() : fs::path(args.cluster);
  Result<ClusterSpec> spec = LoadClusterFile(cluster.string());
  if (!spec.ok()) return ReportError(spec.error());
  int gpus_per_node_override = 0;
  Result<int> nodes =
      ResolveMegatronWorld(&run, spec.value().gpus_per_node, args.nodes, &gpus_per_node_override);
  if (!nodes.ok()) return ReportError(nodes.error());

  std::string name = args.name;
  if (name.empty()) name = args.output.empty() ? "megatron" : fs::path(args.output).stem().string();
  if (!config::IsFolderName(name)) {
    InputError e;
    e.key = args.name.empty() ? "-o" : "--name";
    e.message =
        "the experiment's name becomes a folder name: expected 1-128 letters, digits, "
        "'.', '_', '-', '+', not starting with '.', found '" +
        name + "'" + (args.name.empty() ? " (from the output file's name; use --name)" : "");
    return ReportError(e);
  }
  const std::string yaml = MegatronExperimentYaml(run, name, ClusterReference(cluster, args.output),
                                                  nodes.value(), gpus_per_node_override);
  const int code = Emit(yaml, args.output, [](const std::string& path) -> Status {
    Result<Experiment> back = LoadExperimentFile(path);
    if (back.ok()) return Ok{};
    // Name the Megatron flag behind the experiment key that failed.
    InputError e = back.error();
    const std::string flag = MegatronFlagOf(e.key);
    e.message += " (experiment key " + e.key + ")";
    e.key = flag.empty() ? e.key : flag;
    e.file = kMegatronSource;
    e.line = e.column = 0;
    return e;
  });
  if (code == kOk) WarnMegatron(run);
  return code;
}

}  // namespace meshsim::cli

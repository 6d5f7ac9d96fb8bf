// The YAML reference (docs/yaml.md) against the decoders: every key that the experiment,
// model, cluster and sweep decoders read is documented, with its type, whether it is
// required and the values a choice accepts, and every documented key is read. The keys
// are collected with config::KeyRecorder while loading every bundled experiment and
// sweep and docs/examples/ (which set every key). The command line and the output keys
// are checked end to end (tests/e2e/docs_reference_test.cc).
#include "tests/docs_reference.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "sim/config/loader.h"
#include "sim/config/sweep_loader.h"
#include "sim/config/yaml_reader.h"
#include "sim/sweep/enumerate.h"

namespace meshsim {
namespace {

namespace fs = std::filesystem;
using config::KeyRecorder;
using docs::CompareWithDocs;
using docs::DocRow;
using docs::DocTables;
using docs::JoinLines;

const fs::path kRepo = MESHSIM_SOURCE_DIR;

std::vector<std::string> YamlFiles(const std::string& folder) {
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(kRepo / folder)) {
    if (entry.path().extension() == ".yaml") files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Where a key of the experiment belongs: model.*, cluster.*, or the experiment's table.
std::string ExperimentSet(const std::string& key) {
  if (key.rfind("model.", 0) == 0) return "model";
  if (key.rfind("cluster.", 0) == 0) return "cluster";
  return "experiment";
}

const std::vector<std::string> kExperimentSets = {"experiment", "model", "cluster"};

// Checks a documented key's row against what the decoder asked: the type column's first
// word, `required` in the default column, and every choice in backticks.
std::vector<std::string> CheckRow(const DocRow& row, const KeyRecorder::Key& asked) {
  std::vector<std::string> out;
  const std::string where = row.file + ":" + std::to_string(row.line) + ": `" + row.key + "`: ";
  const std::string type = row.cells.size() > 1 ? row.cells[1] : "";
  const std::string first_word = type.substr(0, type.find(' '));
  if (!asked.kind.empty() && first_word != asked.kind) {
    out.push_back(where + "the decoder reads it as " + asked.kind + ", but the type column says '" +
                  type + "'");
  }
  const std::string def = row.cells.size() > 2 ? row.cells[2] : "";
  if (asked.required && def.rfind("required", 0) != 0) {
    out.push_back(where + "the decoder requires it, but the default column says '" + def +
                  "' (write: required)");
  }
  std::string text;
  for (const std::string& cell : row.cells) text += cell + " ";
  for (const std::string& choice : asked.choices) {
    if (text.find("`" + choice + "`") == std::string::npos) {
      out.push_back(where + "the decoder accepts `" + choice + "`, which the row does not list");
    }
  }
  return out;
}

// Compares recorded keys with the documented `sets`, both ways, and checks each row.
void ExpectMatches(const DocTables& t, const KeyRecorder::Keys& recorded,
                   const std::vector<std::string>& sets, std::string (*set_of)(const std::string&),
                   const std::string& source) {
  std::map<std::string, std::string> actual;
  for (const auto& [key, asked] : recorded) actual[key] = set_of(key);
  std::vector<std::string> problems = CompareWithDocs(t, "YAML key", actual, sets, source);
  for (const auto& [key, asked] : recorded) {
    for (const std::string& s : sets) {
      if (const DocRow* row = t.Find(s, key)) {
        for (const std::string& p : CheckRow(*row, asked)) problems.push_back(p);
      }
    }
  }
  EXPECT_TRUE(problems.empty()) << problems.size() << " difference(s):" << JoinLines(problems);
}

TEST(DocsReference, TablesAreWellFormed) {
  const DocTables t = docs::ReadDocTables(kRepo);
  EXPECT_TRUE(t.errors.empty()) << JoinLines(t.errors);
  for (const char* set : {"experiment", "model", "cluster", "sweep", "sweep.auto", "cli",
                          "cli.subcommands", "cli.run", "summary.json", "trace.json", "results.csv",
                          "sweep.json", "bench-collective.csv", "bench-gemm.csv"}) {
    EXPECT_TRUE(t.sets.count(set)) << "no table marked <!-- reference: " << set << " --> in docs/";
  }
}

// The recorder itself, on a hand-written document: dotted keys, [] for list elements,
// kinds, required, choices; keys never asked for are not recorded.
TEST(DocsReference, RecorderRecordsWhatTheDecoderAsks) {
  const YAML::Node doc = YAML::Load(
      "a: 1\n"
      "b: {c: x, d: [{e: 2.5}, {e: 3}]}\n"
      "unread: 7\n");
  config::Sources src;
  src.file = "doc.yaml";
  KeyRecorder recorder;
  config::YamlReader r(doc, "", src);
  int a = 0;
  r.GetInt("a", &a, true);
  config::YamlReader b = r.Map("b");
  enum class C { kX, kY } c = C::kY;
  b.GetEnum<C>("c", {{"x", C::kX}, {"y", C::kY}}, &c);
  b.Skip("d");
  for (int i = 0; i < 2; ++i) {
    config::YamlReader item(doc["b"]["d"][i], b.KeyPath("d") + "[" + std::to_string(i) + "]", src);
    double e = 0;
    item.GetDouble("e", &e);
  }
  bool absent = false;
  r.GetBool("absent", &absent);

  ASSERT_EQ(recorder.by_file().size(), 1u);
  const KeyRecorder::Keys& keys = recorder.by_file().at("doc.yaml");
  std::vector<std::string> names;
  for (const auto& [key, k] : keys) names.push_back(key);
  EXPECT_EQ(names, (std::vector<std::string>{"a", "absent", "b", "b.c", "b.d", "b.d[].e"}));
  EXPECT_EQ(keys.at("a").kind, "integer");
  EXPECT_TRUE(keys.at("a").required);
  EXPECT_EQ(keys.at("absent").kind, "boolean");
  EXPECT_FALSE(keys.at("absent").required);
  EXPECT_EQ(keys.at("b").kind, "mapping");
  EXPECT_EQ(keys.at("b.c").kind, "choice");
  EXPECT_EQ(keys.at("b.c").choices, (std::vector<std::string>{"x", "y"}));
  EXPECT_FALSE(keys.at("b.c").required);  // present, but the decoder has a default
  EXPECT_EQ(keys.at("b.d").kind, "");     // skipped: read by hand
  EXPECT_EQ(keys.at("b.d[].e").kind, "number");
}

TEST(DocsReference, NothingIsRecordedWithoutARecorder) {
  const YAML::Node doc = YAML::Load("a: 1\n");
  config::Sources src;
  src.file = "doc.yaml";
  {
    config::YamlReader r(doc, "", src);
    int a = 0;
    r.GetInt("a", &a);
  }
  KeyRecorder recorder;
  EXPECT_TRUE(recorder.by_file().empty());
  EXPECT_EQ(KeyRecorder::Active(), &recorder);
}

TEST(DocsReference, ExperimentKeysMatchTheDecoders) {
  const DocTables t = docs::ReadDocTables(kRepo);
  KeyRecorder recorder;
  std::vector<std::string> files = YamlFiles("workloads/experiments");
  files.push_back((kRepo / "docs/examples/every-key.yaml").string());
  files.push_back((kRepo / "docs/examples/every-jax-key.yaml").string());
  for (const std::string& file : files) {
    const Result<Experiment> e = LoadExperimentFile(file);
    ASSERT_TRUE(e.ok()) << e.error().ToString();
  }
  ExpectMatches(t, recorder.All(), kExperimentSets, ExperimentSet,
                "what the experiment, model and cluster decoders read");
}

TEST(DocsReference, SweepKeysMatchTheSweepLoader) {
  const DocTables t = docs::ReadDocTables(kRepo);
  std::vector<std::string> files = YamlFiles("workloads/sweeps");
  files.push_back((kRepo / "docs/examples/every-key-sweep.yaml").string());
  KeyRecorder::Keys sweep_keys;
  std::vector<std::string> problems;
  for (const std::string& file : files) {
    KeyRecorder recorder;
    const Result<SweepSpec> spec = LoadSweepFile(file);
    ASSERT_TRUE(spec.ok()) << spec.error().ToString();
    const KeyRecorder::Keys& keys = recorder.by_file().at(file);
    if (YAML::LoadFile(file)["base"].IsMap()) {
      // An inline base is read from the sweep file too: its keys are the experiment's.
      for (const auto& [key, asked] : keys) {
        if (!t.Find("sweep", key) && !t.Find(ExperimentSet(key), key)) {
          problems.push_back(file + ": YAML key `" + key +
                             "` is not documented: add it to the experiment, model or cluster "
                             "table of docs/yaml.md");
        }
      }
    } else {
      sweep_keys.insert(keys.begin(), keys.end());
    }
  }
  EXPECT_TRUE(problems.empty()) << JoinLines(problems);
  ExpectMatches(
      t, sweep_keys, {"sweep"}, [](const std::string&) { return std::string("sweep"); },
      "what the sweep loader reads");
}

TEST(DocsReference, AutoKeysMatchTheSweepEnumerator) {
  const DocTables t = docs::ReadDocTables(kRepo);
  std::map<std::string, std::string> actual;
  for (const std::string& key : AutoKeys()) actual[key] = "sweep.auto";
  const std::vector<std::string> problems = CompareWithDocs(
      t, "sweep key with auto", actual, {"sweep.auto"}, "AutoKeys() of sim/sweep/enumerate.cc");
  EXPECT_TRUE(problems.empty()) << JoinLines(problems);
}

}  // namespace
}  // namespace meshsim

// The command-line and output references (docs/cli.md, docs/outputs.md) against the
// program as a user runs it: every option that `meshsim SUBCOMMAND --help` prints is
// documented and every documented one exists; every key of the summary and trace of a
// run of docs/examples/every-key.yaml, every column of results.csv and every key of
// sweep.json of docs/examples/every-key-sweep.yaml, and every column of
// `bench-collective --csv` is documented, and every documented one is written. The YAML
// keys are checked against the decoders in tests/unit/docs_reference_test.cc.
#include "tests/docs_reference.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/e2e/meshsim_runner.h"

namespace {

namespace fs = std::filesystem;
using meshsim::docs::CompareWithDocs;
using meshsim::docs::DocTables;
using meshsim::docs::JoinLines;
using namespace meshsim::e2e;

DocTables Docs() { return meshsim::docs::ReadDocTables(MESHSIM_SOURCE_DIR); }

// The help's sections ("Options:", "Positionals:", "Subcommands:") -> the first word of
// each of their entries ("-o,--outdir", "experiment", "run").
std::map<std::string, std::vector<std::string>> HelpSections(const std::string& help) {
  std::map<std::string, std::vector<std::string>> sections;
  std::string section;
  std::istringstream in(help);
  static const std::regex heading(R"(^([A-Z][A-Za-z ]*):\s*$)");
  static const std::regex entry(R"(^  (\S+))");
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_match(line, m, heading)) {
      section = m[1];
    } else if (line.empty() || line[0] != ' ') {
      section.clear();  // a footer or the usage line
    } else if (!section.empty() && std::regex_search(line, m, entry)) {
      sections[section].push_back(m[1]);
    }
  }
  return sections;
}

// Checks `meshsim PATH --help` against the table cli.PATH, then its subcommands.
void CheckCommand(const std::vector<std::string>& path, const DocTables& docs,
                  const fs::path& scratch, std::map<std::string, std::string>* subcommands,
                  std::vector<std::string>* problems) {
  std::vector<std::string> args = path;
  args.push_back("--help");
  const RunResult r = RunMeshsim(args, scratch);
  std::string name;
  for (const std::string& p : path) name += (name.empty() ? "" : " ") + p;
  ASSERT_EQ(r.exit_code, 0) << "meshsim " << name << " --help: " << r.err;
  auto sections = HelpSections(r.out);
  ASSERT_TRUE(sections.count("Options")) << "meshsim " << name << " --help:\n" << r.out;
  const std::string set = path.empty() ? "cli" : "cli." + name;
  std::map<std::string, std::string> options;
  for (const char* section : {"Options", "Positionals"}) {
    for (const std::string& o : sections[section]) {
      // Every subcommand has -h,--help; it is documented once, with the global options.
      if (!path.empty() && o == "-h,--help") continue;
      options[o] = set;
    }
  }
  const std::string what = path.empty() ? "global option" : "option of `meshsim " + name + "`";
  for (const std::string& p :
       CompareWithDocs(docs, what, options, {set}, "`meshsim " + name + " --help`")) {
    problems->push_back(p);
  }
  for (const std::string& sub : sections["Subcommands"]) {
    std::vector<std::string> sub_path = path;
    sub_path.push_back(sub);
    (*subcommands)[name.empty() ? sub : name + " " + sub] = "cli.subcommands";
    CheckCommand(sub_path, docs, scratch, subcommands, problems);
  }
}

TEST(DocsReference, CliOptionsMatchTheHelp) {
  TempDir dir;
  const DocTables docs = Docs();
  std::map<std::string, std::string> subcommands;
  std::vector<std::string> problems;
  CheckCommand({}, docs, dir.path(), &subcommands, &problems);
  EXPECT_GE(subcommands.size(), 9u);  // run ... plan, import, import hf, import megatron
  for (const std::string& p :
       CompareWithDocs(docs, "subcommand", subcommands, {"cli.subcommands"}, "`meshsim --help`")) {
    problems.push_back(p);
  }
  EXPECT_TRUE(problems.empty()) << problems.size() << " difference(s):" << JoinLines(problems);
}

// Every key of `j`, dotted, with [] for list elements: key -> its JSON type as the docs
// name types (string, integer, number, boolean, object, list).
void Walk(const nlohmann::json& j, const std::string& prefix,
          std::map<std::string, std::set<std::string>>* keys) {
  if (j.is_array()) {
    for (const auto& element : j) Walk(element, prefix + "[]", keys);
    return;
  }
  if (!j.is_object()) return;
  for (const auto& [key, value] : j.items()) {
    const std::string path = prefix.empty() ? key : prefix + "." + key;
    const std::string type = value.is_string()           ? "string"
                             : value.is_boolean()        ? "boolean"
                             : value.is_number_integer() ? "integer"
                             : value.is_number()         ? "number"
                             : value.is_object()         ? "object"
                             : value.is_array()          ? "list"
                                                         : "null";
    (*keys)[path].insert(type);
    Walk(value, path, keys);
  }
}

// Compares the keys of a JSON file with the table `set`, both ways, and each key's type
// with the type column (an integer may be documented as a number).
void ExpectJsonMatches(const fs::path& file, const std::string& set, const std::string& source,
                       const DocTables& docs) {
  ASSERT_TRUE(fs::exists(file)) << file;
  const nlohmann::json j = nlohmann::json::parse(ReadFile(file));
  std::map<std::string, std::set<std::string>> keys;
  Walk(j, "", &keys);
  std::map<std::string, std::string> actual;
  for (const auto& [key, types] : keys) actual[key] = set;
  std::vector<std::string> problems = CompareWithDocs(docs, set + " key", actual, {set}, source);
  for (const auto& [key, types] : keys) {
    const meshsim::docs::DocRow* row = docs.Find(set, key);
    if (!row || row->cells.size() < 2) continue;
    const std::string documented = row->cells[1];
    for (const std::string& type : types) {
      const bool ok = documented == type || (type == "integer" && documented == "number");
      if (!ok) {
        problems.push_back(row->file + ":" + std::to_string(row->line) + ": " + set + " key `" +
                           key + "` is written as " + type + ", but the type column says '" +
                           documented + "'");
      }
    }
  }
  EXPECT_TRUE(problems.empty()) << problems.size() << " difference(s):" << JoinLines(problems);
}

class DocsReferenceRun : public ::testing::Test {
 protected:
  void SetUp() override {
    const RunResult r = RunMeshsim({"run", SourcePath("docs/examples/every-key.yaml").string(),
                                    "-o", dir_.path().string(), "--reproducible"},
                                   dir_.path());
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  TempDir dir_;
};

TEST_F(DocsReferenceRun, SummaryKeysMatchTheDocs) {
  ExpectJsonMatches(dir_.path() / "summary.json", "summary.json",
                    "the summary.json of docs/examples/every-key.yaml", Docs());
}

TEST_F(DocsReferenceRun, TraceKeysMatchTheDocs) {
  ExpectJsonMatches(dir_.path() / "trace.json", "trace.json",
                    "the trace.json of docs/examples/every-key.yaml", Docs());
}

std::vector<std::string> CsvHeader(const std::string& text) {
  std::vector<std::string> cells;
  std::istringstream in(text.substr(0, text.find('\n')));
  for (std::string cell; std::getline(in, cell, ',');) cells.push_back(cell);
  return cells;
}

TEST(DocsReference, SweepOutputsMatchTheDocs) {
  TempDir dir;
  const fs::path out = dir.path() / "sweep";
  const RunResult r =
      RunMeshsim({"sweep", SourcePath("docs/examples/every-key-sweep.yaml").string(), "-o",
                  out.string(), "-j", "2"},
                 dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const DocTables docs = Docs();
  const std::vector<std::string> header = CsvHeader(ReadFile(out / "results.csv"));
  // The sweep's one axis that is not a plan column gets a column of its own, documented
  // as `<axis>`.
  ASSERT_NE(std::find(header.begin(), header.end(), "training.dtype"), header.end());
  std::map<std::string, std::string> columns;
  for (const std::string& c : header) {
    columns[c == "training.dtype" ? "<axis>" : c] = "results.csv";
  }
  EXPECT_EQ(columns.size(), header.size()) << "a column appears twice";
  const std::vector<std::string> problems =
      CompareWithDocs(docs, "results.csv column", columns, {"results.csv"},
                      "the results.csv of docs/examples/every-key-sweep.yaml");
  EXPECT_TRUE(problems.empty()) << problems.size() << " difference(s):" << JoinLines(problems);
  EXPECT_EQ(CsvHeader(ReadFile(out / "pareto.csv")), header) << "pareto.csv has other columns";
  ExpectJsonMatches(out / "sweep.json", "sweep.json",
                    "the sweep.json of docs/examples/every-key-sweep.yaml", docs);
}

TEST(DocsReference, BenchCollectiveCsvColumnsMatchTheDocs) {
  TempDir dir;
  const RunResult r = RunMeshsim(
      {"bench-collective", "--cluster", SourcePath("topologies/selene-a100.yaml").string(), "--op",
       "all_reduce", "--gpus", "2", "--max-bytes", "64", "--csv"},
      dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, std::string> columns;
  for (const std::string& c : CsvHeader(r.out)) columns[c] = "bench-collective.csv";
  const std::vector<std::string> problems =
      CompareWithDocs(Docs(), "bench-collective --csv column", columns, {"bench-collective.csv"},
                      "the output of meshsim bench-collective --csv");
  EXPECT_TRUE(problems.empty()) << problems.size() << " difference(s):" << JoinLines(problems);
}

TEST(DocsReference, BenchGemmCsvColumnsMatchTheDocs) {
  TempDir dir;
  const RunResult r =
      RunMeshsim({"bench-gemm", "--cluster", SourcePath("topologies/dgx-b200.yaml").string(),
                  "--shape", "4096x4096x4096", "--csv"},
                 dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, std::string> columns;
  for (const std::string& c : CsvHeader(r.out)) columns[c] = "bench-gemm.csv";
  const std::vector<std::string> problems =
      CompareWithDocs(Docs(), "bench-gemm --csv column", columns, {"bench-gemm.csv"},
                      "the output of meshsim bench-gemm --csv");
  EXPECT_TRUE(problems.empty()) << problems.size() << " difference(s):" << JoinLines(problems);
}

}  // namespace

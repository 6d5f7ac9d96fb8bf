// End-to-end tests of bad input: each runs the meshsim executable on a small experiment
// written into a fresh temporary folder and checks SPEC.md's promise: exit code 2, one
// clear message on stderr naming the file, the line (where there is one) and the dotted
// key, and no output files.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "tests/e2e/meshsim_runner.h"

namespace {

namespace fs = std::filesystem;
using namespace meshsim::e2e;

// 1-based number of the first line of `text` containing `needle`; 0 if none does.
int LineOf(const std::string& text, const std::string& needle) {
  std::istringstream in(text);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.find(needle) != std::string::npos) return n;
  }
  return 0;
}

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << "'" << from << "' not in the template";
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

// A valid experiment (the default one, with absolute paths): 16 GPUs, tp 2 x pp 4 x dp 2.
std::string ValidExperiment() {
  return "name: bad\n"
         "model: " +
         SourcePath("workloads/models/llama2-7b.yaml").string() +
         "\n"
         "cluster: " +
         SourcePath("topologies/dgx-h100.yaml").string() +
         "\n"
         "cluster_overrides: {nodes: 2}\n"
         "plan:\n"
         "  tp: 2\n"
         "  pp: 4\n"
         "  dp: 2\n"
         "  global_batch: 32\n"
         "  schedule: 1f1b\n";
}

class CliErrors : public ::testing::Test {
 protected:
  fs::path experiment() const { return dir_.path() / "bad.yaml"; }
  fs::path outdir() const { return dir_.path() / "out"; }

  // Writes `text` as bad.yaml and runs `meshsim run bad.yaml -o OUT extra...`.
  RunResult RunText(const std::string& text, const std::vector<std::string>& extra = {}) {
    WriteFile(experiment(), text);
    return RunFile(experiment(), extra);
  }
  RunResult RunFile(const fs::path& file, const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {"run", file.string(), "-o", outdir().string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return RunMeshsim(args, dir_.path());
  }

  // SPEC: exit 2, one message on stderr, no output files.
  void ExpectBadInput(const RunResult& r) const {
    EXPECT_EQ(r.exit_code, 2) << "stderr: " << r.err;
    EXPECT_EQ(r.err.rfind("meshsim: error: ", 0), 0u) << "stderr: " << r.err;
    ASSERT_FALSE(r.err.empty());
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "expected exactly one line: " << r.err;
    EXPECT_EQ(r.err.find("terminate"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r.err;
    ExpectNoOutput();
  }
  void ExpectNoOutput() const {
    EXPECT_TRUE(!fs::exists(outdir()) || fs::is_empty(outdir()))
        << "a failed run left files in " << outdir();
  }
  // "bad.yaml:LINE:" must appear in the message.
  void ExpectFileAndLine(const RunResult& r, int line) const {
    ASSERT_GT(line, 0);
    const std::string where = experiment().filename().string() + ":" + std::to_string(line) + ":";
    EXPECT_NE(r.err.find(where), std::string::npos) << "expected '" << where << "' in: " << r.err;
  }
  // The line number the message reports for bad.yaml; 0 when there is none.
  int ReportedLine(const RunResult& r) const {
    std::smatch m;
    return std::regex_search(r.err, m, std::regex(R"(bad\.yaml:([0-9]+):)")) ? std::stoi(m[1]) : 0;
  }

  TempDir dir_;
};

void ExpectContains(const std::string& haystack, const std::string& needle) {
  EXPECT_NE(haystack.find(needle), std::string::npos)
      << "expected '" << needle << "' in: " << haystack;
}

TEST_F(CliErrors, YamlSyntaxErrorNamesTheLine) {
  const std::string text = Replace(ValidExperiment(), "  pp: 4\n", "   pp: 4\n");
  const RunResult r = RunText(text);
  ExpectBadInput(r);
  ExpectFileAndLine(r, LineOf(text, "   pp: 4"));
  ExpectContains(r.err, "syntax error");
}

TEST_F(CliErrors, UnclosedFlowListNamesALineInTheFile) {
  const std::string text = Replace(ValidExperiment(), "  tp: 2\n", "  tp: [2\n");
  const RunResult r = RunText(text);
  ExpectBadInput(r);
  EXPECT_GE(ReportedLine(r), LineOf(text, "tp: [2")) << r.err;
  ExpectContains(r.err, "syntax error");
}

TEST_F(CliErrors, WrongTypeNamesKeyAndExpectedType) {
  const std::string text = Replace(ValidExperiment(), "  tp: 2\n", "  tp: four\n");
  const RunResult r = RunText(text);
  ExpectBadInput(r);
  ExpectFileAndLine(r, LineOf(text, "tp: four"));
  ExpectContains(r.err, "plan.tp");
  ExpectContains(r.err, "expected an integer");
  ExpectContains(r.err, "four");
}

// plan.stage_layers: a bad list names its entry, with the entry's line and column.
TEST_F(CliErrors, BadStageLayersNameTheEntry) {
  // llama2-7b has 32 layers over pp 4.
  struct Case {
    const char* list;
    const char* message;
  } cases[] = {
      {"[8, 8, 8, 8, 0]", "bad.yaml:8:30: plan.stage_layers[4]: expected pp = 4 entries, found 5"},
      {"[8, 8, 16]", "bad.yaml:8:24: plan.stage_layers[2]: expected pp = 4 entries, found 3"},
      {"[8, -8, 24, 8]", "bad.yaml:8:21: plan.stage_layers[1]: expected a number of layers >= 0"},
      {"[8, 8, 8, 7]",
       "bad.yaml:8:27: plan.stage_layers[3]: the entries sum to 31, fewer than "
       "the model's layers = 32"},
  };
  for (const Case& c : cases) {
    const std::string text = Replace(ValidExperiment(), "  pp: 4\n",
                                     std::string("  pp: 4\n  stage_layers: ") + c.list + "\n");
    const RunResult r = RunText(text);
    ExpectBadInput(r);
    ASSERT_EQ(LineOf(text, "stage_layers"), 8);
    ExpectContains(r.err, c.message);
  }
  // An uneven list that sums to the layers runs.
  const RunResult ok =
      RunText(Replace(ValidExperiment(), "  pp: 4\n", "  pp: 4\n  stage_layers: [7, 9, 9, 7]\n"),
              {"--no-trace"});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
}

TEST_F(CliErrors, UnknownKeyNamesTheDottedKey) {
  const std::string text = Replace(ValidExperiment(), "  pp: 4\n", "  pp: 4\n  tpp: 4\n");
  const RunResult r = RunText(text);
  ExpectBadInput(r);
  ExpectFileAndLine(r, LineOf(text, "tpp: 4"));
  ExpectContains(r.err, "plan.tpp");
  ExpectContains(r.err, "unknown key");
}

TEST_F(CliErrors, UnknownTopLevelKeyNamesTheLine) {
  const std::string text = ValidExperiment() + "trainng:\n  dtype: bf16\n";
  const RunResult r = RunText(text);
  ExpectBadInput(r);
  ExpectFileAndLine(r, LineOf(text, "trainng:"));
  ExpectContains(r.err, "trainng");
}

TEST_F(CliErrors, UnknownKeyInClusterOverridesNamesTheLine) {
  const std::string text = Replace(ValidExperiment(), "{nodes: 2}", "{nodes: 2, nodez: 3}");
  const RunResult r = RunText(text);
  ExpectBadInput(r);
  ExpectFileAndLine(r, LineOf(text, "nodez"));
  ExpectContains(r.err, "cluster.nodez");
}

// More NICs than GPUs must be a whole number per GPU (docs/yaml.md, inter_node.nics_per_node).
TEST_F(CliErrors, NicsThatGpusCannotShareEvenlyNameTheKey) {
  const std::string text =
      Replace(ValidExperiment(), "cluster_overrides: {nodes: 2}",
              "cluster_overrides: {nodes: 2, inter_node: {nics_per_node: 12}}");
  const RunResult r = RunText(text);
  ExpectBadInput(r);
  ExpectContains(r.err, "inter_node.nics_per_node");
  ExpectContains(r.err, "multiple");
  ExpectContains(r.err, "12");
  ExpectFileAndLine(r, LineOf(text, "nics_per_node"));
}

TEST_F(CliErrors, MissingModelFileNamesKeyAndPath) {
  const std::string text = "name: bad\nmodel: does-not-exist.yaml\n" +
                           ValidExperiment().substr(ValidExperiment().find("cluster:"));
  const RunResult r = RunText(text);
  ExpectBadInput(r);
  ExpectFileAndLine(r, LineOf(text, "model:"));
  ExpectContains(r.err, "model");
  ExpectContains(r.err, "does-not-exist.yaml");
  ExpectContains(r.err, "not found");
}

TEST_F(CliErrors, TpNotDividingHeadsShowsBothNumbers) {
  const std::string text =
      "name: bad\n"
      "model:\n"
      "  name: tiny\n"
      "  layers: 4\n"
      "  hidden: 768\n"
      "  heads: 12\n"
      "  ffn_hidden: 3072\n"
      "  vocab: 1000\n"
      "  seq_len: 512\n"
      "cluster: " +
      SourcePath("topologies/dgx-h100.yaml").string() +
      "\n"
      "cluster_overrides: {nodes: 2}\n"
      "plan:\n"
      "  tp: 8\n"
      "  pp: 1\n"
      "  dp: 2\n"
      "  global_batch: 32\n";
  const RunResult r = RunText(text);
  ExpectBadInput(r);
  ExpectFileAndLine(r, LineOf(text, "tp: 8"));
  // tp 8 against the model's 12 heads, both numbers in the message.
  ExpectContains(r.err, "plan.tp: tp = 8 does not divide the model's heads = 12");
}

TEST_F(CliErrors, GpuCountMismatchShowsTheNumbers) {
  const std::string text = Replace(ValidExperiment(), "  tp: 2\n", "  tp: 1\n");
  const RunResult r = RunText(text);
  ExpectBadInput(r);
  // tp 1 x pp 4 x dp 2 x cp 1 = 8 GPUs against 2 nodes of 8 = 16.
  ExpectContains(r.err,
                 "plan: tp*pp*dp*cp = 1*4*2*1 = 8 but the cluster has 16 GPUs "
                 "(nodes 2 x gpus_per_node 8)");
  const int line = ReportedLine(r);
  EXPECT_GE(line, LineOf(text, "plan:")) << r.err;
  EXPECT_LE(line, LineOf(text, "schedule:")) << r.err;
}

TEST_F(CliErrors, IndivisibleBatchNamesGlobalBatch) {
  const std::string text = Replace(ValidExperiment(), "global_batch: 32", "global_batch: 31");
  const RunResult r = RunText(text);
  ExpectBadInput(r);
  ExpectFileAndLine(r, LineOf(text, "global_batch: 31"));
  // 31 sequences over dp 2 with micro-batch 1.
  ExpectContains(r.err,
                 "plan.global_batch: global_batch = 31 is not divisible by micro_batch*dp = "
                 "1*2 = 2");
}

TEST_F(CliErrors, BadSetOverrideNamesTheSetArgument) {
  const RunResult r = RunText(ValidExperiment(), {"--set", "plan.tp=abc"});
  ExpectBadInput(r);
  ExpectContains(r.err, "--set");
  ExpectContains(r.err, "plan.tp");
  ExpectContains(r.err, "expected an integer");
  ExpectContains(r.err, "abc");
}

TEST_F(CliErrors, SetWithoutAValueIsRejected) {
  const RunResult r = RunText(ValidExperiment(), {"--set", "plan.tp"});
  ExpectBadInput(r);
  ExpectContains(r.err, "--set");
  ExpectContains(r.err, "KEY=VALUE");
}

TEST_F(CliErrors, UnknownKeyInSetIsRejected) {
  const RunResult r = RunText(ValidExperiment(), {"--set", "plan.tpp=3"});
  ExpectBadInput(r);
  ExpectContains(r.err, "--set");
  ExpectContains(r.err, "plan.tpp");
  ExpectContains(r.err, "unknown key");
}

TEST_F(CliErrors, WrongEnumValueListsTheChoices) {
  const std::string text = Replace(ValidExperiment(), "schedule: 1f1b", "schedule: zigzag");
  const RunResult r = RunText(text);
  ExpectBadInput(r);
  ExpectFileAndLine(r, LineOf(text, "zigzag"));
  ExpectContains(r.err, "plan.schedule");
  ExpectContains(r.err, "zigzag");
  for (const char* choice : {"gpipe", "1f1b", "interleaved"}) ExpectContains(r.err, choice);
}

TEST_F(CliErrors, MissingExperimentFileNamesIt) {
  const fs::path missing = dir_.path() / "no-such-experiment.yaml";
  const RunResult r = RunFile(missing);
  ExpectBadInput(r);
  ExpectContains(r.err, missing.string());
}

TEST_F(CliErrors, BadTraceRanksAreRejectedBeforeAnyOutput) {
  const RunResult r = RunText(ValidExperiment(), {"--trace-ranks", "0,99"});
  ExpectBadInput(r);
  // 16 GPUs: ranks 0..15.
  ExpectContains(r.err, "--trace-ranks: rank range '99' is outside 0..15");
}

TEST_F(CliErrors, UnknownRunOptionExitsWithBadInput) {
  const RunResult r = RunFile(SourcePath("workloads/experiments/default.yaml"), {"--bogus"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  ExpectContains(r.err, "--bogus");
  ExpectNoOutput();
}

TEST(Cli, ValidateAcceptsEveryBundledExperiment) {
  TempDir dir;
  int checked = 0;
  for (const auto& entry : fs::directory_iterator(SourcePath("workloads/experiments"))) {
    if (entry.path().extension() != ".yaml") continue;
    const RunResult r = RunMeshsim({"validate", entry.path().string()}, dir.path());
    EXPECT_EQ(r.exit_code, 0) << entry.path() << ": " << r.err;
    EXPECT_EQ(r.out.rfind("ok: ", 0), 0u) << entry.path() << ": " << r.out;
    ++checked;
  }
  // default, gpt-1t-3072, llama2-70b-h100, llama2-7b-fsdp, llama2-7b-jax,
  // llama3-405b-128k-cp16, llama3-405b-pp16, mixtral-8x7b-ep8, llama3-70b-fp8-h100,
  // llama3-70b-mxfp8-gb200, the 8 calibration runs (gpt3-175b and korthikanti-22b, -530b,
  // -1t, each -full and -selective), the 9 public H100 rows (public-h100-megatron-*) and
  // maxtext-32b-v5p-128 (a TPU slice), the hybrid nemotron-h-8b-h100 and
  // nemotron-3-nano-b200, and the 68 rows of the other public data sets
  // (scripts/validation_data.py: h100-fp8 17, h100-automodel 7, b200-fp8 7, b200-bf16 1,
  // b200-hybrid 1 more, gb200-fp8 10, gb200-bf16 3, gb200-hybrid 2, b300 7, gb300 14), and
  // the H100 Nano row's public-h100-bridge-nemotron-3-nano (in no data set yet): 100 files.
  EXPECT_EQ(checked, 100);
}

TEST(Cli, VersionPrintsAVersion) {
  TempDir dir;
  const RunResult r = RunMeshsim({"--version"}, dir.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(meshsim [0-9]+\.[0-9]+\.[0-9]+)"))) << r.out;
}

TEST(Cli, NoSubcommandExitsWithBadInput) {
  TempDir dir;
  const RunResult r = RunMeshsim({}, dir.path());
  EXPECT_EQ(r.exit_code, 2) << r.err;
}

}  // namespace

// End-to-end tests of the hardening issue's input handling: names that would steer
// outputs out of their folder, I/O failures (exit 4, not "bad input"), duplicate keys,
// --set errors attributed to the --set argument, sweep messages that say what happened,
// and the planner's --set, --headroom and file checks.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/e2e/meshsim_runner.h"

namespace {

namespace fs = std::filesystem;
using namespace meshsim::e2e;

void ExpectContains(const std::string& haystack, const std::string& needle) {
  EXPECT_NE(haystack.find(needle), std::string::npos)
      << "expected '" << needle << "' in: " << haystack;
}

// The default experiment's content with absolute paths and `name`.
std::string Experiment(const std::string& name, const std::string& extra_plan = "") {
  return "name: " + name + "\nmodel: " + SourcePath("workloads/models/llama2-7b.yaml").string() +
         "\ncluster: " + SourcePath("topologies/dgx-h100.yaml").string() +
         "\ncluster_overrides: {nodes: 2, network_model: alpha_beta}\n"
         "plan:\n  tp: 2\n  pp: 4\n  dp: 2\n  global_batch: 32\n" +
         extra_plan;
}

std::string Sweep(const std::string& name, const std::string& axes) {
  return "name: " + name + "\nbase: " + SourcePath("workloads/experiments/default.yaml").string() +
         "\naxes:\n" + axes;
}

class Hardening : public ::testing::Test {
 protected:
  fs::path Write(const std::string& file, const std::string& text) {
    WriteFile(dir_.path() / file, text);
    return dir_.path() / file;
  }
  // Runs meshsim in the temp folder (so that default output folders land there).
  RunResult Meshsim(std::vector<std::string> args) {
    const fs::path cwd = fs::current_path();
    fs::current_path(dir_.path());
    RunResult r = RunMeshsim(args, dir_.path());
    fs::current_path(cwd);
    return r;
  }
  // Every file under the temp folder but the captured stdout/stderr.
  std::vector<std::string> Files() const {
    std::vector<std::string> files;
    for (const auto& e : fs::recursive_directory_iterator(dir_.path())) {
      const std::string name = e.path().filename().string();
      if (e.is_regular_file() && name != "stdout.txt" && name != "stderr.txt" &&
          e.path().extension() != ".yaml") {
        files.push_back(fs::relative(e.path(), dir_.path()).string());
      }
    }
    return files;
  }
  TempDir dir_;
};

// Item 1: an experiment or sweep name becomes a folder; "../../x" would leave results/.
TEST_F(Hardening, ExperimentNameThatLeavesItsFolderIsRefused) {
  const fs::path e = Write("e.yaml", Experiment("../../escaped"));
  const RunResult r = Meshsim({"run", e.string(), "--no-trace"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  ExpectContains(r.err, "e.yaml:1:7: name: expected a name usable as a folder name");
  ExpectContains(r.err, "found '../../escaped'");
  EXPECT_TRUE(Files().empty());
  EXPECT_FALSE(fs::exists(dir_.path().parent_path().parent_path() / "escaped"));
}

TEST_F(Hardening, NameSetOnTheCommandLineIsCheckedToo) {
  const fs::path e = Write("e.yaml", Experiment("fine"));
  for (const std::string name : {"/tmp/abs", "..", ".hidden", "a/b", "a b"}) {
    const RunResult r = Meshsim({"run", e.string(), "--no-trace", "--set", "name=" + name});
    EXPECT_EQ(r.exit_code, 2) << name << ": " << r.err;
    ExpectContains(r.err, "--set name=" + name + ": name: expected a name usable as a folder");
  }
  EXPECT_TRUE(Files().empty());
}

TEST_F(Hardening, SweepNameThatLeavesItsFolderIsRefused) {
  const fs::path s = Write("s.yaml", Sweep("../up", "  plan.zero: [0, 1]\n"));
  const RunResult r = Meshsim({"sweep", s.string(), "-q"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  ExpectContains(r.err, "s.yaml:1:7: name: expected a name usable as a folder name");
  EXPECT_TRUE(Files().empty());
}

// Item 3: the host failing a write is exit 4 with the path and the reason.
TEST_F(Hardening, UnwritableOutputFolderIsAnIoErrorNotBadInput) {
  const fs::path e = Write("e.yaml", Experiment("io"));
  Write("blocker", "a regular file where a folder should be\n");
  const RunResult r = Meshsim({"run", e.string(), "-o", (dir_.path() / "blocker/out").string()});
  EXPECT_EQ(r.exit_code, 4) << r.err;
  ExpectContains(r.err, "meshsim: error: ");
  ExpectContains(r.err, "blocker/out");
  ExpectContains(r.err, "Not a directory");
}

TEST_F(Hardening, UnwritableSweepFolderIsAnIoError) {
  const fs::path s = Write("s.yaml", Sweep("io", "  plan.zero: [0, 1]\n"));
  Write("blocker", "x\n");
  const RunResult r =
      Meshsim({"sweep", s.string(), "-q", "-o", (dir_.path() / "blocker").string()});
  EXPECT_EQ(r.exit_code, 4) << r.err;
  ExpectContains(r.err, "cannot create the output folder");
}

TEST_F(Hardening, FailedWriteLeavesNoTemporaryFile) {
  const fs::path e = Write("e.yaml", Experiment("io"));
  fs::create_directories(dir_.path() / "out" / "summary.json");  // a folder: rename fails
  const RunResult r = Meshsim({"run", e.string(), "--no-trace", "-o", "out"});
  EXPECT_EQ(r.exit_code, 4) << r.err;
  ExpectContains(r.err, "summary.json");
  EXPECT_FALSE(fs::exists(dir_.path() / "out" / "summary.json.tmp"));
}

// Item 4: a repeated key is an error naming the key and both lines.
TEST_F(Hardening, DuplicateKeyNamesBothLines) {
  // Lines: 1 name, 2 model, 3 cluster, 4 cluster_overrides, 5 plan, 6 tp, 7 pp, 8 dp,
  // 9 global_batch, 10 the repeated tp.
  const fs::path e = Write("e.yaml", Experiment("dup", "  tp: 4\n"));
  const RunResult r = Meshsim({"validate", e.string()});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  ExpectContains(r.err, "e.yaml:10:3: plan.tp: duplicate key (first at line 6)");
}

TEST_F(Hardening, DuplicateKeyInASetValueIsNamedThere) {
  const fs::path e = Write("e.yaml", Experiment("dup"));
  const RunResult r = Meshsim({"validate", e.string(), "--set", "plan={tp: 2, tp: 4}"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  ExpectContains(r.err, "--set plan={tp: 2, tp: 4}: tp: duplicate key");
}

TEST_F(Hardening, DuplicateKeyInASweepIsAnError) {
  const fs::path s = Write("s.yaml", Sweep("dup", "  plan.zero: [0, 1]\n  plan.zero: [2]\n"));
  const RunResult r = Meshsim({"sweep", s.string(), "-q"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  ExpectContains(r.err, "s.yaml:5:3: axes.plan.zero: duplicate key (first at line 4)");
}

// Item 7: an error inside a --set value names the --set argument, not a line of a file
// the user never wrote.
TEST_F(Hardening, ErrorInsideASetValueNamesTheSetArgument) {
  const fs::path e = Write("e.yaml", Experiment("set"));
  const std::string arg = "cluster.what_if={links: [{link: node9.nic3, failed: true}]}";
  const RunResult r = Meshsim({"validate", e.string(), "--set", arg});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err.rfind("meshsim: error: --set " + arg +
                            ": cluster.what_if.links[0].link: "
                            "no link named 'node9.nic3'",
                        0),
            0u)
      << r.err;
  EXPECT_EQ(r.err.find("dgx-h100.yaml"), std::string::npos) << r.err;
}

TEST_F(Hardening, MissingKeyUnderAReplacedMappingNamesTheSetArgument) {
  const fs::path e = Write("e.yaml", Experiment("set"));
  const RunResult r = Meshsim({"validate", e.string(), "--set", "plan={tp: 2, pp: 4, dp: 2}"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  ExpectContains(r.err, "--set plan={tp: 2, pp: 4, dp: 2}: plan.global_batch: required key");
}

// Item 9: sweep messages say what happened.
TEST_F(Hardening, EmptyAxesSayTheyAreEmpty) {
  const fs::path s = Write(
      "s.yaml", "name: e\nbase: " + SourcePath("workloads/experiments/default.yaml").string() +
                    "\naxes: {}\n");
  const RunResult r = Meshsim({"sweep", s.string(), "-q"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  ExpectContains(r.err, "s.yaml:3:7: axes: expected at least one axis");
  ExpectContains(r.err, "found an empty mapping");
}

TEST_F(Hardening, AutoOnAnUnknownKeySaysUnknownKey) {
  const fs::path s = Write("s.yaml", Sweep("u", "  plan.ppp: auto\n"));
  const RunResult r = Meshsim({"sweep", s.string(), "-q"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  ExpectContains(r.err, "s.yaml:4:3: axes.plan.ppp: unknown key");
}

TEST_F(Hardening, AllInvalidSweepSaysNoneIsValid) {
  // tp 3 and 5 divide neither the 32 heads nor the 16 GPUs.
  const fs::path s = Write("s.yaml", Sweep("inv", "  plan.tp: [3, 5]\n"));
  const RunResult r = Meshsim({"sweep", s.string(), "-q", "-o", "out"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  ExpectContains(r.out, "No configuration is valid: all 2 are invalid (e.g. plan.dp: dp = gpus");
  EXPECT_EQ(r.out.find("fits in memory"), std::string::npos) << r.out;
}

TEST_F(Hardening, ResumeWithNothingToResumeSaysItStartsAfresh) {
  const fs::path s = Write("s.yaml", Sweep("r", "  plan.tp: [3]\n"));
  const RunResult r = Meshsim({"sweep", s.string(), "-o", "fresh", "--resume"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  ExpectContains(r.err, "--resume: fresh/results.csv does not exist; starting the sweep afresh");
}

// Item 11: an interleaved schedule with one chunk per stage is 1F1B under another name.
TEST_F(Hardening, InterleavedWithOneChunkIsRefused) {
  const fs::path e = Write("e.yaml", Experiment("il", "  schedule: interleaved\n"));
  const RunResult r = Meshsim({"validate", e.string()});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  ExpectContains(r.err, "plan.virtual_stages: the interleaved schedule needs virtual_stages >= 2");
  const RunResult two = Meshsim({"validate", e.string(), "--set", "plan.virtual_stages=2"});
  EXPECT_EQ(two.exit_code, 0) << two.err;
}

// Item 11: the parameter count is printed as the planner prints it.
TEST_F(Hardening, RunPrintsParametersInBillionsWithTwoDecimals) {
  const RunResult r =
      Meshsim({"run", SourcePath("workloads/experiments/gpt-1t-3072.yaml").string(), "--no-trace",
               "-o", "out", "--set", "cluster.network_model=alpha_beta"});
  EXPECT_EQ(r.exit_code, 3) << r.err;  // does not fit, as its header says
  ExpectContains(r.out, "gpt-1t-3072: 3072 GPUs, 1009.26B parameters");
}

// Item 3 (assert reachable from input) and item 12: the planner builds its base through the
// experiment decoder, so what-if links are checked on the resized cluster, --set reaches
// every key but the axes, and a headroom shrinks the budget.
class Planner : public Hardening {
 protected:
  RunResult Plan(std::vector<std::string> extra, const std::string& model = "llama2-7b.yaml") {
    std::vector<std::string> args = {"plan",
                                     "--model",
                                     SourcePath("workloads/models/" + model).string(),
                                     "--cluster",
                                     SourcePath("topologies/dgx-h100.yaml").string(),
                                     "--gpus",
                                     "8",
                                     "-j",
                                     "1",
                                     "--set",
                                     "cluster.network_model=alpha_beta"};
    args.insert(args.end(), extra.begin(), extra.end());
    return Meshsim(args);
  }
};

TEST_F(Planner, WhatIfLinkOutsideTheResizedClusterIsBadInput) {
  // dgx-h100.yaml has 8 nodes; the planner resizes it to the 1 node 8 GPUs need.
  const RunResult r =
      Plan({"--set", "cluster.what_if={links: [{link: node3.nic1, bandwidth_factor: 0.5}]}"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  ExpectContains(r.err, "cluster.what_if.links[0].link: no link named 'node3.nic1'");
}

TEST_F(Planner, SetMayNotFixTheAxes) {
  const RunResult r = Plan({"--set", "plan.zero=1"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  ExpectContains(r.err,
                 "--set plan.zero=1: plan.zero: the planner varies tp, pp, dp, zero and, for a MoE "
                 "model, ep");
  const RunResult ep = Plan({"--set", "plan.ep=2"}, "mixtral-8x7b.yaml");
  EXPECT_EQ(ep.exit_code, 2) << ep.err;
  ExpectContains(ep.err, "--set plan.ep=2: plan.ep: the planner varies");
}

// A MoE model's plans vary ep too: the table has an ep column, and Mixtral's 8 experts on
// 8 GPUs give rows with ep 1, 2, 4 and 8 (the dense model's table has no such column).
TEST_F(Planner, MoeModelPlansVaryExpertParallelism) {
  const RunResult moe = Plan({"--top", "0", "--set", "model.seq_len=4096"}, "mixtral-8x7b.yaml");
  ASSERT_TRUE(moe.exit_code == 0 || moe.exit_code == 3) << moe.err;
  ExpectContains(moe.out, "ep dividing tp x dp and the 8 experts");
  ExpectContains(moe.out, "  #  tp  pp   dp  ep zero  memory per GPU");
  std::set<int> eps;
  std::istringstream lines(moe.out);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream cells(line);
    int n = 0, tp = 0, pp = 0, dp = 0, ep = 0;
    if (cells >> n >> tp >> pp >> dp >> ep) eps.insert(ep);
  }
  EXPECT_EQ(eps, (std::set<int>{1, 2, 4, 8}));
  const RunResult dense = Plan({"--top", "3"});
  ASSERT_EQ(dense.exit_code, 0) << dense.err;
  ExpectContains(dense.out, "  #  tp  pp   dp zero  memory per GPU");
}

TEST_F(Planner, SetChangesThePlansAndHeadroomTheBudget) {
  const RunResult plain = Plan({"--top", "0"});
  const RunResult flash = Plan({"--top", "0", "--set", "training.flash_attention=true"});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  ASSERT_EQ(flash.exit_code, 0) << flash.err;
  EXPECT_NE(plain.out, flash.out);  // fewer activation bytes, shorter steps
  const RunResult headroom = Plan({"--headroom", "8"});
  ASSERT_EQ(headroom.exit_code, 0) << headroom.err;
  ExpectContains(headroom.out, "budget 72 GiB per GPU (8 GiB kept free)");
  const RunResult none = Plan({"--headroom", "80"});
  EXPECT_EQ(none.exit_code, 2);
  ExpectContains(none.err, "--headroom: a headroom of 80 GiB leaves nothing of the 80 GiB budget");
}

TEST_F(Planner, ExperimentFileGivenAsTheModelIsNamed) {
  const RunResult r =
      Meshsim({"plan", "--model", SourcePath("workloads/experiments/default.yaml").string(),
               "--cluster", SourcePath("topologies/dgx-h100.yaml").string(), "--gpus", "8"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  ExpectContains(r.err, "default.yaml:4:1: model: expected a model YAML, found an experiment");
}

}  // namespace

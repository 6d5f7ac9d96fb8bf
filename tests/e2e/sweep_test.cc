// End-to-end tests of `meshsim sweep`, `merge` and `plan`: determinism across thread
// counts, resume after SIGKILL, shards merged, merge failures, bad sweep YAML, the
// planner's verdicts, and the HTML explorer in headless Chromium.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/csv_table.h"
#include "tests/e2e/meshsim_runner.h"

extern char** environ;

namespace {

namespace fs = std::filesystem;
using namespace meshsim::e2e;

RunResult RunProgram(const std::string& program, const std::vector<std::string>& args,
                     const fs::path& scratch) {
  static std::atomic<int> n{0};
  const fs::path out = scratch / ("stdout" + std::to_string(n) + ".txt");
  const fs::path err = scratch / ("stderr" + std::to_string(n++) + ".txt");
  std::string cmd = ShellQuote(program);
  for (const std::string& a : args) cmd += " " + ShellQuote(a);
  cmd += " >" + ShellQuote(out.string()) + " 2>" + ShellQuote(err.string());
  const int status = std::system(cmd.c_str());
  RunResult r;
  r.exit_code = status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = ReadFile(out);
  r.err = ReadFile(err);
  return r;
}

RunResult Meshsim(const std::vector<std::string>& args, const fs::path& scratch) {
  return RunProgram(MESHSIM_BIN, args, scratch);
}

fs::path Source(const std::string& relative) { return fs::path(MESHSIM_SOURCE_DIR) / relative; }

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<std::string> SortedLines(const std::string& text) {
  std::vector<std::string> lines = Lines(text);
  std::sort(lines.begin(), lines.end());
  return lines;
}

// Llama-2 7B on 16 H100s (the default experiment): every tp x pp split, two ZeRO stages
// and two micro-batch sizes: 60 configurations, a few pruned, the rest simulated. The
// sweep machinery does not depend on the network model; the alpha-beta one keeps these
// tests fast (and makes cluster.network_model a non-plan axis column).
std::string SmallSweep(int global_batch = 64) {
  return "name: e2e-sweep\n"
         "base: " +
         Source("workloads/experiments/default.yaml").string() +
         "\n"
         "axes:\n"
         "  cluster.network_model: [alpha_beta]\n"
         "  plan.tp: auto\n"
         "  plan.pp: auto\n"
         "  plan.zero: [0, 1]\n"
         "  plan.micro_batch: [1, 2]\n"
         "  plan.global_batch: [" +
         std::to_string(global_batch) + "]\n";
}

class Sweep : public ::testing::Test {
 protected:
  fs::path Dir(const std::string& name) const { return tmp_.path() / name; }
  fs::path WriteSweep(const std::string& text, const std::string& name = "sweep.yaml") {
    WriteFile(tmp_.path() / name, text);
    return tmp_.path() / name;
  }
  RunResult RunSweep(const fs::path& sweep, const std::string& out,
                     std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"sweep", sweep.string(), "-o", Dir(out).string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return Meshsim(args, tmp_.path());
  }
  std::string Csv(const std::string& out) const { return ReadFile(Dir(out) / "results.csv"); }
  TempDir tmp_;
};

TEST_F(Sweep, OneAndTwoThreadsWriteIdenticalFiles) {
  const fs::path sweep = WriteSweep(SmallSweep());
  const RunResult a = RunSweep(sweep, "j1", {"-j", "1"});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  const RunResult b = RunSweep(sweep, "j2", {"-j", "2"});
  ASSERT_EQ(b.exit_code, 0) << b.err;
  const std::string csv = Csv("j1");
  EXPECT_EQ(Lines(csv).size(), 61u);  // header + 60 configurations
  EXPECT_EQ(csv, Csv("j2"));
  EXPECT_EQ(ReadFile(Dir("j1") / "pareto.csv"), ReadFile(Dir("j2") / "pareto.csv"));
  // Rows in configuration order, every status from the contract.
  const auto rows = Lines(csv);
  for (size_t i = 1; i < rows.size(); ++i)
    EXPECT_EQ(rows[i].rfind(std::to_string(i - 1) + ",", 0), 0u);
  EXPECT_NE(csv.find(",ok,"), std::string::npos);
  EXPECT_NE(csv.find(",oom,"), std::string::npos);
  EXPECT_NE(a.out.find("Pareto front"), std::string::npos);
  EXPECT_NE(a.out.find("Fastest configurations"), std::string::npos);
  EXPECT_TRUE(a.err.empty()) << "no progress bar when stderr is not a terminal: " << a.err;
}

TEST_F(Sweep, KilledMidwayAndResumedGivesTheSameRows) {
  const fs::path sweep = WriteSweep(SmallSweep(256));
  const RunResult full = RunSweep(sweep, "full", {"-j", "1"});
  ASSERT_EQ(full.exit_code, 0) << full.err;

  // Start the same sweep and SIGKILL it once some rows are written.
  const fs::path out = Dir("killed");
  const std::string bin = MESHSIM_BIN;
  std::vector<std::string> argv_s = {bin, "sweep", sweep.string(), "-o", out.string(), "-j",
                                     "2", "-q"};
  std::vector<char*> argv;
  for (std::string& s : argv_s) argv.push_back(s.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  ASSERT_EQ(posix_spawn(&pid, bin.c_str(), &actions, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&actions);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (Lines(ReadFile(out / "results.csv")).size() < 12 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the sweep finished before it could be killed";
  const std::string partial = ReadFile(out / "results.csv");
  const size_t kept = Lines(partial).size();
  ASSERT_GE(kept, 12u);
  ASSERT_LT(kept, 61u) << "the sweep finished before it was killed";
  // What was written is a prefix of the full file.
  EXPECT_EQ(Csv("full").rfind(partial.substr(0, partial.rfind('\n') + 1), 0), 0u);
  // A torn last line, as a kill during a write would leave.
  {
    std::ofstream torn(out / "results.csv", std::ios::app | std::ios::binary);
    torn << "999,ok,4,2";
  }
  const RunResult resumed = RunSweep(sweep, "killed", {"-j", "2", "--resume"});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_NE(resumed.out.find("rows kept from the earlier run"), std::string::npos) << resumed.out;
  EXPECT_EQ(SortedLines(Csv("killed")), SortedLines(Csv("full")));
  EXPECT_EQ(Csv("killed"), Csv("full"));
}

TEST_F(Sweep, ResumeRefusesAnotherSweepsRows) {
  const fs::path a = WriteSweep(SmallSweep(), "a.yaml");
  ASSERT_EQ(RunSweep(a, "out", {"-j", "2"}).exit_code, 0);
  const fs::path b = WriteSweep(SmallSweep(128), "b.yaml");
  const RunResult r = RunSweep(b, "out", {"--resume"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("another sweep"), std::string::npos) << r.err;
}

TEST_F(Sweep, ShardsMergedEqualTheWholeSweep) {
  const fs::path sweep = WriteSweep(SmallSweep());
  ASSERT_EQ(RunSweep(sweep, "whole", {"-j", "2"}).exit_code, 0);
  for (int i = 0; i < 3; ++i) {
    const RunResult r = RunSweep(sweep, "shard" + std::to_string(i),
                                 {"--shard", std::to_string(i) + "/3", "-j", "1"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto rows = Lines(Csv("shard" + std::to_string(i)));
    EXPECT_EQ(rows.size(), 21u);
    for (size_t k = 1; k < rows.size(); ++k) {
      EXPECT_EQ(std::stoi(rows[k].substr(0, rows[k].find(','))) % 3, i);
    }
  }
  const RunResult m = Meshsim({"merge", Dir("shard2").string(), Dir("shard0").string(),
                               Dir("shard1").string(), "-o", Dir("merged").string()},
                              tmp_.path());
  ASSERT_EQ(m.exit_code, 0) << m.err;
  EXPECT_EQ(Csv("merged"), Csv("whole"));
  EXPECT_EQ(ReadFile(Dir("merged") / "pareto.csv"), ReadFile(Dir("whole") / "pareto.csv"));
}

TEST_F(Sweep, MergeFailsOnAMissingOrRepeatedRow) {
  const fs::path sweep = WriteSweep(SmallSweep());
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(
        RunSweep(sweep, "s" + std::to_string(i), {"--shard", std::to_string(i) + "/2", "-j", "2"})
            .exit_code,
        0);
  }
  const RunResult missing =
      Meshsim({"merge", Dir("s0").string(), "-o", Dir("m1").string()}, tmp_.path());
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("30 of 60 configurations missing: 1, 3, 5"), std::string::npos)
      << missing.err;
  EXPECT_NE(missing.err.find("shard 1/2"), std::string::npos) << missing.err;
  EXPECT_FALSE(fs::exists(Dir("m1") / "results.csv"));

  fs::copy(Dir("s1"), Dir("s1copy"));
  const RunResult repeated = Meshsim({"merge", Dir("s0").string(), Dir("s1").string(),
                                      Dir("s1copy").string(), "-o", Dir("m2").string()},
                                     tmp_.path());
  EXPECT_EQ(repeated.exit_code, 2);
  EXPECT_NE(repeated.err.find("configuration 1 appears twice"), std::string::npos) << repeated.err;

  // A shard whose file lost a row.
  std::vector<std::string> rows = Lines(Csv("s1"));
  rows.erase(rows.begin() + 5);  // configuration 9 (rows 1, 3, 5, 7, 9, ...)
  std::string text;
  for (const std::string& r : rows) text += r + "\n";
  WriteFile(Dir("s1") / "results.csv", text);
  const RunResult lost = Meshsim(
      {"merge", Dir("s0").string(), Dir("s1").string(), "-o", Dir("m3").string()}, tmp_.path());
  EXPECT_EQ(lost.exit_code, 2);
  EXPECT_NE(lost.err.find("1 of 60 configurations missing: 9"), std::string::npos) << lost.err;
}

// Bad sweep input: exit 2, one message naming the file, line, column and dotted key, and
// no results written.
class BadSweep : public Sweep {
 protected:
  void Expect(const std::string& text, const std::string& where, const std::string& what) {
    const fs::path sweep = WriteSweep(text);
    const RunResult r = RunSweep(sweep, "out");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find(where), std::string::npos) << "expected '" << where << "' in: " << r.err;
    EXPECT_NE(r.err.find(what), std::string::npos) << "expected '" << what << "' in: " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(fs::exists(Dir("out") / "results.csv"));
  }
  std::string Head() const {
    return "name: bad\nbase: " + Source("workloads/experiments/default.yaml").string() +
           "\naxes:\n";
  }
};

TEST_F(BadSweep, ValueOfTheWrongType) {
  const std::string path = (tmp_.path() / "sweep.yaml").string();
  Expect(Head() + "  plan.tp: [1, x]\n",
         path + ":4:16: axes.plan.tp:", "expected an integer, found 'x'");
}

TEST_F(BadSweep, UnknownKey) {
  const std::string path = (tmp_.path() / "sweep.yaml").string();
  Expect(Head() + "  plan.zero: [0]\n  plan.tpp: [1, 2]\n",
         path + ":5:14: axes.plan.tpp:", "unknown key");
}

TEST_F(BadSweep, AutoWhereThereIsNoAuto) {
  const std::string path = (tmp_.path() / "sweep.yaml").string();
  Expect(Head() + "  model.seq_len: auto\n",
         path + ":4:18: axes.model.seq_len:", "auto is supported only for");
}

TEST_F(BadSweep, NotAList) {
  const std::string path = (tmp_.path() / "sweep.yaml").string();
  Expect(Head() + "  plan.tp: 4\n", path + ":4:12: axes.plan.tp:", "expected a non-empty list");
}

TEST_F(BadSweep, UnknownTopLevelKeyAndMissingBase) {
  const std::string path = (tmp_.path() / "sweep.yaml").string();
  Expect(Head() + "  plan.tp: [1]\nextra: 1\n", path + ":5:1: extra:", "unknown key");
  Expect("name: bad\naxes:\n  plan.tp: [1]\n", path + ":1:1: base:", "required key is missing");
}

TEST_F(BadSweep, BadShardAndSyntax) {
  const std::string path = (tmp_.path() / "sweep.yaml").string();
  Expect(Head() + "  plan.tp: [1, 2\n", path + ":", "YAML syntax error");
  const fs::path sweep = WriteSweep(SmallSweep());
  const RunResult r = RunSweep(sweep, "out", {"--shard", "3/3"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--shard: expected I/N with 0 <= I < N, found '3/3'"), std::string::npos)
      << r.err;
}

// The planner's rows, read back from --csv: memory need per (tp, pp, dp, zero).
std::map<std::tuple<int, int, int, int>, double> PlanNeeds(const fs::path& csv) {
  meshsim::Result<meshsim::e2e::CsvTable> t = meshsim::e2e::ReadCsvTable(csv.string());
  EXPECT_TRUE(t.ok());
  std::map<std::tuple<int, int, int, int>, double> need;
  if (!t.ok()) return need;
  const meshsim::e2e::CsvTable& tab = t.value();
  for (size_t r = 0; r < tab.rows.size(); ++r) {
    if (tab.Cell(r, tab.Column("status")) == "invalid") continue;
    auto i = [&](const char* c) { return static_cast<int>(*tab.Number(r, tab.Column(c))); };
    const auto peak = tab.Number(r, tab.Column("peak_memory_gib"));
    need[{i("plan.tp"), i("plan.pp"), i("plan.dp"), i("plan.zero")}] =
        peak ? *peak : *tab.Number(r, tab.Column("est_memory_gib"));
  }
  return need;
}

// Llama-2 70B (its config.json): h = 8192, 80 layers, 64 heads, 8 KV heads of 128, SwiGLU
// with ffn 28672, vocabulary 32000, untied embeddings; the planner trains it with sequences
// of s = 4096, micro-batch 1, selective recompute (+ SP where tp > 1), 1F1B, bf16 Adam.
// Parameters per layer: Q and O 2h^2, K and V 2 * h * 1024, gate/up/down 3 * h * 28672,
// two norms 2h: 134,217,728 + 16,777,216 + 704,643,072 + 16,384 = 855,654,400.
constexpr double kLayerParams70B = 855654400;
constexpr double kGiB = 1024.0 * 1024 * 1024;
constexpr double kSbh = 4096.0 * 8192;  // s * h

// Layers per stage of Llama-2 70B's 80 layers: 80 / pp when pp divides them; else
// meshsim's default (Megatron's split counting the embedding and the loss as a layer each,
// the leftover units to the first stages). pp 32: 82 units = 2 each + 18 left, units 3 x 18
// and 2 x 14, one layer fewer at each end: 2, 3 x 17, 2 x 13, 1. pp 64: 1 each + 18 left,
// units 2 x 18 and 1 x 46: 1, 2 x 17, 1 x 45, 0.
std::vector<int> Llama70BStages(int pp) {
  auto runs = [](std::vector<std::pair<int, int>> r) {  // (layers, stages) runs
    std::vector<int> v;
    for (const auto& [layers, n] : r) v.insert(v.end(), n, layers);
    return v;
  };
  if (pp == 32) return runs({{2, 1}, {3, 17}, {2, 13}, {1, 1}});
  if (pp == 64) return runs({{1, 1}, {2, 17}, {1, 45}, {0, 1}});
  return std::vector<int>(pp, 80 / pp);
}

// The memory need of one plan (tp, pp, dp, ZeRO) in GiB, written out from the published
// closed forms (not from meshsim's functions): model states, stored activations of the
// micro-batches in flight, and the buffers of the kernel running at the peak; the fullest
// stage's.
//   Stage s holds its layers (Llama70BStages), stage 0 also the input embedding v*h, the
//   last stage the output layer's v*h (both on stage 0 when pp = 1), each split by tp:
//   Psi parameters.
//   Model states (Rajbhandari et al. 2020, 16 bytes per parameter): ZeRO-0 16 Psi,
//   ZeRO-1 4 Psi + 12 Psi/dp, ZeRO-2 2 Psi + 14 Psi/dp, ZeRO-3 16 Psi/dp.
//   Stored activations per layer and micro-batch (Korthikanti et al. 2022 with GQA and
//   SwiGLU), in units of s*h bytes: attention 5 (LayerNorm and QKV inputs at 2 bytes, a
//   1-byte dropout mask; split by tp only under SP) + 4.5 (Q at 2 bytes, K and V at
//   2 * 1/8, the projection input at 2: 2 * (2 + 2/8), split by tp); MLP 5 (as attention)
//   + 21 (gate, up and the down projection's input: 3 * 2 bytes * 28672/8192, split by tp).
//   1F1B: stage s holds pp - s micro-batches (64/dp >= pp always here) at its first
//   backward, which recomputes the last layer's attention core: a * s^2 * 5 bytes / tp
//   (scores, mask, dropout output). That is the peak: the alternative, all activations
//   with the fp32 logits 4 * s * v / tp, is smaller by a * s^2 * 5 - 4 * s * v = 4.8 GB /
//   tp. With even stages stage 0 is the fullest; pp 32 and 64 peak on stage 1 (3 layers x
//   31 micro-batches, 2 x 63).
//   ZeRO-3 with dp > 1 gathers the layer: 2 bytes * its parameters / tp; the replay also
//   holds the next layer, prefetched, so a simulated plan needs one more such buffer.
double Llama70BNeedGib(int tp, int pp, int dp, int zero, bool simulated) {
  const std::vector<int> stages = Llama70BStages(pp);
  const double embedding = 32000.0 * 8192 / tp;
  const bool sp = tp > 1;
  const double per_layer =
      ((sp ? 5.0 / tp : 5.0) + 4.5 / tp + (sp ? 5.0 / tp : 5.0) + 21.0 / tp) * kSbh;
  const double core = 64.0 * 4096 * 4096 * 5 / tp;
  const double gathered = zero == 3 && dp > 1 ? 2 * kLayerParams70B / tp : 0;
  double need = 0;
  for (int s = 0; s < pp; ++s) {
    if (stages[s] == 0) continue;  // pp 64's last stage: far from the fullest
    const double psi =
        stages[s] * kLayerParams70B / tp + (s == 0 ? embedding : 0) + (s == pp - 1 ? embedding : 0);
    const double states[] = {16 * psi, 4 * psi + 12 * psi / dp, 2 * psi + 14 * psi / dp,
                             16 * psi / dp};
    const double activations = (pp - s) * stages[s] * per_layer + core;
    need = std::max(need, states[zero] + activations + gathered * (simulated ? 2 : 1));
  }
  return need / kGiB;
}

TEST_F(Sweep, PlannerShows70BDoesNotFitOneGpu) {
  const RunResult r =
      Meshsim({"plan", "--model", Source("workloads/models/llama2-70b.yaml").string(), "--cluster",
               Source("topologies/dgx-h100.yaml").string(), "--gpus", "1", "--budget-gib", "64"},
              tmp_.path());
  EXPECT_EQ(r.exit_code, 3) << r.err;  // nothing fits
  // Model states at 16 bytes/param: 80 layers of 855,654,400, two embeddings of
  // 32000 * 8192 and the final norm 8192 = 68,976,648,192 parameters; x 16 =
  // 1,103,626,371,072 bytes = 1103.6 GB.
  std::smatch m;
  ASSERT_TRUE(
      std::regex_search(r.out, m, std::regex(R"(16 B/param x 68\.98B params = ([0-9.]+) GB)")))
      << r.out;
  EXPECT_NEAR(std::stod(m[1]), 1103.626, 0.05);
  // The one plan, tp 1 pp 1 dp 1 ZeRO-0 (Llama70BNeedGib): model states without the final
  // norm 16 * 68,976,640,000 = 1,103,626,240,000 B, activations 80 * 35.5 * s*h =
  // 95,294,586,880 B, the recomputed core 64 * 4096^2 * 5 = 5,368,709,120 B: in all
  // 1,204,289,536,000 B = 1204.3 GB = 1121.58 GiB, over 64 GiB by 1057.58 GiB (17.52x).
  EXPECT_NEAR(Llama70BNeedGib(1, 1, 1, 0, false), 1121.582, 1e-3);
  ASSERT_TRUE(std::regex_search(
      r.out, m,
      std::regex(
          R"(smallest need is ([0-9.]+) GiB per GPU \(tp 1 pp 1 dp 1 ZeRO-0\) = ([0-9.]+) GB, over the 64 GiB budget by ([0-9.]+) GiB \(([0-9.]+)x\))")))
      << r.out;
  EXPECT_NEAR(std::stod(m[1]), 1121.582, 0.05);
  EXPECT_NEAR(std::stod(m[2]), 1204.290, 0.05);
  EXPECT_NEAR(std::stod(m[3]), 1057.582, 0.05);
  EXPECT_NEAR(std::stod(m[4]), 17.52, 0.05);
  EXPECT_NE(r.out.find("over by 1057.6 GiB"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("fits ("), std::string::npos);
  EXPECT_EQ(r.out.find("\x1b["), std::string::npos) << "no colour when stdout is not a terminal";
}

// The DGX H100 cluster with the alpha-beta network model (fast; the planner's logic does
// not depend on the network model).
fs::path AlphaBetaH100(const fs::path& dir) {
  const fs::path p = dir / "dgx-h100-alpha-beta.yaml";
  WriteFile(p, ReadFile(Source("topologies/dgx-h100.yaml")) + "\nnetwork_model: alpha_beta\n");
  return p;
}

TEST_F(Sweep, Planner70BOn64GpusListsFittingPlansAndSplittingLowersTheBar) {
  const fs::path csv = Dir("plan.csv");
  const RunResult r =
      Meshsim({"plan", "--model", Source("workloads/models/llama2-70b.yaml").string(), "--cluster",
               AlphaBetaH100(tmp_.path()).string(), "--gpus", "64", "--budget-gib", "64", "--csv",
               csv.string(), "-j", "2"},
              tmp_.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Valid splits: tp | 8 (the KV heads), tp * pp * dp = 64 and pp <= 80 + 2 (uneven
  // stages where pp does not divide 80). tp 1: pp in 1, 2, 4, 8, 16, 32, 64 (7); tp 2: 1 to
  // 32 (6); tp 4: 1 to 16 (5); tp 8: 1 to 8 (4): 22 splits. Four have dp = 1 (1 x 64,
  // 2 x 32, 4 x 16, 8 x 8) and only ZeRO-0; the other 18 have ZeRO 0-3: 4 + 72 = 76 plans.
  // Of these, 22 are within 64 GiB by Llama70BNeedGib (checked plan by plan below): every
  // tp 8 plan but tp 8 dp 8 ZeRO-0 (140.2) and tp 8 pp 2 ZeRO-0 (76.0); every tp 4 plan
  // with pp 16, with pp 8, with pp 4 and ZeRO 1-3, with pp 2 and ZeRO 2-3, with pp 1 and
  // ZeRO-3; no tp 1 or tp 2 plan (the closest, tp 2 with ZeRO-3, need 64.1 to 64.7 GiB).
  // (The uneven ones need 73.2 GiB and more: tp 2 pp 32 ZeRO-0.)
  EXPECT_NE(r.out.find("22 of 76 plans fit in 64 GiB."), std::string::npos) << r.out;
  // Rows are numbered from 1, fitting plans first, fastest first.
  std::smatch first;
  ASSERT_TRUE(std::regex_search(r.out, first,
                                std::regex(R"(\n  1 +(\d+) +(\d+) +(\d+) +(\d) +\[[^\n]*fits \()")))
      << r.out;
  meshsim::Result<meshsim::e2e::CsvTable> t = meshsim::e2e::ReadCsvTable(csv.string());
  ASSERT_TRUE(t.ok());
  const meshsim::e2e::CsvTable& tab = t.value();
  int valid = 0, fit = 0;
  double fastest = 1e30;
  std::tuple<int, int, int, int> fastest_plan;
  for (size_t row = 0; row < tab.rows.size(); ++row) {
    if (tab.Cell(row, tab.Column("status")) == "invalid") continue;
    ++valid;
    auto i = [&](const char* c) { return static_cast<int>(*tab.Number(row, tab.Column(c))); };
    const int tp = i("plan.tp"), pp = i("plan.pp"), dp = i("plan.dp"), zero = i("plan.zero");
    const auto peak = tab.Number(row, tab.Column("peak_memory_gib"));
    const double need = peak ? *peak : *tab.Number(row, tab.Column("est_memory_gib"));
    EXPECT_NEAR(need, Llama70BNeedGib(tp, pp, dp, zero, peak.has_value()), 0.01)
        << "tp " << tp << " pp " << pp << " dp " << dp << " ZeRO-" << zero;
    if (tab.Cell(row, tab.Column("status")) != "ok") continue;
    ++fit;
    const double step = *tab.Number(row, tab.Column("step_time_s"));
    if (step < fastest) {
      fastest = step;
      fastest_plan = {tp, pp, dp, zero};
    }
  }
  EXPECT_EQ(valid, 76);
  EXPECT_EQ(fit, 22);
  EXPECT_EQ(fastest_plan, std::make_tuple(std::stoi(first[1]), std::stoi(first[2]),
                                          std::stoi(first[3]), std::stoi(first[4])));
  // The README's example: the bar comes down from 1121.6 GiB (tp 1, dp 64) to 140.2 with
  // tp 8 (Llama70BNeedGib(8, 1, 8, 0): Psi = 80 * 106,956,800 + 2 * 32,768,000 =
  // 8,622,080,000, 16 Psi = 137,953,280,000 B; activations 80 * 4.4375 * s*h + core / 8 =
  // 11,911,823,360 + 671,088,640 B; in all 140.20 GiB), to 28.1 with tp 8 x pp 8 (16 Psi =
  // 16 * (10 * 106,956,800 + 32,768,000) = 17,637,376,000 B and the same activations:
  // 28.14 GiB), and ZeRO-3 takes tp 8 x dp 8 to 28.2 (16 Psi / 8 = 17,244,160,000 B, the
  // same activations and two gathered layers of 213,913,600 B: 28.18 GiB).
  auto need = PlanNeeds(csv);
  EXPECT_NEAR(need.at({1, 1, 64, 0}), 1121.582, 0.01);
  EXPECT_NEAR(need.at({8, 1, 8, 0}), 140.198, 0.01);
  EXPECT_NEAR(need.at({8, 8, 1, 0}), 28.145, 0.01);
  EXPECT_NEAR(need.at({8, 1, 8, 3}), 28.177, 0.01);
}

std::string FindChromium() {
  if (const char* env = std::getenv("MESHSIM_CHROMIUM")) return env;
  for (const char* name : {"chromium", "chromium-browser", "google-chrome"}) {
    for (const char* dir : {"/usr/bin/", "/usr/local/bin/", "/snap/bin/"}) {
      const std::string p = std::string(dir) + name;
      if (::access(p.c_str(), X_OK) == 0) return p;
    }
  }
  return "";
}

std::string Attr(const std::string& dom, const std::string& id, const std::string& attr) {
  std::smatch m;
  const std::regex re("id=\"" + id + "\"[^>]*" + attr + "=\"([^\"]*)\"");
  if (std::regex_search(dom, m, re)) return m[1];
  const std::regex re2(attr + "=\"([^\"]*)\"[^>]*id=\"" + id + "\"");
  return std::regex_search(dom, m, re2) ? std::string(m[1]) : std::string();
}

// The explorer in a real browser: a plan chosen through the page's controls (set from the
// URL hash, the same code path as a user's choice) shows that plan's simulated numbers,
// and a model name with markup in it is shown as text.
TEST_F(Sweep, ExplorerInHeadlessChromiumShowsTheChosenPlan) {
  const std::string chromium = FindChromium();
  ASSERT_FALSE(chromium.empty())
      << "headless Chromium is needed for this test and was not found: install the Debian "
         "package chromium (bash scripts/setup.sh) or set MESHSIM_CHROMIUM";
  std::string model = ReadFile(Source("workloads/models/llama2-7b.yaml"));
  model = std::regex_replace(model, std::regex("name: llama2-7b"),
                             "name: \"evil</script><img src=x id=injected>&amp;\"");
  WriteFile(Dir("evil.yaml"), model);
  const fs::path html = Dir("explorer.html"), csv = Dir("plan.csv");
  const RunResult r = Meshsim({"plan", "--model", Dir("evil.yaml").string(), "--cluster",
                               AlphaBetaH100(tmp_.path()).string(), "--gpus", "8", "--html",
                               html.string(), "--csv", csv.string(), "-j", "2"},
                              tmp_.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;

  auto dump = [&](const std::string& hash) {
    return RunProgram(chromium,
                      {"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                       "--user-data-dir=" + Dir("profile").string(), "--virtual-time-budget=3000",
                       "--dump-dom", "file://" + html.string() + hash},
                      tmp_.path());
  };
  meshsim::Result<meshsim::e2e::CsvTable> t = meshsim::e2e::ReadCsvTable(csv.string());
  ASSERT_TRUE(t.ok());
  const meshsim::e2e::CsvTable& tab = t.value();
  auto row_of = [&](int tp, int pp, int dp, int zero) -> size_t {
    for (size_t i = 0; i < tab.rows.size(); ++i) {
      auto n = [&](const char* c) {
        return static_cast<int>(tab.Number(i, tab.Column(c)).value_or(-1));
      };
      if (n("plan.tp") == tp && n("plan.pp") == pp && n("plan.dp") == dp && n("plan.zero") == zero)
        return i;
    }
    return tab.rows.size();
  };
  for (const auto& [tp, pp, dp, zero] : {std::tuple{2, 2, 2, 1}, std::tuple{8, 1, 1, 0}}) {
    const size_t row = row_of(tp, pp, dp, zero);
    ASSERT_LT(row, tab.rows.size());
    ASSERT_EQ(tab.Cell(row, tab.Column("status")), "ok");
    const RunResult d = dump("#tp=" + std::to_string(tp) + "&pp=" + std::to_string(pp) + "&dp=" +
                             std::to_string(dp) + "&zero=" + std::to_string(zero) + "&mb=1");
    ASSERT_EQ(d.exit_code, 0) << d.err;
    const std::string& dom = d.out;
    ASSERT_NE(dom.find("id=\"step\""), std::string::npos) << dom.substr(0, 2000);
    const std::string config =
        std::regex_search(dom,
                          std::regex("data-config=\"" + tab.Cell(row, tab.Column("config")) + "\""))
            ? "found"
            : "missing";
    EXPECT_EQ(config, "found") << "the page selected another plan";
    const double step = std::stod(Attr(dom, "step", "data-value"));
    const double mfu = std::stod(Attr(dom, "mfu", "data-value"));
    const double bubble = std::stod(Attr(dom, "bubble", "data-value"));
    EXPECT_NEAR(step, *tab.Number(row, tab.Column("step_time_s")), 1e-9);
    EXPECT_NEAR(mfu, *tab.Number(row, tab.Column("mfu")), 1e-12);
    EXPECT_NEAR(bubble, *tab.Number(row, tab.Column("bubble_fraction")), 1e-12);
    EXPECT_NEAR(std::stod(Attr(dom, "memory-text", "data-value")),
                *tab.Number(row, tab.Column("peak_memory_gib")), 1e-9);
    // The name is text, not markup.
    EXPECT_EQ(dom.find("id=\"injected\""), std::string::npos);
    EXPECT_NE(dom.find("evil&lt;/script&gt;&lt;img src=x id=injected&gt;&amp;amp;"),
              std::string::npos);
  }
}

}  // namespace

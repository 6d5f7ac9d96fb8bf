// End-to-end tests of `meshsim run` outputs on the default experiment: the Chrome trace
// (trace.json, or gzip-compressed trace.json.gz) is well-formed and consistent with the
// summary, the default traced ranks, summary.json carries every key of SPEC.md's summary
// table, the human summary prints every part of the time split, and what-if link
// failures report the traffic they rerouted.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/e2e/meshsim_runner.h"

namespace {

namespace fs = std::filesystem;
using namespace meshsim::e2e;
using nlohmann::json;

// Parses JSON; a discarded value (is_discarded()) when the text is not valid JSON.
json ParseJson(const std::string& text) { return json::parse(text, nullptr, false); }

const std::string kDefaultExperiment =
    (fs::path(MESHSIM_SOURCE_DIR) / "workloads/experiments/default.yaml").string();

// Runs the default experiment with `extra` options into a fresh folder and parses what
// it wrote.
class TraceTest : public ::testing::Test {
 protected:
  void SetUp() override { Run({}); }

  // Each run writes into its own folder, so nothing is left over from an earlier one.
  void Run(const std::vector<std::string>& extra) {
    outdir_ = dir_.path() / ("out" + std::to_string(runs_++));
    std::vector<std::string> args = {
        "run", kDefaultExperiment, "-o", outdir().string(), "--reproducible", "-q"};
    args.insert(args.end(), extra.begin(), extra.end());
    run_ = RunMeshsim(args, dir_.path());
    ASSERT_EQ(run_.exit_code, 0) << run_.err;
    trace_ = nullptr;
    summary_ = ParseJson(ReadFile(outdir() / "summary.json"));
  }

  // The trace of the latest run, parsed on first use (it is megabytes; most tests only
  // need the summary).
  const json& trace() {
    if (trace_.is_null()) trace_ = ParseJson(ReadFile(outdir() / "trace.json"));
    return trace_;
  }

  const fs::path& outdir() const { return outdir_; }

  // The "X" events, or every event with phase `ph`.
  std::vector<json> Events(const std::string& ph) {
    std::vector<json> out;
    if (!trace().is_object() || !trace().contains("traceEvents")) return out;
    for (const json& e : trace()["traceEvents"]) {
      if (e.value("ph", "") == ph) out.push_back(e);
    }
    return out;
  }

  // Pids of GPU processes: all but the network process (NIC throughput counters, pid
  // = number of GPUs).
  std::set<int> TracedPids() {
    std::set<int> pids;
    const int gpus = summary_["gpus"].get<int>();
    for (const json& e : trace()["traceEvents"]) {
      if (e["pid"].get<int>() < gpus) pids.insert(e["pid"].get<int>());
    }
    return pids;
  }

  TempDir dir_;
  int runs_ = 0;
  fs::path outdir_;
  RunResult run_;
  json trace_;  // null until trace() parses it
  json summary_;
};

TEST_F(TraceTest, TraceIsJsonWithATraceEventsArray) {
  const json& t = trace();
  ASSERT_FALSE(t.is_discarded()) << "trace.json is not valid JSON";
  ASSERT_TRUE(t.is_object());
  ASSERT_TRUE(t.contains("traceEvents"));
  EXPECT_TRUE(t["traceEvents"].is_array());
  EXPECT_FALSE(t["traceEvents"].empty());
}

TEST_F(TraceTest, CompleteEventsCarryNumericFieldsAndArgs) {
  const std::vector<json> xs = Events("X");
  ASSERT_FALSE(xs.empty());
  for (const json& e : xs) {
    ASSERT_TRUE(e.contains("pid") && e["pid"].is_number()) << e;
    ASSERT_TRUE(e.contains("tid") && e["tid"].is_number()) << e;
    ASSERT_TRUE(e.contains("ts") && e["ts"].is_number()) << e;
    ASSERT_TRUE(e.contains("dur") && e["dur"].is_number()) << e;
    ASSERT_TRUE(e.contains("name") && e["name"].is_string()) << e;
    ASSERT_TRUE(e.contains("args") && e["args"].is_object()) << e;
    EXPECT_GE(e["dur"].get<double>(), 0.0) << e;
    EXPECT_GE(e["ts"].get<double>(), 0.0) << e;
  }
}

// Compute events list their kernels' shapes. The default experiment: Llama-2 7B (hidden
// 4096, 32 heads of 128, SwiGLU ffn 11008, vocab 32000), seq 4096, micro-batch 1, tp 2,
// no FlashAttention: per layer forward on 4096 tokens, QKV 4096 x (3 x 4096 / 2 = 6144) x
// 4096; scores and context as 16 local heads of 4096 x 4096 x 128 and 4096 x 128 x 4096;
// output projection 4096 x 4096 x (4096 / 2 = 2048); MLP gate+up 4096 x (2 x 11008 / 2
// = 11008) x 4096 and down 4096 x 4096 x 5504; logits 4096 x (32000 / 2 = 16000) x 4096.
TEST_F(TraceTest, ComputeEventsListTheirGemmShapes) {
  std::map<std::string, std::string> gemms;
  for (const json& e : Events("X")) {
    if (e.value("cat", "") == "compute" && e["args"].contains("gemms")) {
      gemms.emplace(e["name"].get<std::string>(), e["args"]["gemms"].get<std::string>());
    }
  }
  EXPECT_EQ(gemms["attention fwd"],
            "4096x6144x4096; 4096x4096x128x16; 4096x128x4096x16; 4096x4096x2048");
  EXPECT_EQ(gemms["mlp fwd"], "4096x11008x4096; 4096x4096x5504");
  EXPECT_EQ(gemms["logits+loss fwd"], "4096x16000x4096");
  EXPECT_EQ(gemms.count("optimizer step"), 0u);  // memory-bound only: no GEMM
}

TEST_F(TraceTest, ProcessNamesGiveEachGpusRankAndNode) {
  Run({"--trace-ranks", "all"});
  std::map<int, std::string> names;
  for (const json& e : Events("M")) {
    if (e.value("name", "") == "process_name") {
      names[e["pid"].get<int>()] = e["args"]["name"].get<std::string>();
    }
  }
  ASSERT_EQ(summary_["devices"].size(), summary_["gpus"].get<size_t>());
  for (const json& d : summary_["devices"]) {
    const int rank = d["rank"].get<int>();
    const int node = d["node"].get<int>();
    ASSERT_TRUE(names.count(rank)) << "no process_name for rank " << rank;
    const std::string& name = names[rank];
    EXPECT_TRUE(std::regex_search(name, std::regex("\\b" + std::to_string(rank) + "\\b"))) << name;
    EXPECT_TRUE(std::regex_search(name, std::regex("node " + std::to_string(node) + "\\b")))
        << name;
  }
}

TEST_F(TraceTest, EventsOnOneStreamDoNotOverlap) {
  std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> streams;
  for (const json& e : Events("X")) {
    streams[{e["pid"].get<int>(), e["tid"].get<int>()}].emplace_back(e["ts"].get<double>(),
                                                                     e["dur"].get<double>());
  }
  ASSERT_FALSE(streams.empty());
  constexpr double kToleranceUs = 1e-3;
  for (auto& [stream, spans] : streams) {
    std::sort(spans.begin(), spans.end());
    for (size_t i = 1; i < spans.size(); ++i) {
      const double prev_end = spans[i - 1].first + spans[i - 1].second;
      ASSERT_GE(spans[i].first + kToleranceUs, prev_end)
          << "pid " << stream.first << " tid " << stream.second << ": event at " << spans[i].first
          << " us starts before the previous one ends at " << prev_end;
    }
  }
}

TEST_F(TraceTest, LastEventEndsAtTheStepTime) {
  double last_end = 0;
  for (const json& e : Events("X")) {
    last_end = std::max(last_end, e["ts"].get<double>() + e["dur"].get<double>());
  }
  const double step_us = summary_["step_time_s"].get<double>() * 1e6;
  ASSERT_GT(step_us, 0);
  EXPECT_NEAR(last_end, step_us, 1e-3 * step_us);
}

TEST_F(TraceTest, HasMemoryCountersForEveryTracedGpu) {
  const std::vector<json> counters = Events("C");
  ASSERT_FALSE(counters.empty());
  std::set<int> pids;
  for (const json& e : counters) {
    ASSERT_TRUE(e["ts"].is_number()) << e;
    ASSERT_TRUE(e["args"].is_object() && !e["args"].empty()) << e;
    for (const auto& [series, value] : e["args"].items()) {
      EXPECT_TRUE(value.is_number()) << series << " in " << e;
      EXPECT_GE(value.get<double>(), 0.0) << e;
    }
    if (e["name"] == "memory") pids.insert(e["pid"].get<int>());
  }
  EXPECT_EQ(pids, TracedPids());
}

// The default experiment has 16 GPUs, tp 2 x dp 2 per stage, 4 stages: ranks 0, 4, 8, 12
// are the stages' ranks with tp = dp = cp = 0.
TEST_F(TraceTest, TracesOneRankPerStageAbove8Gpus) {
  EXPECT_EQ(TracedPids(), (std::set<int>{0, 4, 8, 12}));
}

// 64 GPUs (8 nodes, dp 8): still one process per stage.
TEST_F(TraceTest, TracesOneRankPerStageOf64Gpus) {
  Run({"--set", "cluster.nodes=8", "--set", "plan.dp=8"});
  ASSERT_EQ(summary_["gpus"], 64);
  EXPECT_EQ(TracedPids(), (std::set<int>{0, 16, 32, 48}));
}

TEST_F(TraceTest, TracesEveryGpuUpTo8) {
  Run({"--set", "cluster.nodes=1", "--set", "plan.dp=1"});
  ASSERT_EQ(summary_["gpus"], 8);
  EXPECT_EQ(TracedPids(), (std::set<int>{0, 1, 2, 3, 4, 5, 6, 7}));
}

// "trace: PATH (S MB, R of N ranks)" on stdout after the human summary.
TEST_F(TraceTest, PrintsTheTracesPathSizeAndRanks) {
  const fs::path trace = outdir() / "trace.json";
  const std::string line = "trace: " + trace.string() + " (";
  const size_t at = run_.out.find(line);
  ASSERT_NE(at, std::string::npos) << run_.out;
  std::smatch m;
  const std::string rest = run_.out.substr(at + line.size());
  ASSERT_TRUE(std::regex_search(rest, m, std::regex(R"(^([0-9]+\.[0-9]) MB, 4 of 16 ranks\)\n)")))
      << rest;
  EXPECT_NEAR(std::stod(m[1]), fs::file_size(trace) / 1e6, 0.05 + 1e-9);
}

// Gunzips a file with zlib; empty if it cannot.
std::string Gunzip(const fs::path& path) {
  gzFile in = gzopen(path.c_str(), "rb");
  if (in == nullptr) return "";
  std::string out;
  char buf[1 << 16];
  int n = 0;
  while ((n = gzread(in, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  const bool ok = n == 0;
  gzclose(in);
  return ok ? out : "";
}

TEST_F(TraceTest, GzipTraceGunzipsToThePlainTrace) {
  const std::string plain = ReadFile(outdir() / "trace.json");
  const fs::path gz = dir_.path() / "gz" / "trace.json.gz";
  Run({"--trace", gz.string()});
  const std::string packed = ReadFile(gz);
  ASSERT_GE(packed.size(), 18u);
  EXPECT_EQ(packed.substr(0, 2), "\x1f\x8b") << "gzip magic";
  EXPECT_LT(packed.size() * 5, plain.size()) << "JSON events compress well";
  const std::string unpacked = Gunzip(gz);
  EXPECT_TRUE(unpacked == plain) << "gunzipped " << unpacked.size() << " bytes, plain "
                                 << plain.size();
  EXPECT_FALSE(ParseJson(unpacked).is_discarded());
  EXPECT_FALSE(fs::exists(gz.string() + ".tmp"));
  EXPECT_NE(run_.out.find("trace: " + gz.string() + " ("), std::string::npos) << run_.out;
}

// The human summary's time split: "critical path    compute 1.2345 s, bubble ..." and
// "exposed comm     tp 0.0123 s, ...". Returns the parts by name.
std::map<std::string, double> PrintedBreakdown(const std::string& out) {
  std::map<std::string, double> parts;
  std::istringstream lines(out);
  std::string line;
  // A part's name is one or two words ("comm interference" is comm_interference).
  const std::regex part(R"(([a-z]+(?: [a-z]+)?) ([0-9]+\.[0-9]{4}) s)");
  while (std::getline(lines, line)) {
    const bool path = line.starts_with("  critical path ");
    const bool comm = line.starts_with("  exposed comm ");
    if (!path && !comm) continue;
    for (auto it = std::sregex_iterator(line.begin(), line.end(), part);
         it != std::sregex_iterator(); ++it) {
      std::string name = (*it)[1].str();
      std::replace(name.begin(), name.end(), ' ', '_');
      parts[(comm ? "exposed_" + name + "_comm" : name)] = std::stod((*it)[2]);
    }
  }
  return parts;
}

double PrintedStepTime(const std::string& out) {
  std::smatch m;
  if (!std::regex_search(out, m, std::regex(R"(step time +([0-9]+\.[0-9]{4}) s)"))) return -1;
  return std::stod(m[1]);
}

// Every class of time_breakdown_s is printed, and the printed parts (4 decimals, like
// the step time) add up to the printed step time within their rounding: 9 parts of at
// most 0.00005 s each, plus the step time's own.
void ExpectPrintedBreakdownAddsUp(const RunResult& run, const json& summary,
                                  const std::string& which) {
  const std::map<std::string, double> parts = PrintedBreakdown(run.out);
  double sum = 0;
  for (const auto& [key, seconds] : summary["time_breakdown_s"].items()) {
    ASSERT_TRUE(parts.count(key)) << which << ": " << key << " not printed in\n" << run.out;
    EXPECT_NEAR(parts.at(key), seconds.get<double>(), 0.00005 + 1e-12) << which << " " << key;
    sum += parts.at(key);
  }
  EXPECT_EQ(parts.size(), summary["time_breakdown_s"].size()) << run.out;
  const double step = PrintedStepTime(run.out);
  ASSERT_GT(step, 0) << run.out;
  EXPECT_NEAR(sum, step, 10 * 0.00005 + 1e-9) << which << "\n" << run.out;
}

TEST_F(TraceTest, PrintedBreakdownOfAMoeRunAddsUp) {
  RunResult run = RunMeshsim(
      {"run",
       (fs::path(MESHSIM_SOURCE_DIR) / "workloads/experiments/mixtral-8x7b-ep8.yaml").string(),
       "-o", (dir_.path() / "moe").string(), "--no-trace", "--reproducible", "-q"},
      dir_.path());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json summary = ParseJson(ReadFile(dir_.path() / "moe" / "summary.json"));
  ASSERT_GT(summary["time_breakdown_s"]["exposed_ep_comm"].get<double>(), 0.0)
      << "the test needs exposed expert-parallel traffic";
  ExpectPrintedBreakdownAddsUp(run, summary, "mixtral-8x7b-ep8");
}

TEST_F(TraceTest, PrintedBreakdownOfACpRunAddsUp) {
  // cp 4 x pp 4 on 16 GPUs: with FlashAttention the ring attention's KV transfers are
  // not all hidden behind the shorter attention kernels.
  Run({"--set", "plan.cp=4", "--set", "plan.tp=1", "--set", "plan.dp=1", "--set",
       "training.flash_attention=true", "--no-trace"});
  ASSERT_GT(summary_["time_breakdown_s"]["exposed_cp_comm"].get<double>(), 0.0)
      << "the test needs exposed context-parallel traffic";
  ExpectPrintedBreakdownAddsUp(run_, summary_, "cp 4");
}

// Two leaves (switch_ports 8: one node per leaf), 8 spines. Pipeline transfers between
// the nodes leave leaf0 for spine (destination) mod 8; with leaf0.spine2 failed, the
// choice is among 7 spines, so they move to other spines.
const std::vector<std::string> kFatTree = {"--set", "cluster.inter_node.kind=fat_tree", "--set",
                                           "cluster.inter_node.switch_ports=8"};
const std::vector<std::string> kFailLeaf0Spine2 = {
    "--set", "cluster.what_if={links: [{link: leaf0.spine2, failed: true}]}"};

std::vector<std::string> Concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST_F(TraceTest, FailedLeafSpineLinkReportsReroutedTraffic) {
  Run(Concat(kFatTree, {"--no-trace"}));
  EXPECT_FALSE(summary_.contains("rerouted")) << "healthy run";
  EXPECT_EQ(run_.out.find("what-if"), std::string::npos) << run_.out;
  Run(Concat(Concat(kFatTree, kFailLeaf0Spine2), {"--no-trace"}));
  ASSERT_TRUE(summary_.contains("rerouted")) << summary_.dump(2);
  const json& r = summary_["rerouted"];
  EXPECT_EQ(r["what_if"], json::array({"leaf0.spine2 failed"}));
  EXPECT_EQ(r["ignored"], false);
  EXPECT_GT(r["bytes"].get<double>(), 0.0);
  ASSERT_FALSE(r["links"].empty());
  double previous = INFINITY;
  for (const json& l : r["links"]) {
    const std::string name = l["name"].get<std::string>();
    EXPECT_TRUE(std::regex_match(name, std::regex("leaf[01]\\.spine[0-7]"))) << name;
    EXPECT_NE(name, "leaf0.spine2");
    EXPECT_GT(l["bytes"].get<double>(), 0.0);
    EXPECT_LE(l["bytes"].get<double>(), previous) << "busiest first";
    previous = l["bytes"].get<double>();
  }
  const std::string first = r["links"][0]["name"].get<std::string>();
  EXPECT_NE(run_.out.find("  what-if          leaf0.spine2 failed; "), std::string::npos)
      << run_.out;
  EXPECT_NE(run_.out.find(" rerouted over " + first + " ("), std::string::npos) << run_.out;
}

TEST_F(TraceTest, AlphaBetaSaysItIgnoresLinkFailures) {
  Run(Concat(Concat(kFatTree, kFailLeaf0Spine2),
             {"--set", "cluster.network_model=alpha_beta", "--no-trace"}));
  ASSERT_TRUE(summary_.contains("rerouted"));
  EXPECT_EQ(summary_["rerouted"]["ignored"], true);
  EXPECT_EQ(summary_["rerouted"]["bytes"], 0.0);
  EXPECT_NE(run_.out.find("what-if          leaf0.spine2 failed: ignored by network_model "
                          "alpha_beta"),
            std::string::npos)
      << run_.out;
}

TEST_F(TraceTest, HasNicThroughputCountersInANetworkProcess) {
  const int network = summary_["gpus"].get<int>();
  std::set<std::string> nics;
  for (const json& e : trace()["traceEvents"]) {
    if (e["pid"].get<int>() != network || e["ph"] != "C") continue;
    nics.insert(e["name"].get<std::string>());
    EXPECT_GE(e["args"]["gbps"].get<double>(), 0.0);
  }
  EXPECT_EQ(nics.size(), 16u) << "8 NICs on each of the 2 nodes";
}

void ExpectKeys(const json& object, const std::vector<std::string>& keys,
                const std::string& where) {
  ASSERT_TRUE(object.is_object()) << where << " is not an object";
  for (const std::string& k : keys) EXPECT_TRUE(object.contains(k)) << where << " lacks " << k;
}

TEST_F(TraceTest, SummaryHasEveryKeyOfTheSpec) {
  ASSERT_FALSE(summary_.is_discarded()) << "summary.json is not valid JSON";
  ExpectKeys(summary_,
             {"name",
              "meshsim_version",
              "gpus",
              "params_total",
              "params_active",
              "step_time_s",
              "tokens_per_s",
              "model_flops_per_step",
              "tflops_per_gpu",
              "mfu",
              "hfu",
              "bubble_fraction",
              "peak_memory_gib",
              "memory_budget_gib",
              "fits",
              "memory_breakdown_gib",
              "time_breakdown_s",
              "devices",
              "links",
              "sim"},
             "summary");
  ExpectKeys(summary_["memory_breakdown_gib"],
             {"weights", "gradients", "optimizer", "activations", "buffers"},
             "memory_breakdown_gib");
  ExpectKeys(summary_["time_breakdown_s"],
             {"compute", "exposed_tp_comm", "exposed_dp_comm", "exposed_pp_comm", "exposed_cp_comm",
              "exposed_ep_comm", "bubble", "optimizer"},
             "time_breakdown_s");
  ASSERT_TRUE(summary_["devices"].is_array());
  ASSERT_FALSE(summary_["devices"].empty());
  for (const json& d : summary_["devices"]) {
    ExpectKeys(d,
               {"rank", "node", "coords", "peak_memory_gib", "compute_busy_fraction",
                "comm_busy_fraction"},
               "device");
    ExpectKeys(d["coords"], {"tp", "pp", "dp", "cp", "ep"}, "device.coords");
  }
  ASSERT_TRUE(summary_["links"].is_array());
  ASSERT_FALSE(summary_["links"].empty());
  for (const json& l : summary_["links"]) ExpectKeys(l, {"name", "bytes", "busy_fraction"}, "link");
  ExpectKeys(summary_["sim"], {"events", "wall_s", "events_per_s", "peak_rss_mib"}, "sim");
}

TEST_F(TraceTest, SummaryDescribesTheDefaultExperiment) {
  EXPECT_EQ(summary_["name"], "default");
  EXPECT_EQ(summary_["gpus"], 16);
  EXPECT_EQ(summary_["devices"].size(), 16u);
  EXPECT_TRUE(summary_["fits"].get<bool>());
  EXPECT_LE(summary_["peak_memory_gib"].get<double>(), summary_["memory_budget_gib"].get<double>());
  // Model FLOPs per step (Narayanan et al. 2021: backward = 2 x forward) of Llama-2 7B, s =
  // h = 4096, 32 layers, SwiGLU ffn f = 11008, vocab v = 32000, 32 sequences: per layer QKV
  // 6sh^2 + projection 2sh^2 + attention core 4s^2h + MLP 6shf = 1,932,735,283,200; forward
  // 32 x that + logits 2shv = 62,921,270,886,400; the step 3 x 32 x forward = 6.0404420050944e15.
  // MFU is those FLOPs over 16 H100s at 989 TFLOP/s for the step time.
  const double flops = 6.0404420050944e15;
  EXPECT_NEAR(summary_["model_flops_per_step"].get<double>(), flops, 1e-12 * flops);
  EXPECT_NEAR(summary_["mfu"].get<double>(),
              flops / (summary_["step_time_s"].get<double>() * 16 * 989e12), 1e-12);
  EXPECT_GE(summary_["hfu"].get<double>(), summary_["mfu"].get<double>());
}

TEST_F(TraceTest, TimeBreakdownSumsToTheStepTime) {
  double sum = 0;
  for (const auto& [part, seconds] : summary_["time_breakdown_s"].items()) {
    EXPECT_GE(seconds.get<double>(), 0.0) << part;
    sum += seconds.get<double>();
  }
  const double step = summary_["step_time_s"].get<double>();
  EXPECT_NEAR(sum, step, 1e-6 * step);
}

TEST_F(TraceTest, TraceRanksSelectsExactlyThoseGpus) {
  Run({"--trace-ranks", "0,3"});
  EXPECT_EQ(TracedPids(), (std::set<int>{0, 3}));
  EXPECT_FALSE(Events("X").empty());
  EXPECT_FALSE(Events("C").empty());
}

TEST_F(TraceTest, SummaryDashPrintsJsonOnStdout) {
  const json from_file = summary_;
  Run({"--summary", "-"});
  const json printed = ParseJson(run_.out);
  ASSERT_FALSE(printed.is_discarded()) << "stdout is not JSON: " << run_.out;
  EXPECT_EQ(printed, from_file);
}

// Without -q the trace line goes to stderr then, so that stdout stays JSON.
TEST_F(TraceTest, SummaryDashPrintsTheTraceLineOnStderr) {
  const RunResult r = RunMeshsim(
      {"run", kDefaultExperiment, "-o", (dir_.path() / "dash").string(), "--summary", "-"},
      dir_.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(ParseJson(r.out).is_discarded()) << r.out;
  EXPECT_NE(r.err.find("trace: " + (dir_.path() / "dash" / "trace.json").string() + " ("),
            std::string::npos)
      << r.err;
}

TEST_F(TraceTest, SetOverrideChangesTheSummary) {
  const json before = summary_;
  Run({"--set", "plan.micro_batch=2"});
  EXPECT_NE(summary_, before);
  EXPECT_GT(summary_["memory_breakdown_gib"]["activations"].get<double>(),
            before["memory_breakdown_gib"]["activations"].get<double>());
  EXPECT_EQ(summary_["model_flops_per_step"], before["model_flops_per_step"])
      << "the same global batch should cost the same model FLOPs";
}

}  // namespace

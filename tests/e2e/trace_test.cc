// End-to-end tests of `meshsim run` outputs on the default experiment: the Chrome trace
// (trace.json) is well-formed and consistent with the summary, and summary.json carries
// every key of SPEC.md's summary table.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

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

TEST_F(TraceTest, ProcessNamesGiveEachGpusRankAndNode) {
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

TEST_F(TraceTest, TracesEveryGpuByDefault) {
  std::set<int> expected;
  for (int r = 0; r < summary_["gpus"].get<int>(); ++r) expected.insert(r);
  EXPECT_EQ(TracedPids(), expected);
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

// The resource guard's inputs and its use by sweeps and the planner: the memory a run may
// take (MemAvailable lowered by a cgroup limit), and configurations skipped with the
// estimate rather than simulated when they would not fit.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "sim/config/loader.h"
#include "sim/engine/resource_estimate.h"
#include "sim/sweep/evaluate.h"
#include "test_fixtures.h"

namespace meshsim {
namespace {

namespace fs = std::filesystem;

// A fresh folder under the system's temporary folder, removed at the end of the test.
class Folder {
 public:
  explicit Folder(const std::string& name)
      : path_(fs::temp_directory_path() / ("meshsim_guard_" + name)) {
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~Folder() { fs::remove_all(path_); }
  std::string Write(const std::string& file, const std::string& text) const {
    const fs::path p = path_ / file;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p.string();
  }
  std::string Path(const std::string& file = "") const { return (path_ / file).string(); }

 private:
  fs::path path_;
};

constexpr const char* kMeminfo =
    "MemTotal:        4000 kB\nMemFree:         1500 kB\nMemAvailable:    2000 kB\n";

TEST(AvailableMemory, IsMemAvailableWithoutACgroupLimit) {
  Folder f("plain");
  const std::string meminfo = f.Write("meminfo", kMeminfo);
  f.Write("cgroup/memory.max", "max\n");  // cgroup v2 without a limit
  const AvailableMemory m = ReadAvailableMemory(meminfo, f.Path("cgroup"));
  EXPECT_EQ(m.bytes, 2000.0 * 1024);
  EXPECT_EQ(m.source, "MemAvailable of " + meminfo);
}

TEST(AvailableMemory, IsWhatTheCgroupV2LimitLeavesWhenLower) {
  Folder f("v2");
  const std::string meminfo = f.Write("meminfo", kMeminfo);
  // 1,000,000 bytes allowed, 400,000 used: 600,000 left < 2,048,000 of MemAvailable.
  f.Write("cgroup/memory.max", "1000000\n");
  f.Write("cgroup/memory.current", "400000\n");
  const AvailableMemory m = ReadAvailableMemory(meminfo, f.Path("cgroup"));
  EXPECT_EQ(m.bytes, 600000.0);
  EXPECT_NE(m.source.find("memory.max"), std::string::npos);
  // A limit above what the host has does not raise it.
  f.Write("cgroup/memory.max", "900000000\n");
  EXPECT_EQ(ReadAvailableMemory(meminfo, f.Path("cgroup")).bytes, 2000.0 * 1024);
}

TEST(AvailableMemory, ReadsACgroupV1LimitAndIgnoresItsNoLimitValue) {
  Folder f("v1");
  const std::string meminfo = f.Write("meminfo", kMeminfo);
  f.Write("cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");  // no limit
  f.Write("cgroup/memory/memory.usage_in_bytes", "100\n");
  EXPECT_EQ(ReadAvailableMemory(meminfo, f.Path("cgroup")).bytes, 2000.0 * 1024);
  f.Write("cgroup/memory/memory.limit_in_bytes", "1000\n");  // 1000 - 100 used
  EXPECT_EQ(ReadAvailableMemory(meminfo, f.Path("cgroup")).bytes, 900.0);
}

TEST(AvailableMemory, IsZeroWhenNothingCanBeRead) {
  Folder f("none");
  EXPECT_EQ(ReadAvailableMemory(f.Path("no_meminfo"), f.Path("no_cgroup")).bytes, 0.0);
}

// A small model on one node, replayed in full (a straggler forces it), so that the guard
// estimates it.
Experiment FullReplayOnOneNode() {
  Experiment e;
  e.name = "guarded";
  e.model = testing::SmallModel();
  e.cluster = testing::OneNode(8);
  e.cluster.network_model = NetworkModelKind::kAlphaBeta;
  e.cluster.what_if.stragglers.push_back({0, 1.5});
  e.plan.tp = 2;
  e.plan.dp = 4;
  e.plan.global_batch = 16;
  return e;
}

TEST(SweepGuard, SkipsAConfigurationAboveTheMemoryWithItsEstimate) {
  // Any estimate holds at least the 24 MB base (resource_estimate.cc): 1 MiB is too little.
  const AvailableMemory tiny{1024.0 * 1024, "test limit"};
  const Evaluation ev = Evaluate(FullReplayOnOneNode(), {}, tiny);
  EXPECT_EQ(ev.status, ConfigStatus::kError);
  EXPECT_FALSE(ev.simulated);
  EXPECT_EQ(ev.message.rfind("skipped: expected a run that fits in 0.00 GiB (test limit), "
                             "found an estimate of ",
                             0),
            0u)
      << ev.message;
  EXPECT_NE(ev.message.find("full replay of 8 of 8 ranks"), std::string::npos) << ev.message;
}

TEST(SweepGuard, SimulatesWhatFitsAndLeavesSmallSymmetricRunsUnestimated) {
  const AvailableMemory plenty{64.0 * 1024 * 1024 * 1024, "test limit"};
  EXPECT_EQ(Evaluate(FullReplayOnOneNode(), {}, plenty).status, ConfigStatus::kOk);
  // Symmetric and under kGuardMinRanks ranks: not estimated, so even 1 byte lets it run.
  Experiment symmetric = FullReplayOnOneNode();
  symmetric.cluster.what_if.stragglers.clear();
  const AvailableMemory one_byte{1, "test limit"};
  const Evaluation ev = Evaluate(symmetric, {}, one_byte);
  EXPECT_TRUE(ev.simulated);
  EXPECT_EQ(ev.status, ConfigStatus::kOk) << ev.message;
}

TEST(SweepGuard, EstimatesLargeMeshesEvenInSymmetricReplay) {
  Result<Experiment> e = LoadExperimentFile(std::string(MESHSIM_SOURCE_DIR) +
                                            "/workloads/experiments/gpt-1t-3072.yaml");
  ASSERT_TRUE(e.ok());
  EXPECT_NE(GuardConfiguration(e.value(), 1024.0 * 1024, "test limit"), "");
  EXPECT_EQ(GuardConfiguration(e.value(), 64.0 * 1024 * 1024 * 1024, "test limit"), "");
  EXPECT_EQ(GuardConfiguration(e.value(), 0, "no limit"), "");
}

}  // namespace
}  // namespace meshsim

// End-to-end determinism: the same experiment run twice with --reproducible gives
// byte-identical summary.json and trace.json, and a run without it differs only in the
// host measurements (sim.wall_s, sim.events_per_s, sim.peak_rss_mib).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/e2e/meshsim_runner.h"

namespace {

namespace fs = std::filesystem;
using namespace meshsim::e2e;
using nlohmann::json;

const std::string kDefaultExperiment =
    (fs::path(MESHSIM_SOURCE_DIR) / "workloads/experiments/default.yaml").string();

// Runs the default experiment into `outdir` with `extra` options; fails the test on a
// non-zero exit.
void RunDefault(const fs::path& outdir, const fs::path& scratch,
                const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"run", kDefaultExperiment, "-o", outdir.string(), "-q"};
  args.insert(args.end(), extra.begin(), extra.end());
  const RunResult r = RunMeshsim(args, scratch);
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

// The summary without the keys that measure the host rather than the simulation.
json WithoutHostTimings(json summary) {
  for (const char* key : {"wall_s", "events_per_s", "peak_rss_mib"}) summary["sim"].erase(key);
  return summary;
}

TEST(Determinism, ReproducibleRunsAreByteIdentical) {
  TempDir dir;
  ASSERT_NO_FATAL_FAILURE(RunDefault(dir.path() / "a", dir.path(), {"--reproducible"}));
  ASSERT_NO_FATAL_FAILURE(RunDefault(dir.path() / "b", dir.path(), {"--reproducible"}));
  for (const char* file : {"summary.json", "trace.json"}) {
    const std::string a = ReadFile(dir.path() / "a" / file);
    const std::string b = ReadFile(dir.path() / "b" / file);
    ASSERT_FALSE(a.empty()) << file;
    EXPECT_TRUE(a == b) << file << " differs between two --reproducible runs";
  }
}

TEST(Determinism, ReproducibleZeroesOnlyTheHostTimings) {
  TempDir dir;
  ASSERT_NO_FATAL_FAILURE(RunDefault(dir.path() / "repro", dir.path(), {"--reproducible"}));
  ASSERT_NO_FATAL_FAILURE(RunDefault(dir.path() / "plain", dir.path(), {}));
  const json repro = json::parse(ReadFile(dir.path() / "repro" / "summary.json"), nullptr, false);
  const json plain = json::parse(ReadFile(dir.path() / "plain" / "summary.json"), nullptr, false);
  ASSERT_FALSE(repro.is_discarded());
  ASSERT_FALSE(plain.is_discarded());
  EXPECT_EQ(repro["sim"]["wall_s"], 0);
  EXPECT_GT(plain["sim"]["wall_s"].get<double>(), 0.0);
  EXPECT_GT(plain["sim"]["peak_rss_mib"].get<double>(), 0.0);
  EXPECT_EQ(WithoutHostTimings(plain), WithoutHostTimings(repro));
  EXPECT_TRUE(ReadFile(dir.path() / "plain" / "trace.json") ==
              ReadFile(dir.path() / "repro" / "trace.json"))
      << "the trace holds no host timings, so --reproducible should not change it";
}

}  // namespace

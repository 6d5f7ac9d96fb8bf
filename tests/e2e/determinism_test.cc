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

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct RunResult {
  int exit_code = -1;  // -1 when the process did not exit normally
  std::string out;
  std::string err;
};

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string ShellQuote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// A fresh, uniquely named folder under the system temp directory, removed on destruction.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    const std::string test = info ? std::string(info->name()) : std::string("none");
    path_ = fs::temp_directory_path() / ("meshsim-e2e-" + std::to_string(::getpid()) + "-" + test +
                                         "-" + std::to_string(counter++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// Runs meshsim with `args`, capturing stdout and stderr through files in `scratch`.
RunResult RunMeshsim(const std::vector<std::string>& args, const fs::path& scratch) {
  const fs::path out = scratch / "stdout.txt";
  const fs::path err = scratch / "stderr.txt";
  std::string cmd = ShellQuote(MESHSIM_BIN);
  for (const std::string& a : args) cmd += " " + ShellQuote(a);
  cmd += " >" + ShellQuote(out.string()) + " 2>" + ShellQuote(err.string());
  const int status = std::system(cmd.c_str());
  RunResult r;
  r.exit_code = status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = ReadFile(out);
  r.err = ReadFile(err);
  return r;
}

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

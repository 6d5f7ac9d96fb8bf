// End-to-end: `meshsim bench-collective` prints nccl-tests' table, and what-if inputs
// are checked like any other input.
#include <gtest/gtest.h>

#include "tests/e2e/meshsim_runner.h"

namespace {

using namespace meshsim::e2e;

// The last row (1 GiB) is a regression check of the fitted efficiency, not a validation:
// selene-a100's network 0.77 was set from nccl-tests' 230 GB/s over the 300 GB/s NVLink,
// so ring/Simple's 8.4 us launch + 14 steps x (2^30 / 8 B / 231e9 B/s + 3.4 us) = 8190.4
// us give busbw 2^30 / 8190.4 us x 14/8 = 229.42 GB/s: the input comes back, less NCCL's
// latency.
TEST(BenchCollectiveCli, CsvHasNcclTestsColumnsAndTheFittedBusBandwidth) {
  TempDir dir;
  const RunResult r = RunMeshsim(
      {"bench-collective", "--cluster", SourcePath("topologies/selene-a100.yaml").string(), "--op",
       "all_reduce", "--gpus", "8", "--min-bytes", "1024", "--max-bytes", "1073741824", "--csv"},
      dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream lines(r.out);
  std::string header, row, last;
  std::getline(lines, header);
  EXPECT_EQ(header, "bytes,time_us,algbw_gbps,busbw_gbps");
  int rows = 0;
  while (std::getline(lines, row)) {
    ++rows;
    last = row;
  }
  EXPECT_EQ(rows, 21);  // 1 KiB .. 1 GiB, doubling
  const double busbw = std::stod(last.substr(last.rfind(',') + 1));
  EXPECT_NEAR(busbw, 229.42, 0.01);
}

// The table names how NCCL's tuner model ran each size; --protocol and --channels force
// them (as NCCL_PROTO and NCCL_MIN/MAX_NCHANNELS).
TEST(BenchCollectiveCli, TableShowsAlgorithmProtocolAndChannels) {
  TempDir dir;
  const std::string cluster = SourcePath("topologies/selene-a100.yaml").string();
  RunResult r = RunMeshsim({"bench-collective", "--cluster", cluster, "--gpus", "8", "--min-bytes",
                            "65536", "--max-bytes", "1073741824"},
                           dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("ring/LL/2"), std::string::npos) << r.out;       // 64 KiB
  EXPECT_NE(r.out.find("ring/LL128/24"), std::string::npos) << r.out;   // 4 MiB
  EXPECT_NE(r.out.find("ring/Simple/24"), std::string::npos) << r.out;  // 1 GiB
  EXPECT_NE(r.out.find("NCCL model (us)"), std::string::npos) << r.out;
  r = RunMeshsim({"bench-collective", "--cluster", cluster, "--gpus", "8", "--min-bytes", "65536",
                  "--max-bytes", "65536", "--protocol", "Simple", "--channels", "4"},
                 dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("ring/Simple/2"), std::string::npos) << r.out;
}

TEST(BenchCollectiveCli, UnknownProtocolBadChannelsAndHugeSizesAreBadInput) {
  TempDir dir;
  const std::string cluster = SourcePath("topologies/selene-a100.yaml").string();
  RunResult r =
      RunMeshsim({"bench-collective", "--cluster", cluster, "--protocol", "LL64"}, dir.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--protocol"), std::string::npos) << r.err;
  r = RunMeshsim({"bench-collective", "--cluster", cluster, "--channels", "65"}, dir.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--channels"), std::string::npos) << r.err;
  // Sizes whose simulated time would leave SimTime's range.
  r = RunMeshsim({"bench-collective", "--cluster", cluster, "--max-bytes", "1e16"}, dir.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--max-bytes"), std::string::npos) << r.err;
}

TEST(BenchCollectiveCli, UnknownOpIsBadInput) {
  TempDir dir;
  const RunResult r =
      RunMeshsim({"bench-collective", "--cluster",
                  SourcePath("topologies/selene-a100.yaml").string(), "--op", "allreduce"},
                 dir.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--op"), std::string::npos) << r.err;
}

TEST(WhatIfCli, UnknownLinkNameIsBadInputWithItsLine) {
  TempDir dir;
  const fs::path exp = dir.path() / "whatif.yaml";
  WriteFile(exp,
            "name: whatif\n"
            "model: " +
                SourcePath("workloads/models/llama2-7b.yaml").string() +
                "\n"
                "cluster: " +
                SourcePath("topologies/dgx-h100.yaml").string() +
                "\n"
                "cluster_overrides:\n"
                "  nodes: 2\n"
                "  what_if:\n"
                "    links: [{link: node7.nic0, bandwidth_factor: 0.5}]\n"
                "plan: {tp: 2, pp: 4, dp: 2, global_batch: 32}\n");
  const RunResult r =
      RunMeshsim({"run", exp.string(), "-o", (dir.path() / "out").string()}, dir.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("whatif.yaml:7:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("cluster.what_if.links[0].link"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("node7.nic0"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir.path() / "out"));
}

TEST(WhatIfCli, StragglerRunsAndReplaysEveryRank) {
  TempDir dir;
  const fs::path exp = dir.path() / "straggler.yaml";
  WriteFile(exp,
            "name: straggler\n"
            "model: " +
                SourcePath("workloads/models/llama2-7b.yaml").string() +
                "\n"
                "cluster: " +
                SourcePath("topologies/dgx-h100.yaml").string() +
                "\n"
                "cluster_overrides:\n"
                "  nodes: 2\n"
                "  what_if: {stragglers: [{gpu: 3, slowdown: 1.3}]}\n"
                "plan: {tp: 2, pp: 4, dp: 2, global_batch: 32}\n");
  const RunResult r = RunMeshsim({"run", exp.string(), "--summary", "-", "--no-trace", "-q", "-o",
                                  (dir.path() / "out").string()},
                                 dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"replayed_ranks\": 16"), std::string::npos);
}

// --nvls off runs an NVL72 rack's all-reduce as NCCL does with NCCL_NVLS_ENABLE=0: a
// Simple ring whose fixed cost is NCCL's ring latency, 8.4 us + 2 x 71 steps x 3.4 us =
// 491.2 us (tuning.cc baseLat, hwLat NVLink ring Simple), read off two sizes as
// 2 t(512 MiB) - t(1 GiB); NVLink SHARP is the default there.
TEST(BenchCollectiveCli, NvlsOffRunsAnNvl72RackOnNcclsRing) {
  TempDir dir;
  const std::string cluster = SourcePath("topologies/gb200-nvl72.yaml").string();
  auto run = [&](const std::string& nvls) {
    return RunMeshsim({"bench-collective", "--cluster", cluster, "--gpus", "72", "--min-bytes",
                       "536870912", "--max-bytes", "1073741824", "--nvls", nvls},
                      dir.path());
  };
  RunResult r = run("auto");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("nvls/Simple/24"), std::string::npos) << r.out;
  r = run("off");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("ring/Simple/24"), std::string::npos) << r.out;
  std::istringstream lines(r.out);
  std::string line;
  std::vector<double> times;
  while (std::getline(lines, line)) {
    std::istringstream cells(line);
    double bytes = 0, time_us = 0;
    if (line[0] != '#' && (cells >> bytes >> time_us)) times.push_back(time_us);
  }
  ASSERT_EQ(times.size(), 2u) << r.out;
  EXPECT_NEAR(2 * times[0] - times[1], 8.4 + 142 * 3.4, 2.0);
  r = run("maybe");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--nvls"), std::string::npos) << r.err;
}

}  // namespace

// End-to-end tests of JAX-style plans in `meshsim plan --jax` and `meshsim sweep` (mesh
// sizes as axes): what a user sees, and bad input.
#include <gtest/gtest.h>

#include <string>

#include "meshsim_runner.h"

namespace meshsim::e2e {
namespace {

std::vector<std::string> PlanArgs(int gpus) {
  return {"plan",
          "--model",
          SourcePath("workloads/models/llama2-7b.yaml").string(),
          "--cluster",
          SourcePath("topologies/dgx-h100.yaml").string(),
          "--gpus",
          std::to_string(gpus),
          "--jax",
          "-j",
          "1"};
}

TEST(JaxCli, PlannerRowsAreInMeshTerms) {
  TempDir dir;
  std::vector<std::string> args = PlanArgs(4);
  args.insert(args.end(), {"--top", "0", "--csv", (dir.path() / "plans.csv").string()});
  const RunResult r = RunMeshsim(args, dir.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("  #  stage   data tensor embed"), std::string::npos) << r.out;
  // 4 chips of one node: 6 (stage, data, tensor) splits with embed [], 3 with data > 1
  // and embed data (see JaxPlanner.FourChipsOfOneNode).
  EXPECT_NE(r.out.find("of 9 plans fit"), std::string::npos) << r.out;
  const std::string csv = ReadFile(dir.path() / "plans.csv");
  EXPECT_EQ(csv.rfind("config,status,plan.mesh.ici.stage,plan.mesh.ici.data,plan.mesh.ici.tensor,"
                      "plan.mesh.dcn.stage,plan.mesh.dcn.data,plan.mesh.dcn.tensor,"
                      "plan.rules.embed,plan.tp,",
                      0),
            0u)
      << csv.substr(0, 300);
}

TEST(JaxCli, PlannerRefusesSetsOfTheMeshItVaries) {
  TempDir dir;
  std::vector<std::string> args = PlanArgs(4);
  args.insert(args.end(), {"--set", "plan.mesh.ici=[1, 1, 4]"});
  const RunResult r = RunMeshsim(args, dir.path());
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.err.find("plan.mesh"), std::string::npos) << r.err;
}

TEST(JaxCli, SweepOverMeshSizes) {
  TempDir dir;
  const fs::path sweep = dir.path() / "s.yaml";
  WriteFile(sweep,
            "name: s\nbase: " + SourcePath("workloads/experiments/llama2-7b-jax.yaml").string() +
                "\naxes:\n  plan.mesh.ici.data: auto\n  plan.mesh.ici.tensor: auto\n");
  const RunResult r =
      RunMeshsim({"sweep", sweep.string(), "-o", (dir.path() / "out").string(), "-q"}, dir.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // data x tensor = 8 / stage 2 = 4: (1,4) (2,2) (4,1).
  EXPECT_NE(r.out.find("3 configurations"), std::string::npos) << r.out;
  const std::string csv = ReadFile(dir.path() / "out" / "results.csv");
  // data 1, tensor 4 (as run), then plan.tp 4, plan.pp 4 (stage 2 x 2), plan.dp 1.
  EXPECT_NE(csv.find("\n0,ok,1,4,4,4,1,"), std::string::npos) << csv.substr(0, 400);
}

TEST(JaxCli, SweepWithAnUnknownMeshAxisIsBadInput) {
  TempDir dir;
  const fs::path sweep = dir.path() / "s.yaml";
  WriteFile(sweep,
            "name: s\nbase: " + SourcePath("workloads/experiments/llama2-7b-jax.yaml").string() +
                "\naxes:\n  plan.mesh.dcn.fsdp: [1, 2]\n");
  const RunResult r =
      RunMeshsim({"sweep", sweep.string(), "-o", (dir.path() / "out").string()}, dir.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("s.yaml:4:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("axes.plan.mesh.dcn.fsdp"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir.path() / "out"));
}

}  // namespace
}  // namespace meshsim::e2e

// One MTP module run several times (model.mtp_repeated_layer, Megatron-Core's
// mtp_use_repeated_layer): each pass computes what a module computes, only the first MTP
// layer holds parameters; its YAML key, its check and `import megatron`'s flags.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "sim/config/import_megatron.h"
#include "sim/config/loader.h"
#include "sim/engine/simulation.h"
#include "sim/plan/validate.h"
#include "sim/schedule/memory_bound.h"
#include "sim/schedule/stage_costs.h"
#include "sim/workload/param_count.h"
#include "sim/workload/transformer.h"
#include "tests/unit/test_fixtures.h"

namespace meshsim {
namespace {

Status Validate(const Experiment& e) {
  return ValidatePlan(e.plan, e.training, e.model, e.cluster);
}

ModelSpec DeepseekV3() {
  Result<ModelSpec> loaded =
      LoadModelFile(std::string(MESHSIM_SOURCE_DIR) + "/workloads/models/deepseek-v3.yaml");
  EXPECT_TRUE(loaded.ok()) << loaded.error().ToString();
  return loaded.value();
}

// DeepSeek-V3's module is 11,610,067,968 parameters (hybrid_models_test.cc, Mtp.
// AddsOneLayerAndItsProjection): two separate modules add twice that, one module run
// twice adds it once; the FLOPs of two passes are the same either way.
TEST(MtpRepeatedLayer, ParametersOnceFlopsPerPass) {
  ModelSpec m = DeepseekV3();
  const double base = CountParams(m).total;
  m.mtp_layers = 2;
  const double two = CountParams(m).total;
  const double two_flops = ModelFlopsPerStep(m, 1);
  m.mtp_repeated_layer = true;
  EXPECT_FALSE(m.SharesMtpWeights(61));
  EXPECT_TRUE(m.SharesMtpWeights(62));
  EXPECT_EQ(m.MtpWeightModules(), 1);
  EXPECT_DOUBLE_EQ(two - base, 2 * 11610067968.0);
  EXPECT_DOUBLE_EQ(CountParams(m).total - base, 11610067968.0);
  EXPECT_DOUBLE_EQ(ModelFlopsPerStep(m, 1), two_flops);
}

// A small MoE model on 2 stages with 2 MTP passes: the last stage holds one module's
// parameters (as with mtp_layers 1) and both passes' ops.
Experiment MoeWithMtp(int zero) {
  Experiment e = testing::SmallPipeline(2, 4, ScheduleKind::kOneFOneB);
  e.model.experts = 4;
  e.model.top_k = 2;
  e.model.mtp_layers = 2;
  e.model.mtp_repeated_layer = true;
  e.cluster = testing::OneNode(4);
  e.plan.dp = 2;
  e.plan.ep = 2;
  e.plan.zero = zero;
  e.plan.global_batch = 8;
  return e;
}

TEST(MtpRepeatedLayer, LastStageHoldsOneModule) {
  const Experiment e = MoeWithMtp(1);
  ASSERT_TRUE(Validate(e).ok()) << Validate(e).error().ToString();
  Experiment one = e;
  one.model.mtp_layers = 1;
  one.model.mtp_repeated_layer = false;
  const StageCosts repeated(e.model, e.plan, e.training), single(one.model, one.plan, one.training);
  EXPECT_DOUBLE_EQ(repeated.StageParams(1).dense, single.StageParams(1).dense);
  EXPECT_DOUBLE_EQ(repeated.StageParams(1).expert, single.StageParams(1).expert);
  EXPECT_DOUBLE_EQ(repeated.LayerParams(9).dense, 0.0);
  EXPECT_GT(repeated.LayerParams(8).dense, 0.0);
}

// The replay runs both passes (as long as two separate modules take, with FLOPs-only
// compute and a free network), holds less memory than two separate modules at its peak,
// and the sweep's memory bound stays below that peak; under ZeRO-1 and ZeRO-3 alike.
TEST(MtpRepeatedLayer, ReplaysBothPassesWithOneModulesStates) {
  for (int zero : {1, 3}) {
    const Experiment e = MoeWithMtp(zero);
    Experiment separate = e;
    separate.model.mtp_repeated_layer = false;
    ASSERT_TRUE(Validate(e).ok()) << Validate(e).error().ToString();
    const auto rep = Simulate(e, {}, testing::FakeModels());
    const auto sep = Simulate(separate, {}, testing::FakeModels());
    ASSERT_TRUE(rep->replay.completed) << rep->replay.stall;
    EXPECT_EQ(rep->replay.step_time, sep->replay.step_time) << "zero " << zero;
    auto peak = [](const Simulation& s) {
      double p = 0;
      for (const DeviceMemory& m : s.replay.memory) p = std::max(p, m.peak_bytes);
      return p;
    };
    EXPECT_LT(peak(*rep), peak(*sep)) << "zero " << zero;
    EXPECT_LE(EstimatePeakMemory(e).Total(), peak(*rep) * (1 + 1e-12)) << "zero " << zero;
  }
}

TEST(MtpRepeatedLayer, YamlKeyNeedsMtpLayers) {
  namespace fs = std::filesystem;
  const fs::path path =
      fs::temp_directory_path() / ("meshsim-mtp-test-" + std::to_string(::getpid()) + ".yaml");
  const std::string base =
      "name: m\nlayers: 2\nhidden: 16\nheads: 2\nffn_hidden: 32\nvocab: 100\nseq_len: 64\n"
      "mtp_repeated_layer: true\n";
  auto load = [&](const std::string& text) {
    {
      std::ofstream out(path, std::ios::binary);
      out << text;
    }
    Result<ModelSpec> m = LoadModelFile(path.string());
    fs::remove(path);
    return m;
  };
  const Result<ModelSpec> bad = load(base);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().key, "mtp_repeated_layer");
  EXPECT_NE(bad.error().message.find("found mtp_layers = 0"), std::string::npos)
      << bad.error().ToString();
  EXPECT_GT(bad.error().line, 0);
  const Result<ModelSpec> ok = load(base + "mtp_layers: 2\n");
  ASSERT_TRUE(ok.ok()) << ok.error().ToString();
  EXPECT_TRUE(ok.value().mtp_repeated_layer);
  EXPECT_EQ(ok.value().mtp_layers, 2);
}

TEST(MtpRepeatedLayer, ImportMegatronMapsTheFlags) {
  const std::string flags =
      "--num-layers 4 --hidden-size 1024 --num-attention-heads 16 --seq-length 128 ";
  Result<MegatronImport> r =
      ParseMegatronArgs(flags + "--mtp-num-layers 2 --mtp-use-repeated-layer");
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r.value().model.mtp_layers, 2);
  EXPECT_TRUE(r.value().model.mtp_repeated_layer);
  EXPECT_TRUE(r.value().unknown.empty());
  r = ParseMegatronArgs(flags + "--mtp-num-layers 1");
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r.value().model.mtp_layers, 1);
  EXPECT_FALSE(r.value().model.mtp_repeated_layer);
}

}  // namespace
}  // namespace meshsim

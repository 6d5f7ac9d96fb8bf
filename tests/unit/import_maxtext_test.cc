// Unit tests of the MaxText importer (sim/config/import_maxtext.h): the synthetic models'
// dimensions and parameter counts, the ICI/DCN auto fill, the layers' precedence, the
// batch, the rules and their approximations, and bad input named by its MaxText key.
#include "sim/config/import_maxtext.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "sim/workload/param_count.h"

namespace meshsim {
namespace {

std::string ReadSource(const std::string& relative) {
  std::ifstream in(std::string(MESHSIM_SOURCE_DIR) + "/" + relative);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// base.yml @76bd53b0 (bundled) with `overrides`, on `slices` slices of 64 chips.
MaxTextImportOptions Base(std::vector<std::string> overrides, int slices = 1) {
  MaxTextImportOptions o;
  o.base = {"base-76bd53b0.yml", ReadSource("workloads/maxtext/base-76bd53b0.yml")};
  o.overrides = std::move(overrides);
  o.slices = slices;
  o.chips_per_slice = 64;
  o.name = "test";
  return o;
}

MaxTextImport Import(const MaxTextImportOptions& o) {
  Result<MaxTextImport> r = ImportMaxTextConfig(o);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().ToString());
  return r.ok() ? r.value() : MaxTextImport{};
}

InputError ImportError(const MaxTextImportOptions& o) {
  Result<MaxTextImport> r = ImportMaxTextConfig(o);
  EXPECT_FALSE(r.ok());
  return r.ok() ? InputError{} : r.error();
}

// The v5p 32B script (MaxText/configs/v5p/32b.sh @76bd53b0): its model and plan keys.
const std::vector<std::string> kV5p32b = {"per_device_batch_size=8",   "remat_policy=minimal",
                                          "global_parameter_scale=32", "ici_fsdp_parallelism=-1",
                                          "ici_tensor_parallelism=4",  "max_target_length=2048",
                                          "attention=flash",           "int8_training=false"};

std::vector<std::string> AxisNames(const JaxPlan& jax, LogicalDim d) {
  std::vector<std::string> names;
  for (const int a : jax.Rule(d)) names.push_back(jax.axes[a].name);
  return names;
}

using Names = std::vector<std::string>;

TEST(ImportMaxText, Scale32ModelHasThePublishedDimensionsAndAbout32BParameters) {
  const ModelSpec m = Import(Base(kV5p32b)).model;
  // log2(32) = 5 = 3*1 + 2: heads and mlp x2^2, emb x2^2, layers x2^1 of base.yml's
  // 2560 / 8 heads / 8192 / 16 layers.
  EXPECT_EQ(m.hidden, 10240);
  EXPECT_EQ(m.heads, 32);
  EXPECT_EQ(m.kv_heads, 32);
  EXPECT_EQ(m.head_dim, 256);  // 32 x 256 = 8192 != 10240: written explicitly
  EXPECT_EQ(m.ffn_hidden, 32768);
  EXPECT_EQ(m.layers, 32);
  EXPECT_EQ(m.vocab, 32768);
  EXPECT_EQ(m.seq_len, 2048);
  EXPECT_TRUE(m.tied_embeddings);
  EXPECT_EQ(m.ffn_kind, FfnKind::kGelu);  // ["relu"]: 2 matrices
  // By hand: per layer Q, K, V, O 4 x 10240 x 8192 = 335,544,320, MLP 2 x 10240 x 32768 =
  // 671,088,640, two norms 20,480: 1,006,653,440; x 32 layers = 32,212,910,080 (the
  // "~32.2B" of public_runs.md section 4); + tied embedding 32768 x 10240 = 335,544,320
  // + final norm 10,240 = 32,548,464,640.
  EXPECT_DOUBLE_EQ(CountParams(m).total, 32548464640.0);
}

TEST(ImportMaxText, Scale1024ScalesAsGetIndividualScales) {
  // log2(1024) = 10 = 3*3 + 1: heads and mlp x16, emb x8, layers x8.
  const ModelSpec m = Import(Base({"global_parameter_scale=1024", "ici_tensor_parallelism=16",
                                   "per_device_batch_size=2"}))
                          .model;
  EXPECT_EQ(m.hidden, 20480);
  EXPECT_EQ(m.heads, 128);
  EXPECT_EQ(m.ffn_hidden, 131072);
  EXPECT_EQ(m.layers, 128);
}

TEST(ImportMaxText, ScaleThatIsNotAPowerOfTwoIsNamed) {
  const InputError e = ImportError(Base({"global_parameter_scale=48"}));
  EXPECT_EQ(e.file, "command line");
  EXPECT_EQ(e.key, "global_parameter_scale");
  EXPECT_NE(e.message.find("power of 2"), std::string::npos) << e.message;
}

TEST(ImportMaxText, AutoFillsIciAndDcnAxes) {
  const MaxTextImport r = Import(Base(kV5p32b, 2));
  const JaxPlan& jax = r.plan.jax;
  ASSERT_EQ(jax.axes.size(), 4u);  // data, fsdp, sequence, tensor
  EXPECT_EQ(jax.axes[0].name, "data");
  EXPECT_EQ(jax.axes[0].dcn, 2);  // dcn_data_parallelism -1: 2 slices / 1
  EXPECT_EQ(jax.axes[0].ici, 1);
  EXPECT_EQ(jax.axes[1].ici, 16);  // ici_fsdp_parallelism -1: 64 chips / tensor 4
  EXPECT_EQ(jax.axes[3].ici, 4);
  EXPECT_EQ(r.slices, 2);
}

TEST(ImportMaxText, SlicesDefaultToTheExplicitDcnValues) {
  MaxTextImportOptions o = Base({"dcn_data_parallelism=4", "ici_fsdp_parallelism=8"});
  o.slices = 0;
  o.chips_per_slice = 8;
  const MaxTextImport r = Import(o);
  EXPECT_EQ(r.slices, 4);
  EXPECT_EQ(r.plan.jax.axes[0].dcn, 4);
}

TEST(ImportMaxText, TwoAutoAxesAreRefusedNamingTheSecond) {
  const InputError e = ImportError(Base({"ici_tensor_parallelism=-1"}));
  EXPECT_EQ(e.key, "ici_tensor_parallelism");
  EXPECT_EQ(e.file, "command line");
  EXPECT_NE(e.message.find("at most one -1"), std::string::npos) << e.message;
}

TEST(ImportMaxText, SizesThatDoNotFillASliceAreRefused) {
  const InputError e = ImportError(Base({"ici_fsdp_parallelism=8", "ici_tensor_parallelism=4"}));
  EXPECT_EQ(e.key, "ici_fsdp_parallelism");
  EXPECT_NE(e.message.find("multiply to the chips of a slice (64), found 32"), std::string::npos)
      << e.message;
  const InputError d = ImportError(Base({"ici_tensor_parallelism=3"}));
  EXPECT_EQ(d.key, "ici_fsdp_parallelism");  // the -1 that cannot be filled
  EXPECT_NE(d.message.find("divide the chips of a slice (64), found their product 3"),
            std::string::npos)
      << d.message;
}

TEST(ImportMaxText, LaterLayersWinKeyByKey) {
  MaxTextImportOptions o = Base({});
  o.model = {"model.yml", "base_emb_dim: 4096\nbase_num_decoder_layers: 4\n"};
  EXPECT_EQ(Import(o).model.hidden, 4096);  // the model file over the base
  EXPECT_EQ(Import(o).model.layers, 4);
  o.overrides = {"base_emb_dim=1024", "base_emb_dim=512"};
  EXPECT_EQ(Import(o).model.hidden, 512);  // the last override over both
  EXPECT_EQ(Import(o).model.layers, 4);    // untouched by the overrides
}

TEST(ImportMaxText, BatchIsPerDeviceTimesChipsSplitOverTheBatchAxes) {
  const MaxTextImport r = Import(Base(kV5p32b));
  // 8 per chip x 64 chips = 512 sequences; batch on fsdp (16): 32 per shard (the 4 chips of a
  // tensor group share their sequences).
  EXPECT_EQ(r.plan.global_batch, 512);
  EXPECT_EQ(r.plan.micro_batch, 32);
  const MaxTextImport g =
      Import(Base({"per_device_batch_size=8", "gradient_accumulation_steps=4"}));
  EXPECT_EQ(g.plan.global_batch, 512);
  EXPECT_EQ(g.plan.micro_batch, 2);  // 512 / (64 shards x 4 micro-batches)
  const InputError e = ImportError(Base(
      {"per_device_batch_size=0.5", "ici_tensor_parallelism=1", "gradient_accumulation_steps=3"}));
  EXPECT_EQ(e.key, "per_device_batch_size");
}

TEST(ImportMaxText, RulesKeepAxesOfSizeAboveOne) {
  const MaxTextImport r = Import(Base(kV5p32b));
  const JaxPlan& jax = r.plan.jax;
  EXPECT_EQ(AxisNames(jax, LogicalDim::kBatch), Names{"fsdp"});  // data is 1
  EXPECT_EQ(AxisNames(jax, LogicalDim::kEmbed), Names{"fsdp"});  // sequence is 1
  EXPECT_EQ(AxisNames(jax, LogicalDim::kHeads), Names{"tensor"});
  EXPECT_EQ(AxisNames(jax, LogicalDim::kMlp), Names{"tensor"});
  EXPECT_EQ(AxisNames(jax, LogicalDim::kVocab), Names{"tensor"});
  EXPECT_TRUE(jax.Rule(LogicalDim::kKv).empty());
  // activation_embed on tensor: written as sequence parallelism, with a warning.
  EXPECT_EQ(AxisNames(jax, LogicalDim::kSequence), Names{"tensor"});
  bool warned = false;
  for (const std::string& w : r.warnings) warned |= w.find("activation_embed") == 0;
  EXPECT_TRUE(warned);
}

TEST(ImportMaxText, HsdpAcrossSlicesIsApproximatedAsFsdpOverAll) {
  const MaxTextImport r = Import(Base(kV5p32b, 2));
  EXPECT_EQ(AxisNames(r.plan.jax, LogicalDim::kBatch), (Names{"data", "fsdp"}));
  EXPECT_EQ(AxisNames(r.plan.jax, LogicalDim::kEmbed), (Names{"data", "fsdp"}));
  bool warned = false;
  for (const std::string& w : r.warnings) warned |= w.find("HSDP") != std::string::npos;
  EXPECT_TRUE(warned);
  EXPECT_EQ(r.plan.micro_batch, 32);  // 8 x 128 = 1024 sequences over 32 batch shards
}

// layers/models.py DecoderLayer @76bd53b0: attention and MLP from one norm, summed.
TEST(ImportMaxText, DefaultDecoderBlockIsParallel) {
  EXPECT_TRUE(Import(Base(kV5p32b)).model.parallel_block);
  EXPECT_FALSE(Import(Base({"decoder_block=llama2"})).model.parallel_block);
}

TEST(ImportMaxText, RematPoliciesMapToRecompute) {
  EXPECT_EQ(Import(Base({"remat_policy=full"})).plan.recompute, Recompute::kFull);
  EXPECT_EQ(Import(Base({"remat_policy=minimal"})).plan.recompute, Recompute::kProjections);
  EXPECT_EQ(Import(Base({"remat_policy=none"})).plan.recompute, Recompute::kNone);
  EXPECT_EQ(Import(Base({"remat_policy=save_qkv_proj"})).plan.recompute, Recompute::kFull);
  const InputError e = ImportError(Base({"remat_policy=sometimes"}));
  EXPECT_EQ(e.key, "remat_policy");
  EXPECT_NE(e.message.find("found 'sometimes'"), std::string::npos) << e.message;
}

TEST(ImportMaxText, BadValueInAFileIsLocated) {
  MaxTextImportOptions o = Base({});
  o.model = {"model.yml", "base_num_heads: 8\nbase_emb_dim: [1, 2]\n"};
  const InputError e = ImportError(o);
  EXPECT_EQ(e.file, "model.yml");
  EXPECT_EQ(e.line, 2);
  EXPECT_EQ(e.column, 15);
  EXPECT_EQ(e.key, "base_emb_dim");
  EXPECT_NE(e.message.find("expected an integer"), std::string::npos) << e.message;
}

TEST(ImportMaxText, MalformedRuleIsNamedWithItsIndex) {
  const InputError e = ImportError(Base({"logical_axis_rules=[['embed', 'nowhere']]"}));
  EXPECT_EQ(e.key, "logical_axis_rules[0]");
  EXPECT_NE(e.message.find("found 'nowhere'"), std::string::npos) << e.message;
  EXPECT_EQ(ImportError(Base({"nonsense"})).key, "nonsense");  // no '='
}

TEST(ImportMaxText, UnknownKeysAreCommentedAndTheYamlStaysValid) {
  const MaxTextImport r = Import(Base({"my_knob=7", "odd=\x01\xff", "run_name=x"}));
  EXPECT_EQ(r.unknown,
            (std::vector<std::string>{"my_knob=7", "odd=\x01\xff"}));  // run_name: no effect
  const std::string yaml = MaxTextExperimentYaml(r, "t", "c.yaml", 64, "meshsim import maxtext b");
  EXPECT_NE(yaml.find("# Unknown keys, not modelled: my_knob=7, odd=\\x01\\xff."),
            std::string::npos)
      << yaml;
  const YAML::Node root = YAML::Load(yaml);
  EXPECT_EQ(root["plan"]["mesh"]["axes"].size(), 4u);
  EXPECT_EQ(root["plan"]["rules"]["batch"][0].as<std::string>(), "fsdp");
  EXPECT_EQ(root["cluster_overrides"]["nodes"].as<int>(), 1);
  EXPECT_FALSE(root["cluster_overrides"]["gpus_per_node"]);  // 64 as the cluster's
}

TEST(ImportMaxText, ExpertsMapToMoe) {
  const MaxTextImport r = Import(Base({"num_experts=8", "num_experts_per_tok=2"}));
  EXPECT_EQ(r.model.experts, 8);
  EXPECT_EQ(r.model.top_k, 2);
  EXPECT_EQ(r.model.moe_ffn_hidden, 8192);  // each expert of mlp_dim
  EXPECT_EQ(ImportError(Base({"num_experts=2", "num_experts_per_tok=3"})).key,
            "num_experts_per_tok");
}

// A `stage` axis (ici_pipeline_parallelism) holding the layers: gpipe with
// num_pipeline_microbatches -1 = the 4 stages; 2 x 64 = 128 sequences over fsdp 16 and 4
// micro-batches: 2 per micro-batch.
TEST(ImportMaxText, StageAxisIsAPipeline) {
  const MaxTextImport r =
      Import(Base({"mesh_axes=[stage, fsdp, tensor]",
                   "logical_axis_rules=[[activation_batch, fsdp], [embed, fsdp], [heads, tensor], "
                   "[mlp, tensor], [vocab, tensor], [layers, stage]]",
                   "ici_pipeline_parallelism=4", "per_device_batch_size=2"}));
  EXPECT_EQ(r.plan.jax.axes[0].name, "stage");
  EXPECT_EQ(r.plan.jax.axes[0].ici, 4);
  EXPECT_EQ(r.plan.jax.axes[1].ici, 16);
  EXPECT_EQ(AxisNames(r.plan.jax, LogicalDim::kLayers), Names{"stage"});
  EXPECT_EQ(r.plan.schedule, ScheduleKind::kGpipe);
  EXPECT_EQ(r.plan.global_batch, 128);
  EXPECT_EQ(r.plan.micro_batch, 2);
  // base.yml's dcn_data_parallelism -1 names an axis the mesh no longer has.
  bool listed = false;
  for (const std::string& f : r.not_modelled) listed |= f.find("dcn_data_parallelism -1") == 0;
  EXPECT_TRUE(listed);
}

TEST(ImportMaxText, SliceShapeIsWrittenAsTheTorus) {
  MaxTextImportOptions o = Base(kV5p32b, 2);
  o.chips_per_slice = 128;
  o.slice_shape = {4, 4, 8};
  const MaxTextImport r = Import(o);
  const YAML::Node root = YAML::Load(MaxTextExperimentYaml(r, "t", "c.yaml", 64, "m"));
  EXPECT_EQ(root["cluster_overrides"]["nodes"].as<int>(), 2);
  EXPECT_EQ(root["cluster_overrides"]["gpus_per_node"].as<int>(), 128);
  EXPECT_EQ(root["cluster_overrides"]["intra_node"]["torus"][2].as<int>(), 8);
  o.slice_shape = {4, 4, 4};
  EXPECT_EQ(ImportError(o).key, "--slice-shape");
}

// On a TPU topology (a torus of 64 chips with 16 DCN NICs, as tpu-v5p.yaml): collective
// matmul on, as libtpu runs it, and a slice of 512 chips keeps the topology's NICs per chip:
// 16 x 512 / 64 = 128 NICs. Elsewhere (a GPU node) neither is written.
TEST(ImportMaxText, TpuSliceTurnsOnCollectiveMatmulAndScalesTheDcnNics) {
  MaxTextImportOptions o = Base(kV5p32b, 2);
  o.chips_per_slice = 512;
  o.slice_shape = {8, 8, 8};
  o.torus = true;
  o.cluster_gpus_per_node = 64;
  o.cluster_nics_per_node = 16;
  const MaxTextImport r = Import(o);
  EXPECT_TRUE(r.plan.jax.xla.collective_matmul);
  EXPECT_EQ(r.nics_per_slice, 128);
  const YAML::Node root = YAML::Load(MaxTextExperimentYaml(r, "t", "c.yaml", 64, "m"));
  EXPECT_EQ(root["cluster_overrides"]["inter_node"]["nics_per_node"].as<int>(), 128);
  EXPECT_TRUE(root["plan"]["xla"]["collective_matmul"].as<bool>());
  o.chips_per_slice = 64;  // the topology's own slice: nothing to scale
  o.slice_shape = {4, 4, 4};
  EXPECT_EQ(Import(o).nics_per_slice, 0);
  o.torus = false;
  const MaxTextImport gpu = Import(o);
  EXPECT_FALSE(gpu.plan.jax.xla.collective_matmul);
  const YAML::Node g = YAML::Load(MaxTextExperimentYaml(gpu, "t", "c.yaml", 64, "m"));
  EXPECT_FALSE(g["plan"]["xla"]);
  EXPECT_FALSE(g["cluster_overrides"]["inter_node"]);
}

TEST(ImportMaxText, ModelNameWithoutAModelFileIsRefused) {
  const InputError e = ImportError(Base({"model_name=llama2-7b"}));
  EXPECT_EQ(e.key, "model_name");
}

TEST(ImportMaxText, KeysNotModelledAreListed) {
  const MaxTextImport r = Import(Base({"int8_training=true", "dtype=float32"}));
  ASSERT_EQ(r.not_modelled.size(), 2u);
  EXPECT_EQ(r.not_modelled[0].find("dtype float32"), 0u);
  EXPECT_EQ(r.not_modelled[1].find("int8_training true"), 0u);
}

}  // namespace
}  // namespace meshsim

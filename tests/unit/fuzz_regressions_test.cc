// Inputs the fuzz targets of tests/fuzz found to crash (or to break a target's check),
// each now a bad input with a located message. scripts/fuzz_report.py lists them in
// results/fuzz.md from the comment block above each TEST: its first line is
// `// Found by fuzz_TARGET: WHAT`, or `// Found by review, fuzz_TARGET: WHAT` for a defect
// seen while reading the code that the fuzzer had not reached (the input then goes
// through that target), and a line `// Fix: HOW` says what changed. Under build-asan
// these inputs also check that no undefined behaviour is left on their path.
#include <gtest/gtest.h>

#include <string>

#include "sim/config/import_hf.h"
#include "sim/config/import_megatron.h"
#include "sim/config/loader.h"
#include "sim/config/sweep_loader.h"
#include "sim/hw/cluster_spec.h"

namespace meshsim {
namespace {

// A file in the experiments folder that need not exist: relative paths in the text
// reach the bundled models and topologies.
const std::string kExperimentPath =
    std::string(MESHSIM_SOURCE_DIR) + "/workloads/experiments/fuzz.yaml";
const std::string kSweepPath = std::string(MESHSIM_SOURCE_DIR) + "/workloads/sweeps/fuzz.yaml";

// The bundled default experiment (llama2-7b: 32 layers, 32 heads; 2 DGX H100 nodes = 16
// GPUs; tp 2, pp 4, dp 2, cp 1, micro_batch 1, global_batch 32) with --set overrides.
InputError DefaultWith(const std::vector<std::string>& sets) {
  const Result<Experiment> e = LoadExperimentFile(
      std::string(MESHSIM_SOURCE_DIR) + "/workloads/experiments/default.yaml", sets);
  EXPECT_FALSE(e.ok());
  return e.ok() ? InputError{} : e.error();
}

HfImportOptions HfOptions() {
  HfImportOptions o;
  o.source = "config.json";
  return o;
}

// A small Llama config.json with the given heads and layers (JSON number text).
std::string LlamaConfig(const std::string& heads, const std::string& layers) {
  return "{\"model_type\": \"llama\", \"hidden_size\": 1024, \"num_attention_heads\": " + heads +
         ", \"intermediate_size\": 4096, \"num_hidden_layers\": " + layers +
         ", \"vocab_size\": 32000, \"max_position_embeddings\": 2048}";
}

InputError MegatronError(const std::string& args) {
  const Result<MegatronImport> r = ParseMegatronArgs(args);
  EXPECT_FALSE(r.ok());
  return r.ok() ? InputError{} : r.error();
}

// Resolves the world of `args` for 8-GPU nodes (and `nodes` from the CLI, 0: none).
InputError MegatronWorldError(const std::string& args, int nodes = 0) {
  Result<MegatronImport> r = ParseMegatronArgs(args);
  EXPECT_TRUE(r.ok()) << r.error().ToString();
  if (!r.ok()) return r.error();
  int gpus_per_node_override = 0;
  const Result<int> world = ResolveMegatronWorld(&r.value(), 8, nodes, &gpus_per_node_override);
  EXPECT_FALSE(world.ok());
  return world.ok() ? InputError{} : world.error();
}

constexpr const char* kSmallMegatron =
    "--hidden-size 1024 --seq-length 128 --num-layers 4 --num-attention-heads 16";

// Found by fuzz_experiment: a model (or cluster) path longer than the system's limit on a
//   file name terminated the program (std::filesystem threw "File name too long").
// Fix: the loader asks std::filesystem with an error code, so such a path is a file that
//   is not found (sim/config/loader.cc, Resolve).
TEST(FuzzRegressions, ExperimentPathTooLongIsNotFound) {
  const std::string name(5000, 'm');
  const Result<Experiment> e =
      LoadExperimentText("name: x\nmodel: " + name + "\ncluster: c.yaml\n", kExperimentPath);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().file, kExperimentPath);
  EXPECT_EQ(e.error().key, "model");
  // The path's value starts on line 2 after "model: " (7 characters).
  EXPECT_EQ(e.error().line, 2);
  EXPECT_EQ(e.error().column, 8);
  EXPECT_EQ(e.error().message.rfind("file not found: ", 0), 0u) << e.error().message;
}

// Found by review, fuzz_sweep: the std::filesystem call of the finding above, in the sweep
//   loader: a base path too long for the system terminated the program.
// Fix: as for experiments (sim/config/sweep_loader.cc, LoadBase).
TEST(FuzzRegressions, SweepBasePathTooLongIsNotFound) {
  const std::string name(5000, 'b');
  const Result<SweepSpec> s =
      LoadSweepText("name: s\nbase: " + name + "\naxes: {plan.tp: [1]}\n", kSweepPath);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().file, kSweepPath);
  EXPECT_EQ(s.error().key, "base");
  EXPECT_EQ(s.error().line, 2);
  EXPECT_EQ(s.error().column, 7);  // after "base: "
  EXPECT_EQ(s.error().message.rfind("file not found: ", 0), 0u) << s.error().message;
}

// Found by fuzz_import_hf: a number too large for a double (1e30828) terminated the
//   program: nlohmann::json throws out_of_range (406), not the parse_error the importer
//   caught.
// Fix: ImportHfConfig also turns the other nlohmann::json exceptions into an InputError,
//   located at the first occurrence of the text the exception quotes
//   (sim/config/import_hf.cc, ParseJson).
TEST(FuzzRegressions, HfNumberOverflowIsInvalidJson) {
  HfImportOptions options;
  options.source = "config.json";
  const Result<HfImport> r =
      ImportHfConfig("{\"model_type\": \"llama\",\n \"hidden_size\": 1e400}", options);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().file, "config.json");
  EXPECT_EQ(r.error().message, "invalid JSON: number overflow parsing '1e400'");
  // Line 2 is ` "hidden_size": 1e400}`: the number starts at column 17.
  EXPECT_EQ(r.error().line, 2);
  EXPECT_EQ(r.error().column, 17);
}

// Found by review, fuzz_set: tp*pp*dp*cp overflowed int in ValidatePlan (undefined
//   behaviour) for degrees such as tp 2147483647, pp 2; likewise pp*virtual_stages and
//   micro_batch*dp (each input reproduced with fuzz_set before the fix).
// Fix: ValidatePlan multiplies plan degrees in int64, capped at 2^31, which matches no GPU
//   count and divides no layer or batch count (sim/plan/validate.cc, Product).
TEST(FuzzRegressions, PlanDegreeProductsDoNotOverflow) {
  InputError e = DefaultWith({"plan.tp=2147483647", "plan.pp=2"});
  EXPECT_EQ(e.key, "plan");
  EXPECT_NE(e.message.find("tp*pp*dp*cp = 2147483647*2*2*1 = more than 2^31 but the cluster "
                           "has 16 GPUs"),
            std::string::npos)
      << e.message;
  e = DefaultWith({"plan.schedule=interleaved", "plan.virtual_stages=2147483647"});
  EXPECT_EQ(e.key, "plan.pp");
  // (Since uneven stages: the product, at most 2^62, is taken in int64 by CheckStageLayers.)
  EXPECT_NE(e.message.find("pp*virtual_stages = 4*2147483647 = 8589934588 virtual stages are "
                           "more than the model's layers + 2 = 34"),
            std::string::npos)
      << e.message;
  e = DefaultWith({"plan.micro_batch=2147483647"});
  EXPECT_EQ(e.key, "plan.global_batch");
  EXPECT_NE(e.message.find("global_batch = 32 is not divisible by micro_batch*dp = "
                           "2147483647*2 = more than 2^31"),
            std::string::npos)
      << e.message;
}

// Found by review, fuzz_set: nodes x gpus_per_node overflowed int (ClusterSpec::TotalGpus)
//   for nodes 1000000000 and 8 GPUs per node (reproduced with fuzz_set before the fix).
// Fix: the cluster decoder accepts at most kMaxClusterGpus = 2^24 GPUs (2^14 in fuzzing
//   builds, so that every input loads fast) (sim/config/decode_cluster.cc, DecodeCluster).
TEST(FuzzRegressions, ClusterLargerThanTheLimitIsBadInput) {
  const InputError e = DefaultWith({"cluster.nodes=1000000000"});
  EXPECT_EQ(e.file, "--set cluster.nodes=1000000000");
  EXPECT_EQ(e.key, "cluster.nodes");
  EXPECT_EQ(e.message, "expected at most " + std::to_string(kMaxClusterGpus) +
                           " GPUs, found nodes 1000000000 x gpus_per_node 8 = 8000000000");
}

// Found by review, fuzz_set: dp_bucket_mb 1e300 made the conversion to bytes overflow
//   int64 (undefined behaviour; reproduced with fuzz_set before the fix).
// Fix: the plan decoder accepts at most 1e9 MB (sim/config/decode.cc, DecodePlan).
TEST(FuzzRegressions, HugeDpBucketIsBadInput) {
  const InputError e = DefaultWith({"plan.dp_bucket_mb=1e300"});
  EXPECT_EQ(e.file, "--set plan.dp_bucket_mb=1e300");
  EXPECT_EQ(e.key, "plan.dp_bucket_mb");
  EXPECT_EQ(e.message, "expected at most 1e9 MB, found '1e300'");
}

// Found by review, fuzz_import_hf: required counts were cut to int without a range check:
//   num_attention_heads 4294967296 became 0 and hidden_size % 0 divided by zero
//   (reproduced with fuzz_import_hf before the fix); num_hidden_layers 4294967297
//   silently became 1.
// Fix: required counts get the same at-most-2^30 check as optional ones
//   (sim/config/import_hf.cc, Fields::Int32).
TEST(FuzzRegressions, HfCountsBeyondIntAreBadInput) {
  Result<HfImport> r = ImportHfConfig(LlamaConfig("4294967296", "4"), HfOptions());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().key, "num_attention_heads");
  EXPECT_EQ(r.error().message, "expected a plausible count, found 4294967296");
  r = ImportHfConfig(LlamaConfig("16", "4294967297"), HfOptions());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().key, "num_hidden_layers");
  EXPECT_EQ(r.error().message, "expected a plausible count, found 4294967297");
}

// Found by review, fuzz_import_megatron: --num-layers and --num-attention-heads were cut
//   to int without a range check: heads 4294967296 became 0 and hidden % 0 divided by
//   zero (reproduced with fuzz_import_megatron before the fix); layers 4294967297 became 1.
// Fix: both are read with the at-most-2^30 check of the other counts
//   (sim/config/megatron_args.h, Args::Required32).
TEST(FuzzRegressions, MegatronRequiredCountsBeyondIntAreBadInput) {
  InputError e = MegatronError(
      "--num-layers 4 --hidden-size 1024 --num-attention-heads 4294967296 --seq-length 128");
  EXPECT_EQ(e.key, "--num-attention-heads");
  EXPECT_EQ(e.message, "expected a plausible count, found 4294967296");
  e = MegatronError(
      "--num-layers 4294967297 --hidden-size 1024 --num-attention-heads 16 --seq-length 128");
  EXPECT_EQ(e.key, "--num-layers");
  EXPECT_EQ(e.message, "expected a plausible count, found 4294967297");
}

// Found by review, fuzz_import_megatron: products of flags overflowed (undefined
//   behaviour): pp * --num-layers-per-virtual-pipeline-stage, pp * virtual stages for
//   --recompute-granularity full, --make-vocab-size-divisible-by * tp (int64), tp*pp*cp
//   and micro_batch * dp when the world is resolved (each reproduced with
//   fuzz_import_megatron before the fix), and the CLI's --nodes x GPUs per node.
// Fix: these products are taken in int64 from factors of at most 2^30 (the divisor is now
//   read as such a count) and checked: a padded vocabulary above 2^40, a world above
//   kMaxClusterGpus and a derived global batch above 2^30 are bad input
//   (sim/config/import_megatron.cc).
TEST(FuzzRegressions, MegatronFlagProductsDoNotOverflow) {
  const std::string small = kSmallMegatron;
  InputError e = MegatronError(small +
                               " --pipeline-model-parallel-size 1073741824"
                               " --num-layers-per-virtual-pipeline-stage 4");
  EXPECT_EQ(e.key, "--num-layers-per-virtual-pipeline-stage");
  // 1073741824 * 4 = 2^32.
  EXPECT_EQ(e.message, "--num-layers 4 is not divisible by pp * 4 = 4294967296");

  e = MegatronError(small + " --vocab-size 5 --make-vocab-size-divisible-by 1099511627776");
  EXPECT_EQ(e.key, "--make-vocab-size-divisible-by");
  EXPECT_EQ(e.message, "expected a plausible count, found 1099511627776");
  e = MegatronError(small +
                    " --vocab-size 5 --make-vocab-size-divisible-by 1073741824"
                    " --tensor-model-parallel-size 1073741824");
  EXPECT_EQ(e.key, "--make-vocab-size-divisible-by");
  // 2^30 * 2^30 = 2^60 = 1152921504606846976: 5 padded up to one multiple of it.
  EXPECT_EQ(e.message,
            "expected a plausible size, found a padded vocabulary of "
            "1152921504606846976");

  e = MegatronWorldError(small +
                         " --tensor-model-parallel-size 1073741824"
                         " --pipeline-model-parallel-size 4 --world-size 8");
  EXPECT_EQ(e.key, "--world-size");
  EXPECT_EQ(e.message, "world size 8 is not divisible by tp*pp*cp = 1073741824*4*1 = more than 8");
  e = MegatronWorldError(small + " --micro-batch-size 1073741824 --world-size 16");
  EXPECT_EQ(e.key, "--micro-batch-size");
  // dp = 16 / (1*1*1): 2^30 * 16 = 2^34.
  EXPECT_EQ(e.message,
            "global_batch = micro_batch * dp = 1073741824 * 16 = 17179869184 is not a "
            "plausible count");
  e = MegatronWorldError(small, 1073741824);
  EXPECT_EQ(e.key, "--world-size");
  // 2^30 nodes x 8 GPUs = 2^33.
  EXPECT_EQ(e.message, "expected at most " + std::to_string(kMaxClusterGpus) +
                           " GPUs, found a world of 8589934592");

  // Full recomputation with pp * virtual stages = 2^60: an accepted import (layers per
  // chunk 0 only decides a warning), no longer an overflow.
  const Result<MegatronImport> r = ParseMegatronArgs(
      "--num-layers 1073741824 --hidden-size 1024 --num-attention-heads 16 --seq-length 128"
      " --recompute-granularity full --pipeline-model-parallel-size 1073741824"
      " --num-virtual-stages-per-pipeline-rank 1073741824");
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r.value().plan.virtual_stages, 1073741824);
}

// Found by fuzz_import_megatron: the gradient bucket of a model with more than ~9e18
//   gradient bytes (one bucket for the whole model without --overlap-grad-reduce)
//   overflowed an int64 when rounded up to whole megabytes (undefined behaviour).
// Fix: the importer derives the bucket in floating point and holds it to the schema's
//   bound on plan.dp_bucket_mb, PlanSpec::kMaxDpBucketBytes = 1e15 bytes
//   (sim/config/import_megatron.cc, ResolveBucket).
TEST(FuzzRegressions, MegatronHugeModelBucketIsHeldToTheSchemaBound) {
  // 12 * 2^20 layers * 2^30^2 hidden: ~1.5e25 parameters.
  Result<MegatronImport> r = ParseMegatronArgs(
      "--num-layers 1048576 --hidden-size 1073741824 --num-attention-heads 16 --seq-length 128"
      " --world-size 8");
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  int gpus_per_node_override = 0;
  const Result<int> nodes = ResolveMegatronWorld(&r.value(), 8, 0, &gpus_per_node_override);
  ASSERT_TRUE(nodes.ok()) << nodes.error().ToString();
  EXPECT_EQ(r.value().plan.dp_bucket_bytes, 1'000'000'000'000'000);
}

// Found by fuzz_import_megatron: an unknown flag with bytes that are not UTF-8 (or are
//   control characters) was echoed into the generated experiment's comments, which then
//   failed to load as YAML.
// Fix: YamlComment writes every byte outside printable ASCII as \xNN
//   (sim/config/import_hf.cc), for import megatron and import hf alike.
TEST(FuzzRegressions, MegatronArgumentsWithRawBytesGiveLoadableYaml) {
  Result<MegatronImport> r = ParseMegatronArgs(std::string(kSmallMegatron) +
                                               " --group-qu\xff\x7f\x0f"
                                               "ery 8 --vo\x85\xd2"
                                               "x 1"
                                               " --world-size 8");
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  int gpus_per_node_override = 0;
  const Result<int> nodes = ResolveMegatronWorld(&r.value(), 8, 0, &gpus_per_node_override);
  ASSERT_TRUE(nodes.ok()) << nodes.error().ToString();
  const std::string yaml = MegatronExperimentYaml(
      r.value(), "megatron", std::string(MESHSIM_SOURCE_DIR) + "/topologies/selene-a100.yaml",
      nodes.value(), gpus_per_node_override);
  EXPECT_NE(yaml.find("--group-qu\\xff\\x7f\\x0fery 8"), std::string::npos) << yaml;
  const Result<Experiment> back = LoadExperimentText(yaml, kExperimentPath);
  EXPECT_TRUE(back.ok()) << back.error().ToString() << "\n" << yaml;
}

}  // namespace
}  // namespace meshsim

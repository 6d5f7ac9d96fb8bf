// StepBuilder::CloneRank and Program::CloneRank (sim/schedule/rank_clone.cc,
// program_clone.cc): a full replay's program with a stage's data-parallel replicas copied
// from the first one equals, field by field, the program that emits every rank op by op.
#include <gtest/gtest.h>

#include <bit>
#include <filesystem>
#include <string>
#include <vector>

#include "sim/config/loader.h"
#include "sim/engine/simulation.h"
#include "sim/plan/experiment.h"
#include "sim/plan/mesh.h"
#include "sim/schedule/step_builder.h"

namespace meshsim {
namespace {

bool SameBits(double a, double b) {
  return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b);
}

bool SameRecord(const ReplayRecord& a, const ReplayRecord& b) {
  return a.ref == b.ref && a.next_in_queue == b.next_in_queue && a.dependents == b.dependents &&
         a.queue == b.queue && a.kind_bits == b.kind_bits && a.category_bits == b.category_bits &&
         a.pending == b.pending && a.deps_bits == b.deps_bits;
}

// Every array of the two programs, in full: records, infos, dependents, queues, works,
// collectives, their signatures, groups and parts.
void ExpectIdentical(const Program& a, const Program& b, const std::string& name) {
  ASSERT_EQ(a.OpCount(), b.OpCount()) << name;
  int mismatches = 0;
  for (OpId id = 0; id < a.OpCount() && mismatches < 5; ++id) {
    const Op x = a.op(id), y = b.op(id);
    const bool same = SameRecord(a.Records()[id], b.Records()[id]) && x.tag == y.tag &&
                      x.layer == y.layer && x.micro_batch == y.micro_batch;
    EXPECT_TRUE(same) << name << ": op " << id;
    mismatches += same ? 0 : 1;
  }
  EXPECT_EQ(a.DependentLists(), b.DependentLists()) << name;
  for (size_t q = 0; q < static_cast<size_t>(a.Ranks()) * kStreamCount; ++q) {
    EXPECT_EQ(a.StreamHead(q), b.StreamHead(q)) << name << ": queue " << q;
    EXPECT_EQ(a.StreamTail(q), b.StreamTail(q)) << name << ": queue " << q;
  }
  EXPECT_EQ(a.groups(), b.groups()) << name;
  ASSERT_EQ(a.works().size(), b.works().size()) << name;
  for (size_t w = 0; w < a.works().size(); ++w) {
    const OpWork &x = a.works()[w], &y = b.works()[w];
    EXPECT_TRUE(SameBits(x.work.flops, y.work.flops) && SameBits(x.work.bytes, y.work.bytes) &&
                x.work.kernels == y.work.kernels && x.work.shapes == y.work.shapes &&
                SameBits(x.recompute_flops, y.recompute_flops))
        << name << ": work " << w;
  }
  ASSERT_EQ(a.signatures().size(), b.signatures().size()) << name;
  for (size_t s = 0; s < a.signatures().size(); ++s) {
    const CommSignature &x = a.signatures()[s], &y = b.signatures()[s];
    EXPECT_TRUE(x.op == y.op && x.group == y.group && SameBits(x.bytes, y.bytes) &&
                x.work == y.work)
        << name << ": signature " << s;
  }
  const std::vector<Comm> ca(a.comms().begin(), a.comms().end());
  const std::vector<Comm> cb(b.comms().begin(), b.comms().end());
  ASSERT_EQ(ca.size(), cb.size()) << name;
  for (size_t c = 0; c < ca.size(); ++c) {
    EXPECT_TRUE(ca[c].signature == cb[c].signature && ca[c].parts == cb[c].parts &&
                ca[c].first_part == cb[c].first_part)
        << name << ": collective " << c;
    EXPECT_EQ(std::vector<OpId>(a.PartsBegin(ca[c]), a.PartsEnd(ca[c])),
              std::vector<OpId>(b.PartsBegin(cb[c]), b.PartsEnd(cb[c])))
        << name << ": collective " << c;
  }
}

Program Build(const Experiment& e, bool clone) {
  const Mesh mesh(e.plan);
  std::vector<int> all(mesh.Size());
  for (int r = 0; r < mesh.Size(); ++r) all[r] = r;
  return BuildStepProgram(e.model, e.plan, e.training, mesh, all, HostThreads(e), clone);
}

Experiment Load(const std::string& file, const std::vector<std::string>& sets = {}) {
  Result<Experiment> e =
      LoadExperimentFile(std::string(MESHSIM_SOURCE_DIR) + "/workloads/experiments/" + file, sets);
  EXPECT_TRUE(e.ok()) << file << ": " << (e.ok() ? "" : e.error().ToString());
  return e.ok() ? e.value() : Experiment{};
}

// Every bundled dense experiment whose full program has at most ~1.5 M ops: the
// program with copied ranks is the emitted one; where the plan has data-parallel replicas
// (and collectives that may overlap) most of its ops were copied.
TEST(RankClone, EveryBundledDenseExperimentBuildsTheSameProgram) {
  int copied = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(MESHSIM_SOURCE_DIR) +
                                                               "/workloads/experiments")) {
    const std::string file = entry.path().filename().string();
    if (entry.path().extension() != ".yaml") continue;
    const Experiment e = Load(file);
    const Mesh mesh(e.plan);
    if (e.model.IsMoe()) continue;
    const Program pipeline =
        BuildStepProgram(e.model, e.plan, e.training, mesh, mesh.Pipeline(0), HostThreads(e));
    const double ops = static_cast<double>(pipeline.OpCount()) * mesh.Size() /
                       static_cast<double>(mesh.Pipeline(0).size());
    if (ops > 1.5e6) continue;
    const Program emitted = Build(e, false), cloned = Build(e, true);
    EXPECT_EQ(emitted.ClonedOps(), 0u) << file;
    ExpectIdentical(emitted, cloned, file);
    const bool replicas = e.plan.dp > 1 && e.plan.async_collectives;
    if (replicas) {
      EXPECT_GT(cloned.ClonedOps(), cloned.OpCount() / 3) << file;
      ++copied;
    } else {
      EXPECT_EQ(cloned.ClonedOps(), 0u) << file;
    }
  }
  EXPECT_GE(copied, 20);
}

// Data parallelism inside tensor parallelism (mesh_order dp before tp): a stage's ranks
// alternate replicas; each copies the first of its tensor-parallel place.
TEST(RankClone, DataParallelAxisInnermostCopiesEachTensorParallelPlace) {
  const Experiment e =
      Load("public-h100-nemo-llama2-70b.yaml", {"plan.mesh_order=[dp, tp, cp, ep, pp]"});
  ASSERT_GT(e.plan.dp, 1);
  const Program emitted = Build(e, false), cloned = Build(e, true);
  ExpectIdentical(emitted, cloned, "dp innermost");
  EXPECT_GT(cloned.ClonedOps(), 0u);
}

// GPT-1T (tp 4, pp 64) with dp 2: 512 ranks, one of each stage's replicas copied.
TEST(RankClone, HalfOfGpt1TWithTwoReplicasIsCopied) {
  const Experiment e =
      Load("gpt-1t-3072.yaml", {"plan.dp=2", "cluster.nodes=64", "plan.global_batch=512"});
  const Program emitted = Build(e, false), cloned = Build(e, true);
  ExpectIdentical(emitted, cloned, "gpt-1t dp 2");
  EXPECT_EQ(cloned.ClonedOps(), cloned.OpCount() / 2);
}

}  // namespace
}  // namespace meshsim

// The vocabulary of a Program's ops (program.h): the streams an op runs on, its kind, tag
// and memory category, what it does (OpWork) and how the Program gives it (Op, OpInfo).
#pragma once

#include <cstdint>
#include <string_view>

#include "sim/workload/compute_model.h"

namespace meshsim {

enum class Stream : uint8_t {
  kCompute,
  kTp,        // tensor-parallel collectives
  kCp,        // context-parallel exchanges
  kEp,        // expert-parallel all-to-all
  kDp,        // gradient reduction
  kDpGather,  // ZeRO parameter all-gathers
  kSendNext,  // pipeline: to the next stage
  kSendPrev,  // pipeline: to the previous stage
  kRecvPrev,  // pipeline: from the previous stage
  kRecvNext,  // pipeline: from the next stage
  kTpBack,    // tensor-parallel ring shifts the other way round (bidirectional collective matmul)
  // The rank's host (CPU) thread, which issues the GPU ops (sim/schedule/host_launch.h):
  // its ops are compute ops that take KernelWork::kernels launches of host time
  // (IsHostLaunch) and run on the CPU, not the GPU.
  kHost,
  // A second compute stream of the GPU: kernels the framework runs beside the main one
  // (Megatron-Core's paged stash copies on PagedStashManager.pack_stream). Its ops are
  // compute ops; while one runs beside a kCompute op of its rank, the GPU is shared
  // (ReplayOptions::side_stream_slowdown).
  kSideCompute,
};
constexpr int kStreamCount = 13;
std::string_view StreamName(Stream s);
bool IsPipelineStream(Stream s);

enum class OpKind : uint8_t { kCompute, kComm, kMemory };

// Device memory by purpose. kActivations: tensors stored by forward for backward.
// kBuffers: short-lived working memory: ZeRO-3's gathered parameters and activations
// recomputed during one layer's backward.
enum class MemCategory : uint8_t { kWeights, kGradients, kOptimizer, kActivations, kBuffers };
constexpr int kMemCategoryCount = 5;
std::string_view MemCategoryName(MemCategory c);

// What an op is, for traces and time accounting.
enum class Tag : uint8_t {
  kEmbeddingFwd,
  kAttentionFwd,
  kMlpFwd,
  kLogitsFwd,
  kLogitsBwd,
  kAttentionBwd,  // input gradients (dgrad)
  kMlpBwd,
  kAttentionWgrad,  // weight gradients
  kMlpWgrad,
  kEmbeddingBwd,
  kAttentionRecompute,
  kMlpRecompute,
  kMoeRouterFwd,
  kMoeExpertsFwd,
  kMoeExpertsBwd,  // input gradients
  kMoeExpertsWgrad,
  kMoeRouterBwd,
  kOptimizerStep,
  kParamCopy,    // FSDP2's copy-out of gathered parameters / copy-in of gradients
  kGradPrepare,  // a gradient bucket's NaN check (norm) and scaling before its reduction
  kTpComm,
  kCpComm,
  kEpComm,
  kDpGradReduce,
  kZeroGather,
  kPpActivation,
  kPpGradient,
  kMemory,
  kOther,
  kHostLaunch,  // the host thread issues GPU ops (kernel launches)
  kHostSync,    // the host thread waits for a GPU op (a host-device synchronisation)
  kMoeStash,    // the paged stash's copies of the experts' saved tensors (out or back in)
};
std::string_view TagName(Tag t);

// What an op does, beyond its kind: a compute op's KernelWork and the part of its FLOPs that
// re-runs forward work; a memory op's delta in work.bytes; a collective part's collective
// bytes in work.bytes. Ops of one step mostly repeat each other's work (every rank, layer
// and micro-batch), so the Program keeps each distinct OpWork once and ops refer to it.
struct OpWork {
  KernelWork work;
  double recompute_flops = 0;  // kCompute: part of work.flops that re-runs forward work
};

// One op of a Program, as Program::op() gives it. The program keeps it in two parts, 28
// bytes in all (issue 14 asks at most 64): its ReplayRecord (kind, rank, stream,
// category and work or collective, with what the replay needs) and an OpInfo (the rest).
// Its OpWork is Program::WorkOf(op).
struct Op {
  OpKind kind = OpKind::kCompute;
  Stream stream = Stream::kCompute;
  Tag tag = Tag::kOther;
  MemCategory category = MemCategory::kBuffers;  // kMemory only
  int32_t rank = 0;
  int32_t layer = -1;        // -1: not tied to a layer; at most kMaxOpLayer
  int32_t micro_batch = -1;  // -1: not tied to a micro-batch
  union {
    int32_t comm = -1;  // kComm: index into Program::comms() (its work is the collective's)
    uint32_t work;      // kCompute, kMemory: index into Program::works()
  };
};
static_assert(sizeof(Op) <= 32, "an op record stays small: millions are replayed at once");

using OpId = uint32_t;
constexpr OpId kNoOp = UINT32_MAX;

// What an op's ReplayRecord does not hold: 8 bytes. (How many ops it waits for is
// ReplayRecord::pending between replays.) A layer index fits 16 bits (kMaxOpLayer; a
// model's layers are counted in the hundreds): 4 bytes an op less than 32 bits, ~35 MB
// of fresh pages at 3,072 GPUs of GPT-1T in full replay. The ranks of a pipeline stage
// that InterleaveAdded interleaves have the same infos op for op as a rule: the program
// then keeps one rank's (Program::Info).
struct OpInfo {
  Tag tag = Tag::kOther;
  int16_t layer = -1;
  int32_t micro_batch = -1;
  bool operator==(const OpInfo&) const = default;
};
static_assert(sizeof(OpInfo) == 8);
constexpr int kMaxOpLayer = INT16_MAX;

}  // namespace meshsim

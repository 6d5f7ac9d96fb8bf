#include "sim/schedule/op.h"

namespace meshsim {

std::string_view StreamName(Stream s) {
  switch (s) {
    case Stream::kCompute:
      return "compute";
    case Stream::kTp:
      return "tp comm";
    case Stream::kCp:
      return "cp comm";
    case Stream::kEp:
      return "ep comm";
    case Stream::kDp:
      return "dp comm";
    case Stream::kDpGather:
      return "dp gather";
    case Stream::kSendNext:
      return "pp send next";
    case Stream::kSendPrev:
      return "pp send prev";
    case Stream::kRecvPrev:
      return "pp recv prev";
    case Stream::kRecvNext:
      return "pp recv next";
    case Stream::kTpBack:
      return "tp comm back";
    case Stream::kHost:
      return "host";
    case Stream::kSideCompute:
      return "side compute";
  }
  return "?";
}

bool IsPipelineStream(Stream s) {
  return s == Stream::kSendNext || s == Stream::kSendPrev || s == Stream::kRecvPrev ||
         s == Stream::kRecvNext;
}

std::string_view MemCategoryName(MemCategory c) {
  switch (c) {
    case MemCategory::kWeights:
      return "weights";
    case MemCategory::kGradients:
      return "gradients";
    case MemCategory::kOptimizer:
      return "optimizer";
    case MemCategory::kActivations:
      return "activations";
    case MemCategory::kBuffers:
      return "buffers";
  }
  return "?";
}

std::string_view TagName(Tag t) {
  switch (t) {
    case Tag::kEmbeddingFwd:
      return "embedding fwd";
    case Tag::kAttentionFwd:
      return "attention fwd";
    case Tag::kMlpFwd:
      return "mlp fwd";
    case Tag::kLogitsFwd:
      return "logits+loss fwd";
    case Tag::kLogitsBwd:
      return "logits+loss bwd";
    case Tag::kAttentionBwd:
      return "attention bwd";
    case Tag::kMlpBwd:
      return "mlp bwd";
    case Tag::kAttentionWgrad:
      return "attention wgrad";
    case Tag::kMlpWgrad:
      return "mlp wgrad";
    case Tag::kEmbeddingBwd:
      return "embedding bwd";
    case Tag::kAttentionRecompute:
      return "attention recompute";
    case Tag::kMlpRecompute:
      return "mlp recompute";
    case Tag::kMoeRouterFwd:
      return "moe router fwd";
    case Tag::kMoeExpertsFwd:
      return "moe experts fwd";
    case Tag::kMoeExpertsBwd:
      return "moe experts bwd";
    case Tag::kMoeExpertsWgrad:
      return "moe experts wgrad";
    case Tag::kMoeRouterBwd:
      return "moe router bwd";
    case Tag::kOptimizerStep:
      return "optimizer step";
    case Tag::kParamCopy:
      return "fsdp2 copy";
    case Tag::kGradPrepare:
      return "dp grad check/scale";
    case Tag::kTpComm:
      return "tp collective";
    case Tag::kCpComm:
      return "cp exchange";
    case Tag::kEpComm:
      return "ep all-to-all";
    case Tag::kDpGradReduce:
      return "dp grad reduce";
    case Tag::kZeroGather:
      return "zero param gather";
    case Tag::kPpActivation:
      return "pp activation";
    case Tag::kPpGradient:
      return "pp gradient";
    case Tag::kMemory:
      return "memory";
    case Tag::kOther:
      return "other";
    case Tag::kHostLaunch:
      return "host launch";
    case Tag::kHostSync:
      return "host sync";
    case Tag::kMoeStash:
      return "moe paged stash";
  }
  return "?";
}

}  // namespace meshsim

// What each pipeline stage of a plan holds and what its layers cost, derived once for the
// step builder (step_builder.cc) and the memory bound (memory_bound.cc): the layer split
// (StageSplit), one layer's shape and cost on a rank, the parameters each layer and each
// stage holds on one rank, and the output layer's logits.
#pragma once

#include <vector>

#include "sim/plan/plan_spec.h"
#include "sim/plan/stages.h"
#include "sim/workload/model_spec.h"
#include "sim/workload/transformer.h"

namespace meshsim {

// Parameters one rank holds: replicated over the dp x cp group (dense) and over the
// expert-data-parallel group (routed experts).
struct LocalParams {
  double dense = 0;
  double expert = 0;
};

class StageCosts {
 public:
  // Precondition: the plan passed ValidatePlan for this model.
  StageCosts(const ModelSpec& m, const PlanSpec& p, const TrainingSpec& t);

  const StageSplit& split() const { return split_; }
  // One micro-batch of one layer on one rank: its shape, and the cost of a dense layer.
  const LayerShape& shape() const { return shape_; }
  const LayerCost& dense_layer() const { return dense_layer_; }
  // The attention of layer `layer`: the dense layer's, or on a sliding-window layer
  // (ModelSpec::IsWindowedLayer) the one with sliding_window keys per query.
  const BlockCost& Attention(int layer) const {
    return m_.IsWindowedLayer(layer) ? windowed_attention_ : dense_layer_.attention;
  }
  // A Mamba-2 layer's block (hybrid models; empty otherwise).
  const BlockCost& Mamba() const { return mamba_; }
  // The shape of a sliding-window layer (window set; the others use shape()).
  const LayerShape& windowed_shape() const { return windowed_shape_; }
  // Layer `layer`'s parameters on one rank (attention and MLP split by tp; a MoE layer's
  // router and shared experts dense, its routed experts spread over ep; a Mamba-2 layer
  // split by tp but its pre-norm). Layers layers .. AllLayers()-1 are the MTP layers.
  // An MTP module's projection and norms (MtpExtraParams / tp) are counted with its
  // layer: its LayerParams include them.
  const LocalParams& LayerParams(int layer) const { return layer_params_[layer]; }
  // Every layer of every chunk of `stage`, plus the embedding (stage 0) and the output
  // layer (the last stage, unless tied to the embedding on a single stage), and the MTP
  // modules on the stage of the last virtual stage (as Megatron-LM places them).
  LocalParams StageParams(int stage) const;
  // The MTP layers (indices model layers .. AllLayers()-1) run on the last virtual stage.
  int MtpBegin() const { return m_.layers; }
  int MtpEnd() const { return m_.AllLayers(); }
  // The embedding's (and the untied output layer's) parameters on one TP rank.
  double EmbeddingParams() const { return embedding_params_; }
  bool HoldsEmbedding(int stage) const { return stage == 0; }
  bool HoldsOutput(int stage) const;
  // Logits of one micro-batch's local vocabulary shard (seq x micro_batch x vocab / tp).
  double Logits() const;
  // What the loss keeps of them for its backward: fp32 logits (4 bytes each), or with
  // Transformer Engine's cross entropy (TrainingSpec::cross_entropy_impl kTe) the bf16
  // logits it overwrote with their gradient (2 bytes each); with PyTorch's (kTorch,
  // kTorchFp32) the bf16 logits and log_softmax's output, bf16 or fp32 (4 or 6 bytes).
  double LogitBytes() const;
  // Routed tokens the experts of a rank at expert-parallel coordinate `ep_coord` receive,
  // over the average: under plan.moe_skew the busiest expert sits on coordinate 0 and gets
  // moe_skew times the average (capped by moe_capacity_factor), the others share the rest;
  // 1 without skew. Precondition: a MoE model.
  double ExpertLoad(int ep_coord) const;

 private:
  const ModelSpec& m_;
  const PlanSpec& p_;
  StageSplit split_;
  LayerShape shape_;
  LayerCost dense_layer_;
  LayerShape windowed_shape_;
  BlockCost windowed_attention_;
  BlockCost mamba_;
  std::vector<LocalParams> layer_params_;
  double embedding_params_ = 0;
  const double logit_bytes_;  // per logit: LogitBytes()
};

}  // namespace meshsim

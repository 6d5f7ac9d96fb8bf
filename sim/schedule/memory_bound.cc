#include "sim/schedule/memory_bound.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "sim/schedule/model_states.h"
#include "sim/schedule/pipeline_order.h"
#include "sim/schedule/stage_costs.h"
#include "sim/workload/transformer.h"

namespace meshsim {
namespace {

// What the step program allocates for one layer of rank 0 (step_builder.cc,
// layer_blocks.cc, moe_blocks.cc).
struct LayerMemory {
  double stored = 0;     // activations kept from the layer's forward to its backward
  double transient = 0;  // recomputed activations during the layer's backward
  double buffer = 0;     // its parameters gathered by ZeRO-3 (0 without)
};

// The quantities StepBuilder allocates, for the ranks of rank 0's pipeline; the layer
// split and parameters come from the same StageCosts the builder uses.
class StageMemory {
 public:
  explicit StageMemory(const Experiment& ex) : e_(ex), costs_(ex.model, ex.plan, ex.training) {
    const PlanSpec& p = e_.plan;
    nd_ = p.dp * p.cp;
    ned_ = e_.model.IsMoe() ? p.ExpertDataDegree() : 1;
    layers_.resize(e_.model.AllLayers());
    for (int l = 0; l < e_.model.AllLayers(); ++l) layers_[l] = LayerMemoryOf(l);
    // Per virtual stage: the activations one forward of it stores (its logits first).
    const StageSplit& split = costs_.split();
    chunk_stored_.resize(split.VirtualStages());
    for (int vs = 0; vs < split.VirtualStages(); ++vs) {
      double chunk = split.IsLast(vs) ? costs_.LogitBytes() : 0;
      for (int l = split.FirstLayer(vs); l < split.EndLayer(vs); ++l) chunk += layers_[l].stored;
      if (split.IsLast(vs)) {  // the MTP modules: their layers and logits
        for (int l = costs_.MtpBegin(); l < costs_.MtpEnd(); ++l)
          chunk += layers_[l].stored + costs_.LogitBytes();
      }
      chunk_stored_[vs] = chunk;
    }
    // Activation offloading (pp = 1: one chunk): by the chunk's last kernel, and until
    // the backward of layer L - 2 starts the first reload, the offloaded layers'
    // activations are on the host (activation_offload.cc).
    for (int l = 0; l < e_.plan.cpu_offload_layers; ++l) chunk_stored_[0] -= layers_[l].stored;
  }

  MemoryBound Bound(int stage) const {
    const PlanSpec& p = e_.plan;
    MemoryBound best;
    const LocalParams params = costs_.StageParams(stage);
    const ModelStateBytes dense = ModelStates(params.dense, nd_, p.zero, e_.training);
    const ModelStateBytes expert = ModelStates(params.expert, ned_, p.zero, e_.training);
    best.weights = dense.weights + expert.weights;
    best.gradients = dense.gradients + expert.gradients;
    best.optimizer = dense.optimizer + expert.optimizer;
    best.stage = stage;
    WalkActivations(stage, &best);
    return best;
  }

  int pp() const { return e_.plan.pp; }

  // Whether a middle stage can hold more than stage 0. Not with an even split of identical
  // layers: each then holds stage 0's layers less the embedding, with no more micro-batches
  // in flight (StageOrder's warm-up shrinks from stage to stage), so Bound(0) bounds them
  // and only the first and the last stage need walking.
  bool MiddleStagesMayBeFuller() const {
    if (!costs_.split().Even()) return true;
    return std::any_of(layers_.begin(), layers_.end(), [this](const LayerMemory& m) {
      return m.stored != layers_[0].stored || m.transient != layers_[0].transient ||
             m.buffer != layers_[0].buffer;
    });
  }

 private:
  // What the step program allocates for layer `l` (its blocks by kind).
  LayerMemory LayerMemoryOf(int l) {
    const ModelSpec& model = e_.model;
    const LayerCost& dense = costs_.dense_layer();
    LayerMemory m;
    const LocalParams& params = costs_.LayerParams(l);
    m.buffer = GathersParams() ? (params.dense + params.expert) * GatheredBytes() : 0;
    const auto add = [&m](const BlockCost& b) {
      m.stored += b.stored_act_bytes;
      m.transient += b.transient_act_bytes;
    };
    if (model.HasAttention(l)) add(costs_.Attention(l));
    if (model.IsMambaLayer(l)) add(costs_.Mamba());
    if (model.HasDenseMlp(l)) add(dense.mlp);
    if (!model.IsMoeLayer(l)) return m;
    if (!moe_) {
      moe_ = MoeLayerCost(model, costs_.shape(), e_.plan.ep, costs_.ExpertLoad(/*ep_coord=*/0));
    }
    m.stored += moe_->router.stored_act_bytes + moe_->experts.stored_act_bytes;
    if (model.shared_experts > 0) m.stored += moe_->shared.stored_act_bytes;
    m.transient += moe_->router.transient_act_bytes + moe_->experts.transient_act_bytes +
                   moe_->shared.transient_act_bytes;
    return m;
  }

  // The stage's pipeline order: at each point the compute stream passes, the stored
  // activations of the chunks in flight and the buffers of the kernel running.
  void WalkActivations(int stage, MemoryBound* best) const {
    const PlanSpec& p = e_.plan;
    const StageSplit& split = costs_.split();
    double running = 0;  // stored activations of the chunks in flight
    auto consider = [best](double activations, double buffers) {
      if (activations + buffers > best->activations + best->buffers) {
        best->activations = activations;
        best->buffers = buffers;
      }
    };
    for (const PipelineStep& s :
         StageOrder(p.schedule, p.pp, p.virtual_stages, p.MicroBatches(), stage,
                    p.framework_options.overlap_moe_expert_parallel_comm ? 1 : 0)) {
      const int vs = split.VirtualStage(s.chunk, stage);
      const int first = split.FirstLayer(vs), end = split.EndLayer(vs);
      const double logits = split.IsLast(vs) ? costs_.LogitBytes() : 0;
      const double chunk = chunk_stored_[vs];
      if (s.forward) {
        // The chunk's last kernel (the logits, or its last layer's last block) runs with
        // all of the chunk's activations allocated and, under ZeRO-3, its parameters
        // gathered.
        running += chunk;
        consider(running, split.IsLast(vs) ? EmbeddingBuffer()
                                           : (end > first ? layers_[end - 1].buffer : 0));
      } else {
        // The logits' backward runs with them and the gathered embedding; the MTP
        // modules' backward (last first) frees each one's logits, runs its layer with its
        // buffers and frees its activations; the chunk's last layer's backward (its first)
        // runs after the logits are freed, with that layer's recomputed activations and
        // gathered parameters allocated.
        double live = running;
        if (split.IsLast(vs)) {
          consider(live, EmbeddingBuffer());
          for (int l = costs_.MtpEnd() - 1; l >= costs_.MtpBegin(); --l) {
            live -= costs_.LogitBytes();
            consider(live, layers_[l].transient + layers_[l].buffer);
            live -= layers_[l].stored;
          }
        }
        if (end > first)
          consider(live - logits, layers_[end - 1].transient + layers_[end - 1].buffer);
        running -= chunk;
      }
    }
  }

  bool GathersParams() const { return e_.plan.zero >= 3 && nd_ > 1; }
  // Bytes per gathered parameter: Megatron's (FP8 primary weights: 1) or FSDP's (2).
  double GatheredBytes() const {
    return e_.plan.framework == Framework::kMegatron ? GatheredWeightBytesPerParam(e_.training)
                                                     : kWeightBytesPerParam;
  }
  double EmbeddingBuffer() const {
    return GathersParams() ? costs_.EmbeddingParams() * GatheredBytes() : 0;
  }

  const Experiment& e_;
  const StageCosts costs_;
  int nd_ = 1;
  int ned_ = 1;
  std::vector<LayerMemory> layers_;   // per layer, MTP layers included
  std::optional<MoeCost> moe_;        // every MoE block's, once computed
  std::vector<double> chunk_stored_;  // per virtual stage
};

}  // namespace

MemoryBound EstimatePeakMemory(const Experiment& e) {
  const StageMemory m(e);
  MemoryBound worst = m.Bound(0);
  const bool middle = m.MiddleStagesMayBeFuller();
  for (int stage = 1; stage < m.pp(); ++stage) {
    if (!middle && stage < m.pp() - 1) continue;
    MemoryBound b = m.Bound(stage);
    if (b.Total() > worst.Total()) worst = b;
  }
  return worst;
}

}  // namespace meshsim

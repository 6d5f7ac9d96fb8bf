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
    ned_ = nd_ / p.ep;
    const LayerCost& dense = costs_.dense_layer();
    layers_.resize(e_.model.layers);
    std::optional<MoeCost> moe;
    for (int l = 0; l < e_.model.layers; ++l) {
      LayerMemory& m = layers_[l];
      m.stored = costs_.Attention(l).stored_act_bytes;
      m.transient = costs_.Attention(l).transient_act_bytes;
      const LocalParams& params = costs_.LayerParams(l);
      m.buffer = GathersParams() ? (params.dense + params.expert) * kWeightBytesPerParam : 0;
      if (!e_.model.IsMoeLayer(l)) {
        m.stored += dense.mlp.stored_act_bytes;
        m.transient += dense.mlp.transient_act_bytes;
        continue;
      }
      if (!moe)
        moe = MoeLayerCost(e_.model, costs_.shape(), p.ep, costs_.ExpertLoad(/*ep_coord=*/0));
      m.stored += moe->router.stored_act_bytes + moe->experts.stored_act_bytes;
      if (e_.model.shared_experts > 0) m.stored += moe->shared.stored_act_bytes;
      m.transient += moe->experts.transient_act_bytes + moe->shared.transient_act_bytes;
    }
    // Per virtual stage: the activations one forward of it stores (its logits first).
    const StageSplit& split = costs_.split();
    chunk_stored_.resize(split.VirtualStages());
    for (int vs = 0; vs < split.VirtualStages(); ++vs) {
      double chunk = split.IsLast(vs) ? costs_.LogitBytes() : 0;
      for (int l = split.FirstLayer(vs); l < split.EndLayer(vs); ++l) chunk += layers_[l].stored;
      chunk_stored_[vs] = chunk;
    }
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
         StageOrder(p.schedule, p.pp, p.virtual_stages, p.MicroBatches(), stage)) {
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
        // The logits' backward runs with them and the gathered embedding; the chunk's
        // last layer's backward (its first) runs after the logits are freed, with that
        // layer's recomputed activations and gathered parameters allocated.
        if (split.IsLast(vs)) consider(running, EmbeddingBuffer());
        if (end > first)
          consider(running - logits, layers_[end - 1].transient + layers_[end - 1].buffer);
        running -= chunk;
      }
    }
  }

  bool GathersParams() const { return e_.plan.zero >= 3 && nd_ > 1; }
  double EmbeddingBuffer() const {
    return GathersParams() ? costs_.EmbeddingParams() * kWeightBytesPerParam : 0;
  }

  const Experiment& e_;
  const StageCosts costs_;
  int nd_ = 1;
  int ned_ = 1;
  std::vector<LayerMemory> layers_;
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

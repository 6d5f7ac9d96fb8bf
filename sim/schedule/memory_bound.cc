#include "sim/schedule/memory_bound.h"

#include <algorithm>

#include "sim/schedule/model_states.h"
#include "sim/schedule/pipeline_order.h"
#include "sim/workload/transformer.h"

namespace meshsim {
namespace {

// The same quantities StepBuilder derives from the plan, for one stage.
struct StageMemory {
  const Experiment& e;
  LayerCost layer;
  LayerShape shape;
  int layers_per_chunk = 0;
  int nd = 1;

  explicit StageMemory(const Experiment& ex) : e(ex) {
    const PlanSpec& p = e.plan;
    shape.seq = e.model.seq_len / p.cp;
    shape.micro_batch = p.micro_batch;
    shape.tp = p.tp;
    shape.sequence_parallel = p.sequence_parallel && p.tp > 1;
    shape.recompute = p.recompute;
    shape.dtype = e.training.dtype;
    layer = TransformerLayerCost(e.model, shape);
    layers_per_chunk = e.model.layers / (p.pp * p.virtual_stages);
    nd = p.dp * p.cp;
  }

  bool IsLast(int vs) const { return vs == e.plan.pp * e.plan.virtual_stages - 1; }
  double EmbeddingParamsLocal() const { return EmbeddingParams(e.model) / e.plan.tp; }
  bool HoldsOutput(int stage) const {
    return stage == e.plan.pp - 1 && !(e.model.tied_embeddings && e.plan.pp == 1);
  }
  double LocalParams(int stage) const {
    double params = layers_per_chunk * e.plan.virtual_stages * layer.params;
    if (stage == 0) params += EmbeddingParamsLocal();
    if (HoldsOutput(stage)) params += EmbeddingParamsLocal();
    return params;
  }
  double LogitBytes() const {
    return 4.0 * shape.seq * shape.micro_batch * static_cast<double>(e.model.vocab) / e.plan.tp;
  }
  bool GathersParams() const { return e.plan.zero >= 3 && nd > 1; }

  MemoryBound Bound(int stage) const {
    const PlanSpec& p = e.plan;
    MemoryBound best;
    const ModelStateBytes states = ModelStates(LocalParams(stage), nd, p.zero, e.training);
    best.weights = states.weights;
    best.gradients = states.gradients;
    best.optimizer = states.optimizer;
    best.stage = stage;
    const double per_layer = layer.attention.stored_act_bytes + layer.mlp.stored_act_bytes;
    const double transient = layer.attention.transient_act_bytes + layer.mlp.transient_act_bytes;
    const double layer_buffer = GathersParams() ? layer.params * kWeightBytesPerParam : 0;
    const double embedding_buffer =
        GathersParams() ? EmbeddingParamsLocal() * kWeightBytesPerParam : 0;
    double running = 0;  // stored activations of the chunks in flight
    auto consider = [&](double activations, double buffers) {
      if (activations + buffers > best.activations + best.buffers) {
        best.activations = activations;
        best.buffers = buffers;
      }
    };
    for (const PipelineStep& s :
         StageOrder(p.schedule, p.pp, p.virtual_stages, p.MicroBatches(), stage)) {
      const int vs = s.chunk * p.pp + stage;
      const double logits = IsLast(vs) ? LogitBytes() : 0;
      const double chunk = layers_per_chunk * per_layer + logits;
      if (s.forward) {
        // The chunk's last kernel (the logits, or its last layer's MLP) runs with all of
        // the chunk's activations allocated and, under ZeRO-3, its parameters gathered.
        running += chunk;
        consider(running, IsLast(vs) ? embedding_buffer
                                     : (layers_per_chunk > 0 ? layer_buffer : 0));
      } else {
        // The logits' backward runs with them and the gathered embedding; the first
        // layer's backward kernels run after the logits are freed, with the layer's
        // recomputed activations and gathered parameters allocated.
        if (IsLast(vs)) consider(running, embedding_buffer);
        if (layers_per_chunk > 0) consider(running - logits, transient + layer_buffer);
        running -= chunk;
      }
    }
    return best;
  }
};

}  // namespace

MemoryBound EstimatePeakMemory(const Experiment& e) {
  const StageMemory m(e);
  MemoryBound first = m.Bound(0);
  if (e.plan.pp == 1) return first;
  MemoryBound last = m.Bound(e.plan.pp - 1);
  return last.Total() > first.Total() ? last : first;
}

}  // namespace meshsim

#include "sim/schedule/memory_bound.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "sim/schedule/model_states.h"
#include "sim/schedule/pipeline_order.h"
#include "sim/workload/transformer.h"

namespace meshsim {
namespace {

// What the step program allocates for one layer of rank 0 (step_builder.cc,
// layer_blocks.cc, moe_blocks.cc).
struct LayerMemory {
  double stored = 0;         // activations kept from the layer's forward to its backward
  double transient = 0;      // recomputed activations during the layer's backward
  double dense_params = 0;   // parameters held by this rank, replicated over dp x cp
  double expert_params = 0;  // routed experts' parameters, replicated over dp x cp / ep
};

// The quantities StepBuilder derives from the plan, for the ranks of rank 0's pipeline.
class StageMemory {
 public:
  explicit StageMemory(const Experiment& ex) : e_(ex) {
    const PlanSpec& p = e_.plan;
    shape_.seq = e_.model.seq_len / p.cp;
    shape_.kv_seq = e_.model.seq_len;
    shape_.micro_batch = p.micro_batch;
    shape_.tp = p.tp;
    shape_.sequence_parallel = p.sequence_parallel && p.tp > 1;
    shape_.recompute = p.recompute;
    shape_.dtype = e_.training.dtype;
    shape_.flash_attention = e_.training.flash_attention;
    const LayerCost dense = TransformerLayerCost(e_.model, shape_);
    layers_per_chunk_ = e_.model.layers / (p.pp * p.virtual_stages);
    nd_ = p.dp * p.cp;
    ned_ = nd_ / p.ep;
    layers_.resize(e_.model.layers);
    std::optional<MoeCost> moe;
    for (int l = 0; l < e_.model.layers; ++l) {
      LayerMemory& m = layers_[l];
      m.stored = dense.attention.stored_act_bytes;
      m.transient = dense.attention.transient_act_bytes;
      if (!e_.model.IsMoeLayer(l)) {
        m.stored += dense.mlp.stored_act_bytes;
        m.transient += dense.mlp.transient_act_bytes;
        m.dense_params = dense.params;
        continue;
      }
      if (!moe) moe = MoeLayerCost(e_.model, shape_, p.ep, Rank0ExpertLoad());
      m.stored += moe->router.stored_act_bytes + moe->experts.stored_act_bytes;
      if (e_.model.shared_experts > 0) m.stored += moe->shared.stored_act_bytes;
      m.transient += moe->experts.transient_act_bytes + moe->shared.transient_act_bytes;
      m.dense_params = AttentionParams(e_.model) / p.tp + moe->dense_params;
      m.expert_params = moe->expert_params;
    }
  }

  MemoryBound Bound(int stage) const {
    const PlanSpec& p = e_.plan;
    MemoryBound best;
    double dense_params = 0, expert_params = 0;
    for (int chunk = 0; chunk < p.virtual_stages; ++chunk) {
      for (int l = FirstLayer(chunk * p.pp + stage); l < FirstLayer(chunk * p.pp + stage + 1);
           ++l) {
        dense_params += layers_[l].dense_params;
        expert_params += layers_[l].expert_params;
      }
    }
    if (stage == 0) dense_params += EmbeddingParamsLocal();
    if (HoldsOutput(stage)) dense_params += EmbeddingParamsLocal();
    const ModelStateBytes dense = ModelStates(dense_params, nd_, p.zero, e_.training);
    const ModelStateBytes expert = ModelStates(expert_params, ned_, p.zero, e_.training);
    best.weights = dense.weights + expert.weights;
    best.gradients = dense.gradients + expert.gradients;
    best.optimizer = dense.optimizer + expert.optimizer;
    best.stage = stage;

    double running = 0;  // stored activations of the chunks in flight
    auto consider = [&best](double activations, double buffers) {
      if (activations + buffers > best.activations + best.buffers) {
        best.activations = activations;
        best.buffers = buffers;
      }
    };
    for (const PipelineStep& s :
         StageOrder(p.schedule, p.pp, p.virtual_stages, p.MicroBatches(), stage)) {
      const int vs = s.chunk * p.pp + stage;
      const int first = FirstLayer(vs), end = FirstLayer(vs + 1);
      const double logits = IsLast(vs) ? LogitBytes() : 0;
      double chunk = logits;
      for (int l = first; l < end; ++l) chunk += layers_[l].stored;
      if (s.forward) {
        // The chunk's last kernel (the logits, or its last layer's last block) runs with
        // all of the chunk's activations allocated and, under ZeRO-3, its parameters
        // gathered.
        running += chunk;
        consider(running,
                 IsLast(vs) ? EmbeddingBuffer() : (end > first ? LayerBuffer(end - 1) : 0));
      } else {
        // The logits' backward runs with them and the gathered embedding; the chunk's
        // last layer's backward (its first) runs after the logits are freed, with that
        // layer's recomputed activations and gathered parameters allocated.
        if (IsLast(vs)) consider(running, EmbeddingBuffer());
        if (end > first)
          consider(running - logits, layers_[end - 1].transient + LayerBuffer(end - 1));
        running -= chunk;
      }
    }
    return best;
  }

  int pp() const { return e_.plan.pp; }

 private:
  // Rank 0's experts (EP coordinate 0) take the busiest expert's tokens under a skew.
  double Rank0ExpertLoad() const {
    const PlanSpec& p = e_.plan;
    if (p.moe_skew == 1.0) return 1.0;
    const double experts = e_.model.experts, local = experts / p.ep;
    double hot = p.moe_skew;
    if (p.moe_capacity_factor > 0) hot = std::min(hot, p.moe_capacity_factor);
    const double others = (experts - hot) / (experts - 1);
    return (hot + (local - 1) * others) / local;
  }
  int FirstLayer(int vs) const { return vs * layers_per_chunk_; }
  bool IsLast(int vs) const { return vs == e_.plan.pp * e_.plan.virtual_stages - 1; }
  double EmbeddingParamsLocal() const { return EmbeddingParams(e_.model) / e_.plan.tp; }
  bool HoldsOutput(int stage) const {
    return stage == e_.plan.pp - 1 && !(e_.model.tied_embeddings && e_.plan.pp == 1);
  }
  double LogitBytes() const {
    return 4.0 * shape_.seq * shape_.micro_batch * static_cast<double>(e_.model.vocab) / e_.plan.tp;
  }
  bool GathersParams() const { return e_.plan.zero >= 3 && nd_ > 1; }
  double LayerBuffer(int l) const {
    return GathersParams()
               ? (layers_[l].dense_params + layers_[l].expert_params) * kWeightBytesPerParam
               : 0;
  }
  double EmbeddingBuffer() const {
    return GathersParams() ? EmbeddingParamsLocal() * kWeightBytesPerParam : 0;
  }

  const Experiment& e_;
  LayerShape shape_;
  int layers_per_chunk_ = 0;
  int nd_ = 1;
  int ned_ = 1;
  std::vector<LayerMemory> layers_;
};

}  // namespace

MemoryBound EstimatePeakMemory(const Experiment& e) {
  const StageMemory m(e);
  MemoryBound first = m.Bound(0);
  if (m.pp() == 1) return first;
  MemoryBound last = m.Bound(m.pp() - 1);
  return last.Total() > first.Total() ? last : first;
}

}  // namespace meshsim

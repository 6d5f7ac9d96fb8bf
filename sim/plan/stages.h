// How a plan splits the model's layers over its pipeline: the one derivation of which
// layers each stage (and model chunk) holds, used by validation, the step builder and
// the memory bound.
//
// The pipeline has n = pp * virtual_stages virtual stages; chunk c of stage s is virtual
// stage c*pp + s (Megatron-LM's interleaved order: a micro-batch passes stages 0..pp-1
// with chunk 0, then again with chunk 1, ...). Virtual stage i holds the contiguous
// layers [FirstLayer(i), EndLayer(i)); virtual stage 0 also holds the embedding, virtual
// stage n-1 the output layer and the loss.
//
// plan.stage_layers lists the layers of each virtual stage, in virtual-stage order. When
// it is absent, DefaultStageLayers decides:
//   - n divides the layers: layers / n each (Megatron-LM's default split);
//   - otherwise Megatron-LM's split with --account-for-embedding-in-pipeline-split and
//     --account-for-loss-in-pipeline-split: the embedding and the loss each count as one
//     layer, the layers + 2 units are split evenly over the n virtual stages, and the
//     first and last virtual stage build one layer fewer (megatron/core/transformer/
//     transformer_block.py, get_num_layers_to_build). Megatron refuses when n does not
//     divide layers + 2; meshsim then gives the r = (layers + 2) % n leftover units one
//     each to the first r virtual stages, as torchtitan's generate_llm_fqn_per_model_part
//     (torchtitan/distributed/pipeline_parallel.py) does. E.g. 126 layers on pp 16:
//     [7, 8 x 14, 7]; on pp 16 x v 2: [3, 4 x 30, 3]; 70 layers on pp 12: [5, 6 x 10, 5].
//   It needs n <= layers + 2 (every virtual stage at least one unit).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/core/status.h"
#include "sim/plan/plan_spec.h"
#include "sim/workload/model_spec.h"

namespace meshsim {

// Layers per virtual stage for `layers` over `n` virtual stages when the embedding and
// the loss count as `embedding_units` and `loss_units` layers (0 or 1 each, Megatron's
// --account-for-embedding/loss-in-pipeline-split): the layers + units are split as
// evenly as possible (the remainder one each to the first virtual stages), then the first
// virtual stage builds embedding_units layers fewer and the last loss_units fewer.
// nullopt when that leaves an entry below 0. Precondition: n >= 1, layers >= 0.
std::optional<std::vector<int>> AccountedStageLayers(int layers, int n, int embedding_units,
                                                     int loss_units);

// The split meshsim uses when plan.stage_layers is absent (see above); nullopt when
// pp*virtual_stages > layers + 2. Precondition: pp, virtual_stages, layers >= 1.
std::optional<std::vector<int>> DefaultStageLayers(int layers, int pp, int virtual_stages);

// Checks plan.stage_layers against the plan and model, or, when it is absent, that the
// default split exists. The error's key names the entry at fault ("plan.stage_layers[3]")
// or, for a missing default split, plan.pp. Precondition: pp, virtual_stages >= 1.
Status CheckStageLayers(const PlanSpec& plan, const ModelSpec& model);

// "7/8/8/7": the list as results.csv writes it (empty for an empty list).
std::string StageLayersText(const std::vector<int>& stage_layers);
// Reads StageLayersText's form back; false when `text` is not one.
bool ParseStageLayersText(const std::string& text, std::vector<int>* out);

class StageSplit {
 public:
  // Precondition: CheckStageLayers(plan, model) passed.
  StageSplit(const PlanSpec& plan, const ModelSpec& model);

  int pp() const { return pp_; }
  int VirtualStages() const { return static_cast<int>(first_.size()) - 1; }
  int VirtualStage(int chunk, int stage) const { return chunk * pp_ + stage; }
  int FirstLayer(int vs) const { return first_[vs]; }
  int EndLayer(int vs) const { return first_[vs + 1]; }
  int Layers(int vs) const { return first_[vs + 1] - first_[vs]; }
  // Virtual stage 0 runs the embedding, the last one the output layer and the loss.
  bool IsFirst(int vs) const { return vs == 0; }
  bool IsLast(int vs) const { return vs == VirtualStages() - 1; }
  // Every virtual stage holds the same number of layers.
  bool Even() const { return even_; }

 private:
  int pp_ = 1;
  std::vector<int> first_;  // first_[vs]: first layer of virtual stage vs; back(): layers
  bool even_ = true;
};

}  // namespace meshsim

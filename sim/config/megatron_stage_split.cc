// Megatron-LM arguments -> plan.stage_layers (megatron_decoders.h).
#include <string>
#include <vector>

#include "sim/config/megatron_decoders.h"
#include "sim/plan/stages.h"

namespace meshsim::megatron_internal {

// "[5, 6, 6, 5]".
std::string ListText(const std::vector<int>& v) {
  std::string s;
  for (int x : v) s += (s.empty() ? "[" : ", ") + N(x);
  return s + "]";
}

namespace {

// --decoder-first/last-pipeline-num-layers, or their TransformerConfig names
// --num-layers-in-first/last-pipeline-stage: the value (>= 1, as Megatron requires), 0
// when absent. `shown` gets the name given.
int StageFlag(const Args& a, const char* flag, const char* config_name, std::string* shown) {
  *shown = a.Has(flag) ? flag : config_name;
  if (a.Has(flag) && a.Has(config_name) && a.Int32(flag, 0, 1) != a.Int32(config_name, 0, 1)) {
    Fail(config_name, std::string("disagrees with ") + flag);
  }
  return a.Int32(*shown, 0, 1);
}

// Megatron-LM's uneven first and last stages (megatron/core/transformer/
// transformer_block.py, get_num_layers_to_build; checks from transformer_config.py): the
// first (last) stage builds F (L) layers in all, F/v (L/v) per model chunk; the other
// stages share the rest evenly, rest/(pp - given)/v per chunk. Per stage, in virtual-stage
// order.
std::vector<int> FirstLastStageLayers(const Args& a, MegatronImport* out, int first, int last,
                                      const std::string& first_flag, const std::string& last_flag) {
  const PlanSpec& p = out->plan;
  const int v = p.virtual_stages;
  if (a.Has("--num-layers-per-virtual-pipeline-stage")) {
    Fail("--num-layers-per-virtual-pipeline-stage",
         "Megatron-LM needs --num-virtual-stages-per-pipeline-rank with uneven first or last "
         "stages");
  }
  int64_t rest = out->model.layers;
  int left = p.pp;
  for (const auto& [n, flag] : {std::pair{first, first_flag}, std::pair{last, last_flag}}) {
    if (n == 0) continue;
    if (n % v != 0) Fail(flag, N(n) + " layers are not divisible by the virtual stages " + N(v));
    rest -= n;
    --left;
  }
  const std::string& flag = first > 0 ? first_flag : last_flag;
  if (rest < 0 || (rest > 0) != (left > 0) || (left > 0 && rest % (int64_t{left} * v) != 0)) {
    Fail(flag, N(rest) + " layers are left for the " + N(left) + " middle stages (of " + N(v) +
                   " model chunks each) of --num-layers " + N(out->model.layers) +
                   ": Megatron-LM needs them to divide evenly");
  }
  std::vector<int> per_stage(p.pp, left > 0 ? static_cast<int>(rest / left) : 0);
  if (first > 0) per_stage.front() = first;
  if (last > 0) per_stage.back() = last;
  std::vector<int> layers;
  for (int chunk = 0; chunk < v; ++chunk) {
    for (int stage = 0; stage < p.pp; ++stage) layers.push_back(per_stage[stage] / v);
  }
  return layers;
}

// The embedding and the loss counted as layers (--account-for-embedding/loss-in-
// pipeline-split): Megatron needs pp*v to divide the units, then the first (last) model
// chunk builds one layer fewer.
std::vector<int> AccountedLayers(MegatronImport* out, bool embedding, bool loss) {
  const PlanSpec& p = out->plan;
  const int units = out->model.layers + (embedding ? 1 : 0) + (loss ? 1 : 0);
  const int64_t n = int64_t{p.pp} * p.virtual_stages;
  const char* flag = embedding ? kAccountEmbedding : kAccountLoss;
  if (units % n != 0) {
    Fail(flag, "--num-layers " + N(out->model.layers) + " + " + N(units - out->model.layers) +
                   " = " + N(units) + " is not divisible by pp*virtual_stages = " + N(n) +
                   " (Megatron-LM refuses it)");
  }
  std::optional<std::vector<int>> layers =
      AccountedStageLayers(out->model.layers, static_cast<int>(n), embedding, loss);
  if (!layers) Fail(flag, "leaves the first or last model chunk fewer than 0 layers");
  return *layers;
}

}  // namespace

// plan.stage_layers from Megatron's uneven-split flags. Without them, Megatron needs
// pp*v to divide the layers; where it does not, meshsim's default split is warned.
void DecodeStageSplit(const Args& a, MegatronImport* out) {
  PlanSpec& p = out->plan;
  std::string first_flag, last_flag;
  const int first = StageFlag(a, kFirstLayers, "--num-layers-in-first-pipeline-stage", &first_flag);
  const int last = StageFlag(a, kLastLayers, "--num-layers-in-last-pipeline-stage", &last_flag);
  const bool embedding = a.Flag(kAccountEmbedding), loss = a.Flag(kAccountLoss);
  if ((first > 0 || last > 0) && (embedding || loss)) {
    Fail(first > 0 ? first_flag : last_flag, std::string("cannot be combined with ") +
                                                 (embedding ? kAccountEmbedding : kAccountLoss) +
                                                 " (Megatron-LM refuses it)");
  }
  const int64_t n = int64_t{p.pp} * p.virtual_stages;
  std::string from;
  if (first > 0 || last > 0) {
    if (p.pp == 1) {
      out->notes.push_back(first_flag + " / " + last_flag + " ignored: pp is 1");
      return;
    }
    p.stage_layers = FirstLastStageLayers(a, out, first, last, first_flag, last_flag);
    from = (first > 0 ? first_flag + " " + N(first) : "") + (first > 0 && last > 0 ? ", " : "") +
           (last > 0 ? last_flag + " " + N(last) : "");
  } else if (embedding || loss) {
    p.stage_layers = AccountedLayers(out, embedding, loss);
    from = std::string(embedding ? kAccountEmbedding : "") + (embedding && loss ? ", " : "") +
           (loss ? kAccountLoss : "");
  } else {
    if (out->model.layers % n != 0) {
      const std::optional<std::vector<int>> d =
          DefaultStageLayers(out->model.layers, p.pp, p.virtual_stages);
      out->warnings.push_back(
          "Megatron-LM refuses --num-layers " + N(out->model.layers) +
          " over pp*virtual_stages = " + N(n) +
          " without an uneven-split flag; meshsim splits them by its default (the "
          "embedding and the loss counted as a layer each)" +
          (d ? ": " + ListText(*d) : std::string()));
    }
    return;
  }
  out->notes.push_back("stage_layers " + ListText(p.stage_layers) + " (virtual-stage order) from " +
                       from + ", as Megatron-LM's get_num_layers_to_build splits them");
}

}  // namespace meshsim::megatron_internal

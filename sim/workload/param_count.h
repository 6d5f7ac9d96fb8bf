// Parameter counts of dense and Mixture-of-Experts transformers: all parameters, and those
// a token passes through (active).
//
// Which layers are MoE (0-based index i, when experts > 0): i >= dense_layers and
// (i - dense_layers) % moe_every == 0. So dense_layers leading layers are dense, the next
// layer is MoE, and every moe_every-th layer after it. A MoE layer's MLP is a router
// (hidden x experts), `experts` routed experts and `shared_experts` shared experts, each
// an MLP of FfnMatrices() matrices of hidden x moe_ffn_hidden (moe_ffn_hidden 0 means
// ffn_hidden, as Megatron-LM's default). A dense layer's MLP has FfnMatrices() matrices
// of hidden x ffn_hidden. Biases are not counted (Llama-style models have none).
#pragma once

#include "sim/workload/model_spec.h"

namespace meshsim {

struct ParamCount {
  double total = 0;   // every parameter of the model
  double active = 0;  // those used for one token: top_k routed experts + shared experts
};

// Embedding + untied output layer + per layer (attention, two norms, dense MLP or MoE
// block) + final norm. For a dense model, total == active == TotalParams(m).
ParamCount CountParams(const ModelSpec& m);

// Whether layer `layer` (0-based) has a MoE block instead of a dense MLP.
bool IsMoeLayer(const ModelSpec& m, int layer);
// Number of MoE layers of the model.
int MoeLayerCount(const ModelSpec& m);
// The intermediate size of one expert (moe_ffn_hidden, or ffn_hidden when that is 0).
int64_t ExpertFfnHidden(const ModelSpec& m);

}  // namespace meshsim

// The parts of the Megatron importer that decode the arguments (config-layer internal, for
// import_megatron.cc): the model, the plan, the training keys and the pipeline split, each a
// file of its own.
#pragma once

#include <string>
#include <vector>

#include "sim/config/megatron_args.h"

namespace meshsim::megatron_internal {

inline constexpr const char* kFirstLayers = "--decoder-first-pipeline-num-layers";
inline constexpr const char* kLastLayers = "--decoder-last-pipeline-num-layers";
inline constexpr const char* kAccountEmbedding = "--account-for-embedding-in-pipeline-split";
inline constexpr const char* kAccountLoss = "--account-for-loss-in-pipeline-split";

// The model keys: layers, hidden, heads and query groups, FFN, sequence, vocabulary and
// MoE (megatron_model.cc).
void DecodeModel(const Args& a, MegatronImport* out);

// The plan keys: parallel sizes, schedule, sharding, overlaps, recomputation, offloading,
// MoE dispatch (megatron_plan.cc). Call after DecodeModel.
void DecodePlan(const Args& a, MegatronImport* out);

// The training keys: precision, FP8 recipe, optimizer, gradient buffers, attention, CUDA
// graphs (megatron_training.cc).
void DecodeTraining(const Args& a, MegatronImport* out);

// The MoE layer's Megatron-Core options that meshsim models
// (plan.framework_options: fused_grouped_mlp, moe_paged_stash, moe_flex_dispatcher_num_sms,
// overlap_moe_expert_parallel_comm, overlap_dispatch_backward_with_experts_wgrad)
// (megatron_plan.cc). Call after DecodePlan and DecodeTraining.
void DecodeMoeOptions(const Args& a, MegatronImport* out);

// plan.stage_layers from Megatron's uneven-split flags (megatron_stage_split.cc). Without
// them, Megatron needs pp*v to divide the layers; where it does not, meshsim's default
// split is warned. Call after the plan's pp and virtual stages are set.
void DecodeStageSplit(const Args& a, MegatronImport* out);

// "[5, 6, 6, 5]".
std::string ListText(const std::vector<int>& v);

}  // namespace meshsim::megatron_internal

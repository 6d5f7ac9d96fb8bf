// How `meshsim import hf` reads the fields particular to a family of configs (MoE
// layouts, DeepSeek's MLA, GPT-OSS, sliding windows, the Nemotron-H hybrid pattern) into a
// ModelSpec, with the approximations they imply as warnings. Internal to import_hf*.cc.
#pragma once

#include "sim/config/import_hf_fields.h"

namespace meshsim::hf_internal {

void DecodeMixtral(const Fields& f, ModelSpec* m);
void DecodeQwen2Moe(const Fields& f, ModelSpec* m, HfImport* out);
// Multi-token-prediction modules (num_nextn_predict_layers): a warning, not imported.
void WarnMtp(const Fields& f, HfImport* out);
void DecodeDeepseek(const Fields& f, ModelSpec* m);
void DecodeGptOss(const Fields& f, ModelSpec* m, HfImport* out);
// Nemotron-H / Nemotron 3 (model_type nemotron_h): layer pattern, Mamba-2 sizes, MoE.
void DecodeNemotronH(const Fields& f, ModelSpec* m, HfImport* out);
// sliding_window and layer_types.
void DecodeSlidingWindow(const Fields& f, ModelSpec* m, HfImport* out);

}  // namespace meshsim::hf_internal

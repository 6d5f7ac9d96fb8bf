// The fitted defaults declared in cluster_spec.h. They live here, not in the header, so that
// a refit (scripts/fit_grouped_gemm.py) recompiles one file instead of every user of
// ClusterSpec.
#include "sim/hw/cluster_spec.h"

namespace meshsim {

// The default of EfficiencySpec::grouped_gemm: fitted by scripts/fit_grouped_gemm.py on
// the Megatron-Bridge MoE rows of shared/validation/public_runs.md whose runs take the
// unfused grouped-GEMM path (README "MoE experts: grouped GEMMs"; 9 rows, H100 Qwen3 235B
// left out for its run time), one value for every GPU: 0.6 (refitted 2026-12-02 after the
// GPT-OSS experts' bias and clamp kernels: mean absolute step error 7.97 %, max 14.93 %;
// 0.55 before, 8.21 %; leave-one-out 9.46 %, max 18.84 %).
extern const double kGroupedGemmEfficiency = 0.6;

// The default of EfficiencySpec::gmm: fitted by scripts/fit_grouped_gemm.py --library gmm on
// the 5 NeMo-Automodel H100 BF16 MoE rows of shared/validation/public_runs.md that run the
// grouped_gemm library or torch._grouped_mm (README "MoE experts: NeMo-Automodel's
// libraries and fake gate"): 0.55 (refitted 2026-12-02 after the library's one launch per
// GEMM and FSDP2's expert gathers: mean absolute step error 8.13 %, max 17.25 %; 0.6 before,
// 8.94 %; leave-one-out 12.61 %, max 17.25 %).
extern const double kGmmEfficiency = 0.55;

// The default of EfficiencySpec::fused_grouped_gemm: 1, the fused kernels at their
// measured speed (GpuSpec::fused_grouped_mlp; README "The fused grouped MLP's kernels,
// measured").
extern const double kFusedGroupedGemmEfficiency = 1.0;

}  // namespace meshsim

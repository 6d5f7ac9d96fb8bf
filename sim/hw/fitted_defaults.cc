// The fitted defaults declared in cluster_spec.h. They live here, not in the header, so that
// a refit (scripts/fit_grouped_gemm.py) recompiles one file instead of every user of
// ClusterSpec.
#include "sim/hw/cluster_spec.h"

namespace meshsim {

// The default of EfficiencySpec::grouped_gemm: fitted by scripts/fit_grouped_gemm.py on
// the Megatron-Bridge MoE rows of shared/validation/public_runs.md whose runs take the
// unfused grouped-GEMM path (README "MoE experts: grouped GEMMs"; 10 rows), one value for
// every GPU: 0.6 (refitted 2026-12-04, twenty-second revision, after the H100 FP8 refit to
// matmul_fp8 0.56: 10.83 %, max 34.30 %, leave-one-out 11.77 % / 34.30 %; 0.55 there:
// 11.09 %; grid 0.45-0.65). Before: 0.55 (refitted 2026-12-03, seventeenth revision, after each
// GroupedLinear forward call waits only for its own per-expert host work and host.launch_us
// 60: 10.55 %, max 32.14 %, leave-one-out 10.55 %; 0.6 there: 10.94 %). Before: 0.6 (refitted
// 2026-12-02 after host.launch_us 50, HybridEP's rate by NVLink
// domains and the trailing GPT-OSS bias launches: mean absolute step error 8.89 %, max
// 18.13 %; leave-one-out 8.89 %, max 18.13 %; before, 9 rows: 7.97 % / 14.93 %; unchanged
// by the 2026-12-03 refit after GroupedLinear's host count per call and per expert, the MoE
// activation backward and YaRN's unfused RoPE: 10.27 % / 22.46 %, leave-one-out 10.61 % /
// 22.46 %; and by the sixteenth revision's DeepSeek-V3 with its MTP layer, layout and
// mla_up_proj: 10.69 % / 22.46 %, leave-one-out 11.59 % / 22.46 %).
extern const double kGroupedGemmEfficiency = 0.6;

// The default of EfficiencySpec::gmm: fitted by scripts/fit_grouped_gemm.py --library gmm on
// the 5 NeMo-Automodel H100 BF16 MoE rows of shared/validation/public_runs.md that run the
// grouped_gemm library or torch._grouped_mm (README "MoE experts: NeMo-Automodel's
// libraries and fake gate"): 0.55 (refitted 2026-12-02 after host.launch_us 50: mean
// absolute step error 8.25 %, max 17.67 %; leave-one-out 10.96 %, max 17.67 %; before
// 8.13 % / 17.25 %; unchanged by the 2026-12-03 refit: 8.53 % / 16.01 %, leave-one-out
// 12.90 % / 22.07 %).
extern const double kGmmEfficiency = 0.55;

// The default of EfficiencySpec::fused_grouped_gemm: 1, the fused kernels at their
// measured speed (GpuSpec::fused_grouped_mlp; README "The fused grouped MLP's kernels,
// measured").
extern const double kFusedGroupedGemmEfficiency = 1.0;

}  // namespace meshsim

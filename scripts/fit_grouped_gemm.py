#!/usr/bin/env python3
"""Fits cluster.efficiency.grouped_gemm (the share of the dense GEMM efficiency that the
routed experts' GEMMs reach on Transformer Engine's unfused GroupedLinear path, README "MoE
experts: grouped GEMMs") on rows of shared/validation/public_runs.md, with a leave-one-out
check; with --library gmm, cluster.efficiency.gmm (the grouped_gemm library's per-expert
cuBLAS GEMMs and torch._grouped_mm's grouped kernel, plan.moe_grouped_gemm: gmm or
torch_mm) on the rows that run those libraries.

One value for every GPU kind and precision: each grid point sets
--set cluster.efficiency.<knob> on top of the rows' experiments (their topologies'
other values as committed); the objective is the mean absolute step-time error over the
rows in percent (rounded to 0.01 %, ties to the smaller max error, then the larger value).
Leave-one-out: each row predicted with the point that fits the others.

Default rows, --library te: the MoE rows whose runs take GroupedLinear (one cuBLAS GEMM per
local expert): every Megatron-Bridge MoE row of the data sets but the GB200 MXFP8 rows of
the 26.06+ recipes, which run the fused grouped MLP (plan.framework_options.
fused_grouped_mlp), and the hybrid Mamba-2/MoE rows (their Mamba-2 layers are a separate
question), which stay held out. NeMo-Automodel's MoE rows run other libraries (their
configs' backend.experts: gmm or torch_mm) and are not among them.
--library gmm: the NeMo-Automodel rows whose configs set backend.experts gmm or torch_mm
(torch._grouped_mm, at the same knob).

The committed defaults (kGroupedGemmEfficiency, kGmmEfficiency) live in
sim/hw/fitted_defaults.cc, with the fit's numbers beside them; changing one rebuilds that file.

Usage: scripts/fit_grouped_gemm.py [--library te|gmm] [--meshsim build/meshsim]
                                   [--grid 0.5,0.6,0.7] [--rows A,B] [--jobs 2]
                                   [--set KEY=VALUE ...]
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from one_knob_fit import fit, parse_args  # noqa: E402

ROWS = ["public-h100-bridge-qwen3-30b-a3b", "public-h100-bridge-qwen3-235b-a22b",
        "public-h100-bridge-gpt-oss-120b",
        "public-b200-bridge-deepseek-v3", "public-b200-bridge-qwen3-30b-a3b",
        "public-b200-bridge-qwen3-235b-a22b", "public-b200-bridge-gpt-oss-120b",
        "public-gb200-bridge-deepseek-v3-bf16", "public-gb200-bridge-gpt-oss-120b-bf16",
        "public-gb200-bridge-qwen3-235b-a22b-bf16"]

# NeMo-Automodel's rows whose configs (examples/llm_benchmark/*, Automodel 79994aa1f) set
# backend.experts: gmm, and GPT-OSS 120B's, which sets torch_mm (torch._grouped_mm, timed at
# the same cluster.efficiency.gmm: README "MoE experts: NeMo-Automodel's libraries").
GMM_ROWS = ["public-h100-automodel-qwen3-30b-a3b", "public-h100-automodel-deepseek-v3-256",
            "public-h100-automodel-deepseek-v3-1024", "public-h100-automodel-gpt-oss-20b",
            "public-h100-automodel-gpt-oss-120b"]


def library():
    """Takes --library te|gmm off the command line (the shared parser does not know it)."""
    if "--library" not in sys.argv:
        return "te"
    at = sys.argv.index("--library")
    value = sys.argv[at + 1] if at + 1 < len(sys.argv) else ""
    if value not in ("te", "gmm"):
        sys.exit("--library: expected te or gmm")
    del sys.argv[at:at + 2]
    return value


def main():
    if library() == "gmm":
        args = parse_args(__doc__, GMM_ROWS, "0.4,0.5,0.55,0.6,0.7,0.8,0.9,1")
        fit(args, "cluster.efficiency.gmm", "gmm", prefer_larger=True)
        return
    args = parse_args(__doc__, ROWS, "0.4,0.45,0.5,0.55,0.6,0.65,0.7,0.75,0.8,0.9,1")
    fit(args, "cluster.efficiency.grouped_gemm", "grouped_gemm", prefer_larger=True)


if __name__ == "__main__":
    main()

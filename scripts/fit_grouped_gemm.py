#!/usr/bin/env python3
"""Fits cluster.efficiency.grouped_gemm (the share of the dense GEMM efficiency that the
routed experts' GEMMs reach on the unfused grouped-GEMM path, README "MoE experts: grouped
GEMMs") on rows of shared/validation/public_runs.md, with a leave-one-out check.

One value for every GPU kind and precision: each grid point sets
--set cluster.efficiency.grouped_gemm on top of the rows' experiments (their topologies'
other values as committed); the objective is the mean absolute step-time error over the
rows in percent (rounded to 0.01 %, ties to the smaller max error, then the larger value).
Leave-one-out: each row predicted with the point that fits the others.

Default rows: the MoE rows whose runs take the unfused path (Transformer Engine's
GroupedLinear, one cuBLAS GEMM per local expert, or NeMo-Automodel's grouped GEMM): every
MoE row of the data sets but the GB200 MXFP8 rows of the 26.06+ recipes, which run the
fused grouped MLP (plan.framework_options.fused_grouped_mlp), and the hybrid Mamba-2/MoE
rows (their Mamba-2 layers are a separate question), which stay held out.

Usage: scripts/fit_grouped_gemm.py [--meshsim build/meshsim] [--grid 0.5,0.6,0.7]
                                   [--rows A,B] [--jobs 2] [--set KEY=VALUE ...]
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from validation_data import DATASETS  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROWS = ["public-h100-bridge-qwen3-30b-a3b", "public-h100-bridge-qwen3-235b-a22b",
        "public-h100-bridge-gpt-oss-120b", "public-h100-automodel-deepseek-v3-1024",
        "public-h100-automodel-deepseek-v3-256", "public-h100-automodel-qwen3-30b-a3b",
        "public-h100-automodel-gpt-oss-20b", "public-h100-automodel-gpt-oss-120b",
        "public-b200-bridge-deepseek-v3", "public-b200-bridge-qwen3-30b-a3b",
        "public-b200-bridge-qwen3-235b-a22b", "public-b200-bridge-gpt-oss-120b",
        "public-gb200-bridge-deepseek-v3-bf16", "public-gb200-bridge-gpt-oss-120b-bf16",
        "public-gb200-bridge-qwen3-235b-a22b-bf16"]


def step_time(meshsim, experiment, value, sets):
    cmd = [meshsim, "run", os.path.join(ROOT, "workloads/experiments", experiment + ".yaml"),
           "--no-trace", "--summary", "-", "--set", f"cluster.efficiency.grouped_gemm={value}"]
    for s in sets:
        cmd += ["--set", s]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode not in (0, 3):  # 3: it ran, but does not fit in memory
        sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr}")
    out = proc.stdout
    return json.loads(out[out.index("{"):out.rindex("}") + 1])["step_time_s"]


def objective(err, rows, value):
    errors = [abs(err[(r, value)]) for r in rows]
    return (round(sum(errors) / len(errors), 2), max(errors), -value)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--meshsim", default=os.path.join(ROOT, "build/meshsim"))
    ap.add_argument("--grid", default="0.4,0.45,0.5,0.55,0.6,0.65,0.7,0.75,0.8,0.9,1")
    ap.add_argument("--rows", default=",".join(ROWS))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--set", action="append", default=[])
    args = ap.parse_args()
    grid = [float(x) for x in args.grid.split(",")]
    rows = args.rows.split(",")
    published = {r.experiment: r.published_s for d in DATASETS.values() for r in d.rows}
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        runs = {(r, v): pool.submit(step_time, args.meshsim, r, v, args.set)
                for r in rows for v in grid}
        err = {k: 100 * (f.result() / published[k[0]] - 1) for k, f in runs.items()}
    print(f"{'row':45s} " + " ".join(f"{v:7g}" for v in grid))
    for r in rows:
        print(f"{r:45s} " + " ".join(f"{err[(r, v)]:+7.2f}" for v in grid))
    mean, worst, value = min(objective(err, rows, v) for v in grid)
    print(f"fit: grouped_gemm {-value:g}: mean {mean:.2f} %, max {worst:.2f} %")
    held_out = []
    for r in rows:
        v_r = -min(objective(err, [o for o in rows if o != r], v) for v in grid)[2]
        held_out.append(abs(err[(r, v_r)]))
        print(f"  leave out {r}: grouped_gemm {v_r:g} -> {err[(r, v_r)]:+.2f} %")
    print(f"leave-one-out: mean {sum(held_out) / len(held_out):.2f} %, max {max(held_out):.2f} %")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Grid search of the A100 cluster's efficiency parameters on the calibration set.

Prints, for every (matmul efficiency, kernel overhead) pair, the mean and max absolute
step-time error over the 8 Korthikanti et al. 2022 runs, best first. The chosen values
go into topologies/selene-a100.yaml once, for all cases together.

Usage: scripts/calibrate.py [--meshsim build/meshsim] [--top 15]
"""
import argparse
import itertools
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from validate import STEP_TIMES, run  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--meshsim", default=os.path.join(ROOT, "build/meshsim"))
    ap.add_argument("--top", type=int, default=15)
    ap.add_argument("--matmul", default="0.70,0.72,0.74,0.76,0.78,0.80,0.82")
    ap.add_argument("--overhead-us", default="0,4,8,12,16,20,24")
    ap.add_argument("--set", action="append", default=[])
    args = ap.parse_args()
    rows = []
    for eff, over in itertools.product(args.matmul.split(","), args.overhead_us.split(",")):
        sets = args.set + [f"cluster.efficiency.matmul={eff}",
                           f"cluster.efficiency.kernel_overhead_us={over}"]
        errors = []
        for stem, full, sel in STEP_TIMES:
            for variant, published in (("full", full), ("selective", sel)):
                s = run(args.meshsim, f"{stem}-{variant}", sets)
                errors.append(100 * (s["step_time_s"] - published) / published)
        mean = sum(abs(e) for e in errors) / len(errors)
        rows.append((mean, max(abs(e) for e in errors), eff, over, errors))
    rows.sort()
    print("mean%  max%   matmul overhead_us  errors (22b f/s, 175b f/s, 530b f/s, 1t f/s)")
    for mean, mx, eff, over, errors in rows[: args.top]:
        print(f"{mean:5.2f} {mx:5.2f}   {eff:>6} {over:>11}  " + " ".join(f"{e:+.1f}" for e in errors))


if __name__ == "__main__":
    main()

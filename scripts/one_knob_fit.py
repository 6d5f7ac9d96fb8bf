"""One knob fitted on rows of shared/validation/public_runs.md, with a leave-one-out check:
the shared core of scripts/fit_grouped_gemm.py and scripts/fit_host_launch.py.

Each grid point runs every row's experiment with `--set KEY=VALUE` on top (the topologies'
other values as committed, plus any extra --set); the objective is the mean absolute
step-time error over the rows in percent (rounded to 0.01 %), ties to the smaller max error,
then to the smaller value (or the larger, with prefer_larger). Leave-one-out: each row is
predicted with the grid point that fits the other rows.
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


def step_time(meshsim, experiment, key, value, sets):
    """The step time meshsim predicts for one experiment with KEY=VALUE set."""
    cmd = [meshsim, "run", os.path.join(ROOT, "workloads/experiments", experiment + ".yaml"),
           "--no-trace", "--summary", "-", "--set", f"{key}={value}"]
    for s in sets:
        cmd += ["--set", s]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode not in (0, 3):  # 3: it ran, but does not fit in memory
        sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr}")
    out = proc.stdout
    return json.loads(out[out.index("{"):out.rindex("}") + 1])["step_time_s"]


def parse_args(doc, default_rows, default_grid):
    """The command line every one-knob fit script shares."""
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("--meshsim", default=os.path.join(ROOT, "build/meshsim"))
    ap.add_argument("--grid", default=default_grid)
    ap.add_argument("--rows", default=",".join(default_rows))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--set", action="append", default=[],
                    help="KEY=VALUE applied to every run (repeatable)")
    return ap.parse_args()


def fit(args, key, label, prefer_larger=False):
    """Runs the grid over the rows, prints the error table, the fit and its leave-one-out."""
    grid = [float(x) for x in args.grid.split(",")]
    rows = args.rows.split(",")
    published = {r.experiment: r.published_s for d in DATASETS.values() for r in d.rows}
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        runs = {(r, v): pool.submit(step_time, args.meshsim, r, key, v, args.set)
                for r in rows for v in grid}
        err = {k: 100 * (f.result() / published[k[0]] - 1) for k, f in runs.items()}
    sign = -1 if prefer_larger else 1

    def best(subset):
        def objective(v):
            errors = [abs(err[(r, v)]) for r in subset]
            return (round(sum(errors) / len(errors), 2), max(errors), sign * v)
        return min(grid, key=objective)

    print(f"{'row':45s} " + " ".join(f"{v:7g}" for v in grid))
    for r in rows:
        print(f"{r:45s} " + " ".join(f"{err[(r, v)]:+7.2f}" for v in grid))
    chosen = best(rows)
    errors = [abs(err[(r, chosen)]) for r in rows]
    print(f"fit: {label} {chosen:g}: mean {sum(errors) / len(errors):.2f} %, "
          f"max {max(errors):.2f} %")
    held_out = []
    for r in rows:
        v_r = best([o for o in rows if o != r])
        held_out.append(abs(err[(r, v_r)]))
        print(f"  leave out {r}: {label} {v_r:g} -> {err[(r, v_r)]:+.2f} %")
    print(f"leave-one-out: mean {sum(held_out) / len(held_out):.2f} %, max {max(held_out):.2f} %")

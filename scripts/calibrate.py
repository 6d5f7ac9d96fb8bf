#!/usr/bin/env python3
"""Grid search of one GPU kind's compute efficiencies on its data set, with a leave-one-out
check; --write puts the fit into that data set's topology.

Data sets (scripts/validation_data.py; --dataset, default a100-korthikanti):
- a100-korthikanti: the 8 Korthikanti et al. 2022 step times (4 models, full recompute
  and sequence parallel + selective recompute), topologies/selene-a100.yaml.
- h100-megatron: the 9 rows of Megatron-LM's H100 weak-scaling table (bf16, 48-6,144
  GPUs), topologies/dgx-h100.yaml.
- h100-fp8, b200-fp8, gb200-fp8, gb200-bf16: the NeMo / Megatron-Bridge rows of
  public_runs.md for that GPU and precision (dgx-h100, dgx-b200, gb200-nvl72).
  (Data sets without a grid, e.g. h100-automodel, are predicted, not fitted.)
Two parameters are fitted on each, once, for all its runs together: the GEMM efficiency
(`cluster.efficiency.matmul`, or `matmul_fp8` on an FP8 data set) and
`cluster.efficiency.kernel_overhead_us` (an FP8 or second data set of a GPU may hold the
overhead at one value, the GPU's other fit). Everything else
in the topology is set from datasheets or other measurements (see its header), including
the kernel model's GPU data and the compute-communication interference (README "Kernel
model").

Objective: the mean absolute step-time error over the runs, in percent, rounded to
0.01 % (differences below that are noise of the grid, not of the model). Ties are broken
by the smaller max absolute error, then by the smaller kernel overhead, then by the
smaller matmul efficiency (the simpler, more conservative explanation first).

Every grid point is simulated once (one run per row); the leave-one-out folds reuse those runs:
for each run, the grid point that minimises the objective over the others is chosen
and the held-out run is predicted with it. Its error is an estimate of the error on a
run of the same kind that was not fitted.

The fit runs every point with the values under test set by --set on top of the
topology, so it does not depend on what the topology holds; --write then replaces the
`matmul:` and `kernel_overhead_us:` values of its efficiency block by the fit (one
command: scripts/calibrate.py --write; then scripts/validate.sh regenerates the tables).

Usage: scripts/calibrate.py [--dataset a100-korthikanti|h100-megatron|h100-fp8|...]
                            [--meshsim build/meshsim] [--jobs 2] [--top 15]
                            [--matmul 0.77,0.78,...] [--overhead-us 0,5,...]
                                (default: the grid of the kernel model in use)
                            [--set KEY=VALUE ...]  (on top of every run, e.g.
                                                    cluster.efficiency.kernel_model=roofline)
                            [--json FILE]   (every point's step times, the fit and the
                                             leave-one-out folds, for scripts/validate.py)
                            [--write]       (the fit into the data set's topology)
"""
import argparse
import concurrent.futures
import itertools
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from validate import run  # noqa: E402
from validation_data import DATASETS  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

DATASET = DATASETS["a100-korthikanti"]  # main() replaces it by --dataset's


def runs():
    """The data set's runs, all fitted: (experiment stem, published step seconds), in table
    order."""
    return [(r.experiment, r.published_s) for r in DATASET.rows]


def topology_path():
    return os.path.join(ROOT, DATASET.topology)


def error_percent(predicted, published):
    return 100.0 * (predicted - published) / published


def score(errors):
    """Sort key of a grid point over some runs' errors: the objective, then tie-breaks."""
    mean = sum(abs(e) for e in errors) / len(errors)
    return (round(mean, 2), round(max(abs(e) for e in errors), 2))


def simulate_grid(meshsim, matmuls, overheads, sets, jobs):
    """{(matmul, overhead): [step seconds of each run]}; every (point, run) simulated once.
    The matmul axis sets the data set's matmul_key (matmul, or matmul_fp8)."""
    points = list(itertools.product(matmuls, overheads))
    tasks = [(p, name) for p in points for name, _ in runs()]

    def one(task):
        (eff, over), name = task
        point_sets = list(sets) + [f"cluster.efficiency.{DATASET.matmul_key}={eff}",
                                   f"cluster.efficiency.kernel_overhead_us={over}"]
        return run(meshsim, name, point_sets)["step_time_s"]

    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        seconds = list(pool.map(one, tasks))
    grid = {}
    for (point, _), s in zip(tasks, seconds):
        grid.setdefault(point, []).append(s)
    return grid


def best_point(grid, published, use):
    """The grid point with the best score over the runs whose index is in `use`."""
    def key(point):
        eff, over = point
        errors = [error_percent(grid[point][i], published[i]) for i in use]
        return score(errors) + (float(over), float(eff))
    return min(grid, key=key)


def fit(grid):
    """In-sample fit on all runs, and one leave-one-out fold per run."""
    names = [n for n, _ in runs()]
    published = [p for _, p in runs()]
    everything = range(len(names))
    chosen = best_point(grid, published, everything)
    folds = []
    for held in everything:
        point = best_point(grid, published, [i for i in everything if i != held])
        folds.append({
            "run": names[held],
            "published_s": published[held],
            "matmul": point[0],
            "kernel_overhead_us": point[1],
            "predicted_s": grid[point][held],
            "error_percent": error_percent(grid[point][held], published[held]),
            "in_sample_error_percent": error_percent(grid[chosen][held], published[held]),
        })
    return chosen, folds


def kernel_model(sets, path=None):
    """The kernel model the runs use: a --set of it, else the topology's, else shapes."""
    for s in reversed(sets):
        if s.startswith("cluster.efficiency.kernel_model="):
            return s.split("=", 1)[1]
    with open(path or topology_path()) as f:
        text = f.read()
    m = re.search(r"^\s+kernel_model:\s*(\w+)", text[text.index("\nefficiency:"):], re.M)
    return m.group(1) if m else "shapes"


def committed_overhead():
    """kernel_overhead_us as the topology's efficiency block holds it, as written there."""
    with open(topology_path()) as f:
        text = f.read()
    return re.search(r"^\s+kernel_overhead_us:\s*([0-9.]+)", text[text.index("\nefficiency:"):],
                     re.M).group(1)


def write_fit(point, path=None, matmul_key="matmul"):
    """Replaces the matmul efficiency (matmul_key) and kernel_overhead_us in the efficiency
    block of the topology; a matmul_fp8 the block lacks is added after its matmul line."""
    path = path or topology_path()
    with open(path) as f:
        text = f.read()
    start = text.index("\nefficiency:")
    block = text[start:]
    if not re.search(rf"^\s+{matmul_key}:", block, re.M):
        block = re.sub(r"^(\s+)matmul:(.*)$", rf"\g<0>\n\g<1>{matmul_key}: 0", block, count=1,
                       flags=re.M)
    for key, value in ((matmul_key, point[0]), ("kernel_overhead_us", point[1])):
        block, n = re.subn(rf"^(\s+{key}:\s*)[0-9.]+", rf"\g<1>{value}", block, count=1,
                           flags=re.M)
        if n != 1:
            sys.exit(f"calibrate.py: no '{key}:' in the efficiency block of {path}")
    with open(path, "w") as f:
        f.write(text[:start] + block)


def main():
    global DATASET
    ap = argparse.ArgumentParser()
    ap.add_argument("--dataset", default="a100-korthikanti",
                    choices=sorted(k for k, d in DATASETS.items() if d.grids),
                    help="the runs to fit on and the topology they fit (default a100-korthikanti)")
    ap.add_argument("--meshsim", default=os.path.join(ROOT, "build/meshsim"))
    ap.add_argument("--top", type=int, default=15)
    ap.add_argument("--matmul", help="comma-separated grid (default: the kernel model's)")
    ap.add_argument("--overhead-us", help="comma-separated grid (default: the kernel model's)")
    ap.add_argument("--jobs", type=int, default=2, help="meshsim runs at a time")
    ap.add_argument("--set", action="append", default=[])
    ap.add_argument("--json", help="write the grid, the fit and the folds to this file")
    ap.add_argument("--write", action="store_true",
                    help="write the fit into the data set's topology")
    args = ap.parse_args()
    DATASET = DATASETS[args.dataset]
    model = kernel_model(args.set)
    if model not in DATASET.grids and not (args.matmul and args.overhead_us):
        sys.exit(f"calibrate.py: no default grid for the {model} kernel model on {DATASET.key}; "
                 "give --matmul and --overhead-us")
    default = DATASET.grids.get(model, {})
    matmuls = (args.matmul or default["matmul"]).split(",")
    overheads = (args.overhead_us or default["kernel_overhead_us"]).split(",")
    # "committed": the topology's kernel overhead as written now (another data set's fit).
    overheads = [committed_overhead() if o == "committed" else o for o in overheads]
    grid = simulate_grid(args.meshsim, matmuls, overheads, args.set, args.jobs)
    published = [p for _, p in runs()]
    chosen, folds = fit(grid)

    rows = sorted(grid, key=lambda p: score(
        [error_percent(s, q) for s, q in zip(grid[p], published)]) + (float(p[1]), float(p[0])))
    n = len(published)
    print(f"{DATASET.title}: {n} runs")
    print("mean%  max%   matmul overhead_us  errors (" + ", ".join(r for r, _ in runs()) + ")")
    for point in rows[: args.top]:
        errors = [error_percent(s, q) for s, q in zip(grid[point], published)]
        mean, mx = score(errors)
        print(f"{mean:5.2f} {mx:5.2f}   {point[0]:>6} {point[1]:>11}  " +
              " ".join(f"{e:+.1f}" for e in errors))
    print(f"\nfit on all {n} runs: {DATASET.matmul_key} {chosen[0]}, "
          f"kernel_overhead_us {chosen[1]}")
    print(f"leave-one-out (refit on the other {n - 1}, predict the held-out run):")
    for f in folds:
        print(f"  {f['run']:<28} matmul {f['matmul']:<5} overhead {f['kernel_overhead_us']:>3} us"
              f"  held-out error {f['error_percent']:+.2f}%  (in-sample {f['in_sample_error_percent']:+.2f}%)")
    held = [abs(f["error_percent"]) for f in folds]
    print(f"held-out mean absolute error {sum(held) / len(held):.2f}%, max {max(held):.2f}%")
    if args.write:
        write_fit(chosen, matmul_key=DATASET.matmul_key)
        print(f"wrote {DATASET.matmul_key} {chosen[0]}, kernel_overhead_us {chosen[1]} to "
              f"{DATASET.topology}")
    if args.json:
        with open(args.json, "w") as out:
            json.dump({
                "objective": "mean absolute step-time error (%), rounded to 0.01; ties: "
                             "smaller max error, then smaller overhead, then smaller matmul",
                "dataset": DATASET.key,
                "title": DATASET.title,
                "topology": DATASET.topology,
                "kernel_model": model,
                "matmul_key": DATASET.matmul_key,
                "grid": {"matmul": matmuls, "kernel_overhead_us": overheads},
                "sets": args.set,
                "runs": [{"run": n, "published_s": p} for n, p in runs()],
                "points": [{"matmul": p[0], "kernel_overhead_us": p[1], "step_time_s": grid[p]}
                           for p in sorted(grid, key=lambda p: (float(p[0]), float(p[1])))],
                "fit": {"matmul": chosen[0], "kernel_overhead_us": chosen[1]},
                "leave_one_out": folds,
            }, out, indent=1)
            out.write("\n")


if __name__ == "__main__":
    main()

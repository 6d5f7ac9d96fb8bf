#!/usr/bin/env python3
"""Wall time and peak memory of `meshsim run` against GPU count, per mode (issue 14).

GPT-1T (workloads/experiments/gpt-1t-3072.yaml: tp 4, pp 64, 64 micro-batches of 4 per
pipeline) with dp = GPUs / 256, from 3,072 to 98,304 GPUs, in four modes: default (flow
network, symmetric replay), ab (alpha-beta, symmetric), full-ab and full-flow
(--full-replay). One process per point, timed with /usr/bin/time (elapsed seconds,
maximum resident set); the load average is recorded beside each point, since the shared
machine's load changes the times (not the memory). A full replay that the resource guard
refuses (exit 2 under --max-memory, default 8 GiB) or that runs past --limit seconds is
recorded with its status and left out of the plot.

Writes results/scale.csv and results/scale.png (matplotlib, Debian python3-matplotlib;
drawn off-screen). Usage: scripts/scale_plot.py [--meshsim build-bench/meshsim]
[--gpus 3072,6144,...] [--modes default,ab,full-ab,full-flow] [--replot]
(--replot: redraw the PNG from the CSV without running anything).
"""
import argparse
import csv
import os
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODES = {
    "default": [],
    "ab": ["--set", "cluster.network_model=alpha_beta"],
    "full-ab": ["--set", "cluster.network_model=alpha_beta", "--full-replay"],
    "full-flow": ["--full-replay"],
}
FIELDS = ["gpus", "mode", "status", "wall_s", "peak_mib", "load"]


def measure(meshsim, gpus, mode, max_memory, limit):
    dp = gpus // 256
    with tempfile.TemporaryDirectory() as work:
        timing = os.path.join(work, "time")
        cmd = ["/usr/bin/time", "-f", "%e %M", "-o", timing, "timeout", str(limit), meshsim,
               "run", os.path.join(ROOT, "workloads/experiments/gpt-1t-3072.yaml"), "--no-trace",
               "--summary", os.path.join(work, "summary.json"), "-q",
               "--max-memory", str(max_memory),
               "--set", f"plan.dp={dp}", "--set", f"cluster.nodes={gpus // 8}",
               "--set", f"plan.global_batch={dp * 256}"] + MODES[mode]
        load = os.getloadavg()[0]
        code = subprocess.run(cmd, capture_output=True).returncode
        with open(timing) as f:
            wall, kib = f.read().split()[-2:]
    # Exit 3: GPT-1T without ZeRO does not fit in 80 GB; the run is complete.
    status = {0: "ok", 3: "ok", 2: "refused", 124: "stopped"}.get(code, f"exit {code}")
    return {"gpus": gpus, "mode": mode, "status": status, "wall_s": float(wall),
            "peak_mib": int(kib) // 1024, "load": round(load, 1)}


def plot(rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 5))
    for i, mode in enumerate(MODES):
        points = sorted((r["gpus"], r["wall_s"], r["peak_mib"]) for r in rows
                        if r["mode"] == mode and r["status"] == "ok")
        if not points:
            continue
        xs = [p[0] for p in points]
        left.plot(xs, [p[1] for p in points], "o-", color=f"C{i}", label=mode)
        right.plot(xs, [p[2] for p in points], "o-", color=f"C{i}", label=mode)
    goals = [(16384, 1.0, 512), (98304, 3.0, 1536)]  # default mode, issue 14
    left.plot([g[0] for g in goals], [g[1] for g in goals], "k*", markersize=12,
              label="goal, default mode")
    right.plot([g[0] for g in goals], [g[2] for g in goals], "k*", markersize=12,
               label="goal, default mode")
    for ax, label in ((left, "wall time (s)"), (right, "peak resident memory (MiB)")):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.grid(True, which="both", alpha=0.3)
        ax.set_xlabel("GPUs (GPT-1T, tp 4 x pp 64, dp = GPUs / 256)")
        ax.set_ylabel(label)
        ax.legend(fontsize=8)
    loads = [r["load"] for r in rows if r["status"] == "ok"]
    fig.suptitle("meshsim run, one process per point"
                 + (f" (load average {min(loads)} to {max(loads)} on a shared 2-core machine)"
                    if loads else ""))
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--meshsim", default=os.path.join(ROOT, "build-bench", "meshsim"))
    parser.add_argument("--gpus", default="3072,6144,12288,16384,24576,49152,98304")
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--max-memory", type=float, default=8.0)
    parser.add_argument("--limit", type=int, default=600)
    parser.add_argument("--csv", default=os.path.join(ROOT, "results", "scale.csv"))
    parser.add_argument("--png", default=os.path.join(ROOT, "results", "scale.png"))
    parser.add_argument("--replot", action="store_true")
    args = parser.parse_args()
    if args.replot:
        with open(args.csv) as f:
            rows = [dict(r, gpus=int(r["gpus"]), wall_s=float(r["wall_s"]),
                         peak_mib=int(r["peak_mib"]), load=float(r["load"]))
                    for r in csv.DictReader(f)]
    else:
        rows = []
        for gpus in (int(g) for g in args.gpus.split(",")):
            for mode in args.modes.split(","):
                rows.append(measure(args.meshsim, gpus, mode, args.max_memory, args.limit))
                print(rows[-1], flush=True)
        with open(args.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=FIELDS)
            w.writeheader()
            w.writerows(rows)
    plot(rows, args.png)


if __name__ == "__main__":
    main()

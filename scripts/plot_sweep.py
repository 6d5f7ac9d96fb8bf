#!/usr/bin/env python3
"""Plots a meshsim sweep's results.csv: a heatmap of step time over TP x PP and a Pareto
plot of step time against peak memory per GPU.

Usage: /usr/bin/python3 scripts/plot_sweep.py RESULTS.csv [-o OUTDIR] [--name NAME]

Writes OUTDIR/NAME_heatmap.png and OUTDIR/NAME_pareto.png (OUTDIR defaults to the folder
of RESULTS.csv, NAME to that folder's name: results/sweeps/<sweep name>/ for a sweep). Needs matplotlib
(Debian python3-matplotlib); draws off-screen (Agg).

Heatmap: each cell is the fastest configuration that fits for that (tp, pp) over all
other axes (dp, ZeRO, micro-batch, ...), annotated with its step time and MFU; cells
where every configuration is oom or invalid say so. Pareto: every configuration that
fits (step time vs simulated peak memory), the Pareto front joined, the budget dashed.
"""
import argparse
import csv
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def number(row, key):
    try:
        v = float(row.get(key, ""))
        return v if math.isfinite(v) else None
    except ValueError:
        return None


def load(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        sys.exit(f"plot_sweep.py: {path}: no rows")
    return rows


def heatmap(rows, title, out):
    tps = sorted({int(r["plan.tp"]) for r in rows})
    pps = sorted({int(r["plan.pp"]) for r in rows})
    best = {}
    status = {}
    for r in rows:
        key = (int(r["plan.tp"]), int(r["plan.pp"]))
        status.setdefault(key, set()).add(r["status"])
        t = number(r, "step_time_s")
        if r["status"] == "ok" and t is not None and (key not in best or t < best[key][0]):
            best[key] = (t, number(r, "mfu") or 0.0, r)
    grid = [[best[(tp, pp)][0] if (tp, pp) in best else float("nan") for tp in tps] for pp in pps]
    fig, ax = plt.subplots(figsize=(max(6.0, 1.6 + 1.25 * len(tps)), 1.4 + 0.75 * len(pps)))
    values = [v for row in grid for v in row if not math.isnan(v)]
    cmap = plt.get_cmap("viridis_r").copy()
    cmap.set_bad("#e6e6e6")
    if values:
        im = ax.imshow(grid, cmap=cmap, aspect="auto", origin="lower",
                       vmin=min(values), vmax=max(values) * 1.0001)
        fig.colorbar(im, ax=ax, label="fastest step time (s)")
    else:
        ax.imshow([[0] * len(tps)] * len(pps), cmap="Greys", vmin=0, vmax=4, aspect="auto",
                  origin="lower")
    fastest = min(values) if values else None
    for i, pp in enumerate(pps):
        for j, tp in enumerate(tps):
            key = (tp, pp)
            if key in best:
                t, mfu, r = best[key]
                text = f"{t:.2f} s\n{100 * mfu:.0f}% MFU"
                weight = "bold" if t == fastest else "normal"
                color = "white" if t > (min(values) + max(values)) / 2 else "black"
            else:
                s = status.get(key, set())
                text = "oom" if "oom" in s else ("invalid" if s else "")
                weight, color = "normal", "#777777"
            ax.text(j, i, text, ha="center", va="center", fontsize=8, color=color, weight=weight)
    ax.set_xticks(range(len(tps)), [str(t) for t in tps])
    ax.set_yticks(range(len(pps)), [str(p) for p in pps])
    ax.set_xlabel("tensor parallel (tp)")
    ax.set_ylabel("pipeline parallel (pp)")
    ax.set_title(f"{title}: fastest plan per tp x pp")
    fig.tight_layout()
    fig.savefig(out, dpi=130)
    plt.close(fig)


def pareto(rows, title, out):
    ok = [(number(r, "peak_memory_gib"), number(r, "step_time_s"), r) for r in rows
          if r["status"] == "ok" and number(r, "step_time_s") is not None]
    oom = [(number(r, "peak_memory_gib"), number(r, "step_time_s")) for r in rows
           if r["status"] == "oom" and number(r, "step_time_s") is not None]
    budget = max((number(r, "budget_gib") or 0 for r in rows), default=0)
    fig, ax = plt.subplots(figsize=(7.5, 5))
    if ok:
        ax.scatter([m for m, _, _ in ok], [t for _, t, _ in ok], s=14, alpha=0.5,
                   color="#4e79a7", label=f"fits ({len(ok)})")
    if oom:
        ax.scatter([m for m, _ in oom], [t for _, t in oom], s=14, alpha=0.5, marker="x",
                   color="#e15759", label=f"simulated, over budget ({len(oom)})")
    front, best_mem = [], math.inf
    for m, t, r in sorted(ok, key=lambda x: (x[1], x[0])):
        if m < best_mem:
            front.append((m, t, r))
            best_mem = m
    if front:
        ax.plot([m for m, _, _ in front], [t for _, t, _ in front], "-o", color="#f28e2b",
                markersize=5, label=f"Pareto front ({len(front)})")
        for k, (m, t, r) in enumerate(front):
            # Alternate sides so that neighbours on the front do not overlap.
            ax.annotate(f"tp{r['plan.tp']} pp{r['plan.pp']} dp{r['plan.dp']} z{r['plan.zero']} "
                        f"mb{r['plan.micro_batch']}", (m, t), textcoords="offset points",
                        xytext=(6, -10) if k % 2 else (6, 4), fontsize=7, color="#444444")
    if budget:
        ax.axvline(budget, color="#1d2330", linestyle="--", linewidth=1)
        ax.text(budget, ax.get_ylim()[1], f" budget {budget:g} GiB", va="top", fontsize=8)
    ax.set_xlabel("peak memory per GPU (GiB)")
    ax.set_ylabel("step time (s)")
    ax.set_title(f"{title}: step time vs memory")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper center", fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=130)
    plt.close(fig)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0].replace("\n", " "))
    p.add_argument("results", help="a sweep's results.csv")
    p.add_argument("-o", "--outdir", help="folder for the PNGs (default: that of RESULTS)")
    p.add_argument("--name", help="file name stem and title (default: the folder of RESULTS, "
                   "which sweep names after the sweep)")
    a = p.parse_args()
    rows = load(a.results)
    folder = os.path.dirname(os.path.abspath(a.results))
    outdir = a.outdir or folder
    os.makedirs(outdir, exist_ok=True)
    stem = a.name or os.path.basename(folder)
    title = stem
    h = os.path.join(outdir, f"{stem}_heatmap.png")
    q = os.path.join(outdir, f"{stem}_pareto.png")
    heatmap(rows, title, h)
    pareto(rows, title, q)
    print(f"wrote {h}\nwrote {q}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Sweep Llama-2 70B on 64 H100s over parallelism plans and plot step time against peak
memory per GPU, with the Pareto front.

    PYTHONPATH=build/python /usr/bin/python3 examples/pareto_sweep.py [-j THREADS] [-o PNG]

The sweep is the bundled workloads/sweeps/llama2-70b-64-h100.yaml (every tp x pp split,
ZeRO 0/1/3, micro-batch 1/2/4), given here as an experiment plus axes to show that form;
`meshsim.sweep("workloads/sweeps/llama2-70b-64-h100.yaml")` gives the same rows.
"""
import argparse
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import meshsim  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXPERIMENT = os.path.join(ROOT, "workloads/experiments/llama2-70b-h100.yaml")
AXES = {"plan.tp": [1, 2, 4, 8], "plan.pp": "auto", "plan.zero": [0, 1, 3],
        "plan.micro_batch": [1, 2, 4]}


def plot(df, front, budget, title, path):
    fig, ax = plt.subplots(figsize=(9, 5.6), dpi=120)
    oom = df[(df["status"] == "oom") & df["step_time_s"].notna()]
    ok = df[df["status"] == "ok"]
    if len(oom):
        ax.scatter(oom["peak_memory_gib"], oom["step_time_s"], s=14, marker="x", color="#c44",
                   alpha=0.6, label=f"simulated, over budget ({len(oom)})")
    colours = {0: "#4878a8", 1: "#e08a2c", 3: "#5a9e5a"}
    for zero, group in ok.groupby("plan.zero"):
        ax.scatter(group["peak_memory_gib"], group["step_time_s"], s=18, alpha=0.75,
                   color=colours.get(zero, "#888"), label=f"fits, ZeRO-{zero} ({len(group)})")
    f = front.sort_values("peak_memory_gib")
    ax.step(f["peak_memory_gib"], f["step_time_s"], where="post", color="black", lw=1.2,
            label=f"Pareto front ({len(f)})")
    ax.scatter(f["peak_memory_gib"], f["step_time_s"], s=40, facecolors="none",
               edgecolors="black", lw=1.2)
    # Number the front's plans, fastest first, and list them in a box.
    listing = []
    for i, (_, r) in enumerate(front.iterrows(), start=1):
        ax.annotate(str(i), (r["peak_memory_gib"], r["step_time_s"]), textcoords="offset points",
                    xytext=(-4, 6), ha="right", fontsize=8, fontweight="bold")
        listing.append(f"{i}  tp {r['plan.tp']} pp {r['plan.pp']} dp {r['plan.dp']} "
                       f"ZeRO-{r['plan.zero']} mb {r['plan.micro_batch']}: "
                       f"{r['step_time_s']:.2f} s, {r['peak_memory_gib']:.1f} GiB")
    ax.text(0.985, 0.975, "Pareto front, fastest first\n" + "\n".join(listing),
            transform=ax.transAxes, ha="right", va="top", multialignment="left", fontsize=7,
            family="monospace",
            bbox=dict(boxstyle="round", facecolor="white", edgecolor="#bbb", alpha=0.9))
    ax.axvline(budget, color="#c44", ls="--", lw=1)
    ax.text(budget, ax.get_ylim()[0], f"budget {budget:g} GiB ", color="#c44", ha="right",
            va="bottom", fontsize=8)
    ax.set_xlabel("peak memory per GPU (GiB, simulated)")
    ax.set_ylabel("step time (s)")
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.4, 0.98))
    fig.tight_layout()
    fig.savefig(path)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("-j", "--threads", type=int, default=None)
    p.add_argument("-o", "--output", default=os.path.join(ROOT, "results/python_pareto.png"))
    args = p.parse_args()

    experiment = meshsim.load_experiment(EXPERIMENT)
    df = meshsim.sweep(experiment, axes=AXES, name="llama2-70b-64-h100", threads=args.threads)
    front = meshsim.pareto(df)
    counts = df["status"].value_counts().to_dict()
    print(f"{len(df)} configurations: {counts}")
    print("Pareto front (fastest first):")
    cols = ["plan.tp", "plan.pp", "plan.dp", "plan.zero", "plan.micro_batch", "step_time_s",
            "mfu", "peak_memory_gib"]
    print(front[cols].to_string(index=False))
    budget = float(df["budget_gib"].iloc[0])
    pruned = int(((df["status"] == "oom") & df["step_time_s"].isna()).sum())
    title = (f"{experiment.model_name} on {experiment.gpus} x {experiment.gpu_kind}: {len(df)} plans "
             f"(meshsim.sweep), {counts.get('ok', 0)} fit\n{pruned} pruned by the memory bound, "
             f"{counts.get('invalid', 0)} invalid (not shown)")
    plot(df, front, budget, title, args.output)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()

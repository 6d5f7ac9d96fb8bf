#!/usr/bin/env python3
"""Runs the data sets of shared/validation that meshsim can express and writes
results/validation.md: one section per data set (GPU kind and precision), each with its
per-row errors, mean and max, and the leave-one-out error beside the fit.

Data sets (scripts/validation_data.py):
- A100, fp16: the 8 Korthikanti et al. 2022 step times, plus the 12 memory values of the
  paper's Figure 1 (model states per GPU; activations of the first stage with no
  recompute and with sequence parallel + selective recompute).
- H100, bf16: the 9 rows of Megatron-LM's H100 weak-scaling table.
- H100 fp8 (NeMo 24.07, Megatron-Bridge), B200 and GB200 (Megatron-Bridge, fp8/mxfp8 and
  bf16), and a held-out H100 bf16 set (NeMo-Automodel's FSDP2 runs, Megatron-Bridge GPT-OSS).

The step times of a fitted data set are in-sample: it fitted its GPU's GEMM efficiency and
kernel overhead (scripts/calibrate.py --dataset KEY --json, the data set's JSON in results/).
When that JSON is there, the table also gives each run's leave-one-out error: refit on
the other runs, predict this one. The memory values are predictions: nothing was fitted
to them.

Usage: scripts/validate.py [--meshsim build/meshsim] [--out results/validation.md]
                           [--calibration results/calibration.json]  (A100's, default)
                           [--compare results/calibration-roofline.json]
                           [--check]   (exit 1 unless the A100 accuracy goals hold)
       scripts/validate.py --experiment public-h100-megatron-177b   (one public row:
                           meshsim's step time against the published one, and the error)
"""
import argparse
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from validation_data import DATASETS, KORTHIKANTI, NOT_YET  # noqa: E402
from validation_ranking import RANKING_TITLE, ranking_lines  # noqa: E402
from validation_memory import MEMORY_TITLE, memory_headline, memory_lines  # noqa: E402
from validation_software import software_lines  # noqa: E402

# (experiment stem, model states GiB, activations no recompute GiB, activations seq+sel GiB)
FIGURE1 = [
    ("korthikanti-22b", 45.56, 59.25, 9.56),
    ("gpt3-175b", 45.56, 66.84, 12.35),
    ("korthikanti-530b", 31.64, 114.02, 23.08),
    ("korthikanti-1t", 32.96, 131.25, 26.56),
]
STEP_MEAN_GOAL, STEP_MAX_GOAL, MEMORY_GOAL = 3.0, 6.0, 5.0
# Issue 13's goal for a data set of another GPU kind with at least 5 usable rows.
OTHER_MEAN_GOAL, OTHER_MAX_GOAL, OTHER_MIN_ROWS = 5.0, 10.0, 5


def run(meshsim, experiment, sets=()):
    """meshsim's summary of a bundled experiment (its stem, or a path to a YAML file)."""
    path = experiment if experiment.endswith(".yaml") else os.path.join(
        ROOT, "workloads/experiments", experiment + ".yaml")
    cmd = [meshsim, "run", path,
           "--no-trace", "--summary", "-", "-q", "--reproducible"]
    for s in sets:
        cmd += ["--set", s]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode not in (0, 3):
        sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr}")
    return json.loads(proc.stdout)


def states_gib(device):
    m = device["memory_breakdown_gib"]
    return m["weights"] + m["gradients"] + m["optimizer"]


def middle_stage_device(summary):
    """A device that holds only transformer layers (no embedding or output layer)."""
    pp = max(d["coords"]["pp"] for d in summary["devices"]) + 1
    stage = 1 if pp > 2 else 0
    return next(d for d in summary["devices"] if d["coords"]["pp"] == stage)


def first_stage_activations(summary):
    return max(d["memory_breakdown_gib"]["activations"] for d in summary["devices"]
               if d["coords"]["pp"] == 0)


def err(predicted, published):
    return 100.0 * (predicted - published) / published


def committed_efficiencies(topology=KORTHIKANTI.topology, matmul_key="matmul"):
    """(matmul_key's value, kernel_overhead_us) as written in the topology's efficiency
    block; a matmul_fp8 the block lacks is its matmul (meshsim's default)."""
    with open(os.path.join(ROOT, topology)) as f:
        text = f.read()
    block = text[text.index("\nefficiency:"):]
    def value(key):
        m = re.search(rf"^\s+{key}:\s*([0-9.]+)", block, re.M)
        return float(m.group(1)) if m else value("matmul")
    return value(matmul_key), value("kernel_overhead_us")


def committed_kernel_model(topology=KORTHIKANTI.topology):
    with open(os.path.join(ROOT, topology)) as f:
        text = f.read()
    m = re.search(r"^\s+kernel_model:\s*(\w+)", text[text.index("\nefficiency:"):], re.M)
    return m.group(1) if m else "shapes"


def calibration_summary(cal):
    """(fit point, in-sample mean, max, held-out mean, max) of a calibrate.py JSON."""
    published = [r["published_s"] for r in cal["runs"]]
    fit = cal["fit"]
    best = next(p for p in cal["points"] if p["matmul"] == fit["matmul"]
                and p["kernel_overhead_us"] == fit["kernel_overhead_us"])
    errors = [abs(err(s, q)) for s, q in zip(best["step_time_s"], published)]
    held = [abs(f["error_percent"]) for f in cal["leave_one_out"]]
    return (fit, sum(errors) / len(errors), max(errors), sum(held) / len(held), max(held))


def comparison_lines(cals):
    """The kernel models' fits side by side (calibrate.py JSONs, the committed one first)."""
    lines = ["## Kernel models compared", "",
             "Each kernel model fitted by scripts/calibrate.py on the same 8 runs (its own "
             "default grid, the same objective, the same compute-communication interference):",
             "", "| kernel model | fit: matmul, overhead us | in-sample mean / max "
             "| leave-one-out mean / max |", "|---|---|---|---|"]
    for i, cal in enumerate(cals):
        fit, mean, mx, held_mean, held_max = calibration_summary(cal)
        name = cal.get("kernel_model", "?") + (" (committed)" if i == 0 else "")
        lines.append(f"| {name} | {fit['matmul']}, {fit['kernel_overhead_us']} | {mean:.2f}% / "
                     f"{mx:.2f}% | {held_mean:.2f}% / {held_max:.2f}% |")
    return lines + [""]


def calibration_lines(cal, step_rows, ds=KORTHIKANTI, level="##"):
    """The fit and leave-one-out section, from scripts/calibrate.py's JSON."""
    n = len(cal["runs"])
    published = [r["published_s"] for r in cal["runs"]]
    def errors_at(point):
        return [err(s, p) for s, p in zip(point["step_time_s"], published)]
    def mean_max(errors):
        return sum(abs(e) for e in errors) / len(errors), max(abs(e) for e in errors)
    matmul, overhead = committed_efficiencies(ds.topology, ds.matmul_key)
    committed = next((p for p in cal["points"] if float(p["matmul"]) == matmul
                      and float(p["kernel_overhead_us"]) == overhead), None)
    if committed is not None:
        for (name, _, simulated, *_), grid_s in zip(step_rows, committed["step_time_s"]):
            if abs(simulated - grid_s) > 1e-9 * simulated:
                sys.exit(f"validate.py: the calibration file is stale ({name}: {grid_s} s in the "
                         f"grid, {simulated} s now); rerun scripts/calibrate.py "
                         f"--dataset {ds.key}")
    fit = cal["fit"]
    best = next(p for p in cal["points"] if p["matmul"] == fit["matmul"]
                and p["kernel_overhead_us"] == fit["kernel_overhead_us"])
    fit_mean, fit_max = mean_max(errors_at(best))
    held = [f["error_percent"] for f in cal["leave_one_out"]]
    held_mean, held_max = mean_max(held)
    grid = cal["grid"]
    lines = [f"{level} Fit and leave-one-out", "",
             f"scripts/calibrate.py searched {ds.matmul_key} {', '.join(grid['matmul'])} x "
             f"kernel overhead "
             f"{', '.join(grid['kernel_overhead_us'])} us; objective: {cal['objective']}.", "",
             f"- Grid optimum on all {n} runs: {ds.matmul_key} {fit['matmul']}, kernel overhead "
             f"{fit['kernel_overhead_us']} us: mean {fit_mean:.2f}%, max {fit_max:.2f}% (in-sample)."]
    same = (float(fit["matmul"]), float(fit["kernel_overhead_us"])) == (matmul, overhead)
    if same:
        lines.append(f"- {ds.topology} holds these values.")
    else:
        lines.append(f"- {ds.topology} holds {ds.matmul_key} {matmul:g}, kernel overhead "
                     f"{overhead:g} us, which is **not** this grid's optimum; the step-time table "
                     "above is for the committed values.")
    lines += [f"- Leave-one-out: for each run, the grid point best on the other {n - 1} predicts it. "
              f"Held-out error: mean **{held_mean:.2f}%**, max **{held_max:.2f}%**.", "",
              f"| held-out run | published s | fitted on the other {n - 1}: {ds.matmul_key}, "
              "overhead us | "
              f"predicted s | held-out error | error at the all-{n} optimum |",
              "|---|---|---|---|---|---|"]
    for f in cal["leave_one_out"]:
        lines.append(f"| {f['run']} | {f['published_s']:.3f} | {f['matmul']}, "
                     f"{f['kernel_overhead_us']} | {f['predicted_s']:.3f} | "
                     f"{f['error_percent']:+.2f}% | {f['in_sample_error_percent']:+.2f}% |")
    def rank(p):  # scripts/calibrate.py's objective and tie-breaks
        m, x = mean_max(errors_at(p))
        return (round(m, 2), round(x, 2), float(p["kernel_overhead_us"]), float(p["matmul"]))
    ranked = sorted(cal["points"], key=rank)
    lines += ["", "Grid, best 10 by mean absolute error (in-sample):", "",
              f"| {ds.matmul_key} | overhead us | mean | max |", "|---|---|---|---|"]
    for p in ranked[:10]:
        m, x = mean_max(errors_at(p))
        lines.append(f"| {p['matmul']} | {p['kernel_overhead_us']} | {m:.2f}% | {x:.2f}% |")
    if committed is not None and committed not in ranked[:10]:
        m, x = mean_max(errors_at(committed))
        lines.append(f"| {committed['matmul']} (committed) | {committed['kernel_overhead_us']} | "
                     f"{m:.2f}% | {x:.2f}% |")
    return lines + [""], held_mean, held_max


def load_json(path):
    if path and os.path.exists(path):
        with open(path) as f:
            return json.load(f)
    return None


def korthikanti_lines(args):
    """The A100 section: step times (fit and leave-one-out), kernel models, Figure 1 memory.
    Returns (lines, summary row, whether the accuracy goals hold, the simulated rows as
    validation_ranking.ranking_lines takes them)."""
    step_rows = []
    summaries = {}
    for r in KORTHIKANTI.rows:
        s = run(args.meshsim, r.experiment, args.set)
        summaries[r.experiment] = s
        step_rows.append((r.experiment, r.published_s, s["step_time_s"],
                          err(s["step_time_s"], r.published_s), s["mfu"], s["hfu"]))
    mem_rows = []
    for stem, states, act_none, act_sel in FIGURE1:
        none = run(args.meshsim, f"{stem}-full",
                   args.set + ["plan.recompute=none", "plan.sequence_parallel=false"])
        sel = summaries[f"{stem}-selective"]
        mem_rows.append((stem, "weights + grads + optimizer", states,
                         states_gib(middle_stage_device(sel))))
        mem_rows.append((stem, "activations, no recompute", act_none,
                         first_stage_activations(none)))
        mem_rows.append((stem, "activations, seq parallel + selective", act_sel,
                         first_stage_activations(sel)))

    step_errors = [abs(r[3]) for r in step_rows]
    mem_errors = [abs(err(p, pub)) for _, _, pub, p in mem_rows]
    mean_step, max_step = sum(step_errors) / len(step_errors), max(step_errors)
    max_mem = max(mem_errors)

    matmul, overhead = committed_efficiencies()
    cal = load_json(args.calibration)
    held = {f["run"]: f["error_percent"] for f in cal["leave_one_out"]} if cal else {}
    lines = [f"## {KORTHIKANTI.title}", "",
             f"Source: {KORTHIKANTI.source}. Experiments: workloads/experiments/korthikanti-*.yaml "
             "and gpt3-175b-*.yaml.", "",
             "### Step time: a fit, with its leave-one-out error", "",
             "These 8 runs are the calibration set: the A100's matmul efficiency and "
             "per-kernel overhead were fitted on them (with the "
             f"`{committed_kernel_model()}` kernel model), so the error column, meshsim with the "
             f"committed values (matmul {matmul:g}, overhead {overhead:g} us), is "
             "**in-sample** (a fit, not a prediction). The held-out column checks the fitting "
             "procedure by leave-one-out: scripts/calibrate.py refits both parameters on the "
             "other 7 runs (same grid, same objective) and predicts the run; it estimates the "
             "error on a run of this kind that was not fitted.", "",
             "| run | published s | meshsim s | error (fit) | held-out error (leave-one-out) "
             "| meshsim MFU | meshsim HFU |",
             "|---|---|---|---|---|---|---|"]
    for name, pub, pred, e, mfu, hfu in step_rows:
        h = f"{held[name]:+.2f}%" if name in held else "-"
        lines.append(f"| {name} | {pub:.2f} | {pred:.2f} | {e:+.2f}% | {h} | {100*mfu:.1f}% "
                     f"| {100*hfu:.1f}% |")
    lines += ["", f"Fit: mean absolute error **{mean_step:.2f}%**, max **{max_step:.2f}%** "
              f"(goal: mean <= {STEP_MEAN_GOAL}%, max <= {STEP_MAX_GOAL}%)."]
    held_mean = held_max = None
    if cal:
        cal_lines, held_mean, held_max = calibration_lines(cal, step_rows, level="###")
        lines += [f"Held out: mean absolute error **{held_mean:.2f}%**, max **{held_max:.2f}%**.",
                  ""] + cal_lines
    else:
        lines += ["", "(Run scripts/validate.sh for the leave-one-out column.)", ""]
    if cal and args.compare:
        others = [load_json(path) for path in args.compare]
        lines += ["#" + line if line.startswith("## ") else line
                  for line in comparison_lines([cal] + [o for o in others if o])]
    lines += ["### Memory per GPU (paper's Figure 1): nothing fitted", "",
              "Nothing was fitted to these 12 values. The figure's values follow the paper's "
              "own equations, and meshsim's memory accounting implements the same closed forms "
              "(Korthikanti et al.'s bytes per layer, Megatron-LM's 18 bytes per parameter), so "
              "this checks the accounting, not a measured profile.", "",
              "| model | quantity | published GiB | meshsim GiB | error |", "|---|---|---|---|---|"]
    for stem, what, pub, pred in mem_rows:
        lines.append(f"| {stem} | {what} | {pub:.2f} | {pred:.2f} | {err(pred, pub):+.2f}% |")
    lines += ["", f"Max absolute error **{max_mem:.2f}%** (goal: <= {MEMORY_GOAL}% each).", "",
              "Model states are read on a device that holds only transformer layers (pipeline "
              "stage 1, or the only stage for 22B, which also holds the embedding); "
              "activations on the first pipeline stage at its peak.", ""]
    ok = mean_step <= STEP_MEAN_GOAL and max_step <= STEP_MAX_GOAL and max_mem <= MEMORY_GOAL
    goal = (f"mean <= {STEP_MEAN_GOAL:g}%, max <= {STEP_MAX_GOAL:g}%, memory <= {MEMORY_GOAL:g}%: "
            + ("met" if ok else "**not met**"))
    summary = (KORTHIKANTI, len(step_rows), mean_step, max_step, held_mean, held_max, goal)
    simulated = [(KORTHIKANTI.gpu, r, summaries[r.experiment]) for r in KORTHIKANTI.rows]
    return lines, summary, ok, simulated


def breakdown(summary, key):
    return summary.get("time_breakdown_s", {}).get(key, 0.0)


def dataset_header(ds, matmul, overhead):
    """The lines before a data set's table: sources, and what was fitted on it."""
    fitted = bool(ds.grids)
    values = (f"{ds.matmul_key} {matmul:g}, kernel overhead {overhead:g} us, "
              f"`{committed_kernel_model(ds.topology)}` kernel model")
    how = (f"meshsim with {ds.topology}'s committed values ({values}), fitted on these rows: "
           "the error column is **in-sample**; the held-out column refits both parameters on "
           "the other rows and predicts the row (leave-one-out)." if fitted else
           f"meshsim with {ds.topology}'s committed values ({values}). **Neither was fitted "
           "on these rows**: every error is a prediction of them (the notes below name any "
           "other knob fitted here).")
    return [f"## {ds.title}", "",
            f"Source: {ds.source}. Published step time: {ds.derivation}. Experiments: "
            "workloads/experiments/<run>.yaml (each names its table row and what the source "
            "leaves unstated).", "", how, ""]


def dataset_lines(ds, args):
    """A section for a data set of another GPU kind: per-row errors, mean and max, the
    leave-one-out error beside the fit, and where meshsim's step goes."""
    cal = load_json(os.path.join(ROOT, ds.json)) if ds.grids else None
    held = {f["run"]: f["error_percent"] for f in cal["leave_one_out"]} if cal else {}
    matmul, overhead = committed_efficiencies(ds.topology, ds.matmul_key)
    rows = []
    for r in ds.rows:
        s = run(args.meshsim, r.experiment, args.set)
        rows.append((r, s, err(s["step_time_s"], r.published_s)))
    errors = [abs(e) for _, _, e in rows]
    mean, mx = sum(errors) / len(errors), max(errors)
    lines = dataset_header(ds, matmul, overhead) + [
        "| run | table row | published s | meshsim s | error"
        + (" (fit) | held-out error" if ds.grids else "") + " | meshsim MFU | exposed TP comm s "
        "| exposed DP comm s | exposed EP comm s | bubble s |",
        "|---|---|---|---|---|" + ("---|" if ds.grids else "") + "---|---|---|---|---|"]
    for r, s, e in rows:
        h = ""
        if ds.grids:
            h = f" {held[r.experiment]:+.2f}% |" if r.experiment in held else " - |"
        lines.append(f"| {r.experiment} | {r.note} | {r.published_s:.3f} | {s['step_time_s']:.3f} "
                     f"| {e:+.2f}% |{h} {100 * s['mfu']:.1f}% | "
                     f"{breakdown(s, 'exposed_tp_comm'):.3f} | "
                     f"{breakdown(s, 'exposed_dp_comm'):.3f} | "
                     f"{breakdown(s, 'exposed_ep_comm'):.3f} | {breakdown(s, 'bubble'):.3f} |")
    lines += ["", f"{'Fit' if ds.grids else 'Predicted'}: mean absolute error **{mean:.2f}%**, "
              f"max **{mx:.2f}%**."]
    if ds.notes:
        lines += ["", ds.notes]
    held_mean = held_max = None
    if cal:
        step_rows = [(r.experiment, r.published_s, s["step_time_s"]) for r, s, _ in rows]
        cal_lines, held_mean, held_max = calibration_lines(cal, step_rows, ds, level="###")
        lines += [f"Held out: mean absolute error **{held_mean:.2f}%**, max "
                  f"**{held_max:.2f}%**.", ""] + cal_lines
    elif ds.grids:
        lines += ["", f"(No {ds.json}: run scripts/validate.sh for the leave-one-out column.)", ""]
    else:
        held_mean, held_max = mean, mx  # nothing fitted: every row is held out
        lines += [""]
    if len(rows) >= OTHER_MIN_ROWS:
        ok = mean <= OTHER_MEAN_GOAL and mx <= OTHER_MAX_GOAL
        goal = (f"mean <= {OTHER_MEAN_GOAL:g}%, max <= {OTHER_MAX_GOAL:g}%: "
                + ("met" if ok else "**not met**"))
    else:
        goal = f"fewer than {OTHER_MIN_ROWS} rows: no goal"
    if not ds.grids:
        goal += " (matmul not fitted)"
    count = f"{len(rows)}"
    return (lines, (ds, count, mean, mx, held_mean, held_max, goal),
            [(ds.gpu, r, s) for r, s, _ in rows])


def summary_lines(summaries, ranked=None, memory=None):
    lines = ["## Summary", "",
             "| data set | GPU | precision | rows | fit mean / max | held-out mean / max | goal |",
             "|---|---|---|---|---|---|---|"]
    for ds, n, mean, mx, hmean, hmax, goal in summaries:
        held = f"{hmean:.2f}% / {hmax:.2f}%" if hmean is not None else "-"
        lines.append(f"| [{ds.title}](#{anchor(ds.title)}) | {ds.gpu} | {ds.precision} | {n} | "
                     f"{mean:.2f}% / {mx:.2f}% | {held} | {goal} |")
    lines += ["", "Not yet validated (rows of shared/validation/public_runs.md that meshsim "
              "cannot write down today or has not put in a data set; section 8's uncertain "
              "rows are skipped):", ""]
    lines += [f"- {what}: needs {needs}." for what, needs in NOT_YET]
    if ranked:
        lines += ["", f"[Ranking](#{anchor(RANKING_TITLE)}) of one model's runs on one GPU kind by "
                  f"throughput per GPU: {ranked[0].lower()}{ranked[1:]}"]
    if memory:
        lines += ["", f"[Memory](#{anchor(MEMORY_TITLE)}): {memory}."]
    return lines + [""]


def tpu_pointer():
    """The TPU data sets' section (scripts/validation_maxtext.py fits and reports them)."""
    import validation_maxtext  # noqa: E402 (imports this module lazily: no cycle)
    return validation_maxtext.pointer_lines()


def anchor(title):
    """GitHub's heading anchor: lower case, punctuation dropped, spaces as hyphens."""
    kept = "".join(c for c in title.lower() if c.isalnum() or c in " -_")
    return kept.replace(" ", "-")


def reproduce(args):
    """--experiment: one public row, meshsim against the published step time."""
    stem = os.path.basename(args.experiment)
    stem = stem[:-5] if stem.endswith(".yaml") else stem
    for ds in DATASETS.values():
        for r in ds.rows:
            if r.experiment == stem:
                s = run(args.meshsim, r.experiment, args.set)
                e = err(s["step_time_s"], r.published_s)
                print(f"{stem}: {ds.title}, {r.note}\n"
                      f"  published step time {r.published_s:.3f} s ({ds.derivation})\n"
                      f"  meshsim   step time {s['step_time_s']:.3f} s (MFU {100 * s['mfu']:.1f}%)\n"
                      f"  error {e:+.2f}%  (source: {ds.source})")
                return
    sys.exit(f"validate.py: {stem} is not a row of a validation data set "
             f"(scripts/validation_data.py)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--meshsim", default=os.path.join(ROOT, "build/meshsim"))
    ap.add_argument("--out", default=os.path.join(ROOT, "results/validation.md"))
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--calibration", default=os.path.join(ROOT, KORTHIKANTI.json),
                    help="the A100 scripts/calibrate.py --json output: the leave-one-out errors")
    ap.add_argument("--compare", action="append", default=[],
                    help="calibrate.py --json output of another kernel model: compare the fits")
    ap.add_argument("--experiment", help="only this public row (a bundled experiment's stem "
                    "or file): meshsim's step time, the published one and the error")
    ap.add_argument("--set", action="append", default=[], help="extra --set for every run")
    args = ap.parse_args()
    if args.experiment:
        reproduce(args)
        return

    body, a100, ok, simulated = korthikanti_lines(args)
    summaries = [a100]
    for ds in DATASETS.values():
        if ds is KORTHIKANTI:
            continue
        lines, summary, rows = dataset_lines(ds, args)
        body += lines
        summaries.append(summary)
        simulated += rows
    ranking, ranked = ranking_lines(simulated)
    body += ranking + memory_lines(simulated) + software_lines(simulated)
    lines = ["# Validation against published runs", "",
             "Regenerated by `scripts/validate.sh` (scripts/calibrate.py per data set, then "
             "scripts/validate.py); do not edit by hand. One section per data set of "
             "shared/validation (GPU kind and precision). A fitted data set fitted its GPU's "
             "GEMM efficiency (`matmul`, or `matmul_fp8` for FP8 GEMMs) and kernel overhead "
             "(scripts/calibrate.py --dataset), so its errors are in-sample; the leave-one-out "
             "errors beside them estimate the error on an unseen run of the same kind. A data "
             "set marked \"not fitted\" is predicted with the values fitted on another: all "
             "its errors are held out.", ""] + summary_lines(
                 summaries, ranked, memory_headline(simulated)) + tpu_pointer() + body
    text = "\n".join(lines)
    if args.out != "-":
        with open(args.out, "w") as f:
            f.write(text)
    print(text)
    if args.check and not ok:
        sys.exit(1)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""MaxText's published tables (shared/validation/public_runs.md section 4) as validation data
sets, in the form of scripts/validation_data.py, and the experiments they run.

Each row is one published run: its experiment (workloads/experiments/maxtext/*.yaml, written by
`meshsim import maxtext` from the bundled MaxText configs of workloads/maxtext/ and the row's
hardware; `generate` below writes them) and the published step time. The tables give
TFLOP/s per chip, which MaxText computes (train.py's calculate_training_tflops at the
commit of each table) as

    per-device TFLOP per step = 6 * N * seq * pdbs + A * heads * layers * head_dim * seq^2 * pdbs

over 1e12, divided by the measured step time: N is every parameter of the model (MaxText's
calculate_num_params_from_pytree), pdbs the per-device batch, and A = 12 for the v5e table
(fixed 2023-11-01, before MaxText halved the attention FLOPs for causality on 2023-11-08) and
6 for the v5p (2023-12-15) and A3 (2024-04-12) tables. So the published step time is that
TFLOP count over the published TFLOP/s per chip: chips cancel.

Rows left out (public_runs.md section 8 marks them uncertain): the v4 table (its sequence
length, 1024 or 2048, is unknown), and the v5p rows whose numbers differ between MaxText's
config README and its main README (128B on 1x v5p-512, 256B on 1x v5p-1024) or are
inconsistent there (1024B on 1x v5p-2048). SKIPPED lists them.

Usage:
  scripts/validation_maxtext.py list                      the rows and published step times
  scripts/validation_maxtext.py generate [--meshsim BIN] [--key KEY ...]
                                                           write the rows' experiments
  scripts/validation_maxtext.py calibrate --key KEY [--write] [--jobs N] [--matmul ...]
                                          [--overhead-us ...] [--set K=V ...]
                                                           scripts/calibrate.py's fit on it
  scripts/validation_maxtext.py report [--out results/validation-maxtext.md]
                                      [--validation results/validation.md]
                                                           the validation tables, and the
                                                           TPU section of validation.md
"""
import argparse
import collections
import itertools
import json
import math
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAXTEXT = "workloads/maxtext"

# The same fields as scripts/validation_data.py's (defined here too, so that either module
# can import the other without a cycle).
Row = collections.namedtuple("Row", "experiment published_s note heavy", defaults=(False,))
Dataset = collections.namedtuple(
    "Dataset",
    "key title gpu precision topology source rows grids json derivation notes matmul_key",
    defaults=("", "matmul"))

# One published run: the bundled script's overrides, the hardware, the published number.
Run = collections.namedtuple(
    "Run", "stem args base topology slices chips_per_slice tflops note shape")

# TPU slice shapes (torus, x first) by chips, most cubic first: v5p-N has N/2 chips in
# whole 4x4x4 cubes, and the same chips can be wired in other shapes of whole cubes
# ("TPU v5p's flexible networking lets you connect the chips in a same-sized slice in
# multiple ways": cloud.google.com/tpu/docs/v5p, Configurations); v5e-256 is a 16x16 torus.
SHAPES = {64: ["4x4x4"], 128: ["4x4x8"], 256: ["4x8x8"], 512: ["8x8x8", "4x8x16", "4x4x32"],
          1024: ["8x8x16"], 2048: ["8x16x16"]}


def jax_places(dims, sizes):
    """Whether JAX's create_device_mesh of 2023-12 (jax/experimental/mesh_utils.py @94d58b72,
    _create_device_mesh_for_nd_torus, what MaxText @76bd53b0 called) maps the mesh axes of
    `sizes` (outermost first) onto a torus of `dims`: innermost axis first, each onto whole
    unused dimensions (three, then two, then one, in itertools.combinations order). It
    raised NotImplementedError when an axis fits no such set (splitting a dimension came with
    allow_split_physical_axes in 2024-03), so the run used a slice shape where this holds."""
    free = list(dims)
    for size in reversed(sizes):
        if size == 1:
            continue
        for k in (3, 2, 1):
            pick = next((c for c in itertools.combinations(range(len(free)), k)
                         if all(free[i] for i in c) and math.prod(free[i] for i in c) == size),
                        None)
            if pick:
                break
        if not pick:
            return False
        for i in pick:
            free[i] = 0
    return True


def slice_shape(chips, args):
    """The first of SHAPES[chips] on which JAX placed the run's ICI mesh (data, fsdp,
    sequence, tensor: base.yml @76bd53b0's mesh_axes; ici_fsdp_parallelism -1 the rest)."""
    ici = [int(next((a.split("=", 1)[1] for a in args if a.startswith(f"ici_{k}_parallelism=")),
                    "1")) for k in ("data", "fsdp", "sequence", "tensor")]
    fill = chips // math.prod(v for v in ici if v != -1)
    ici = [fill if v == -1 else v for v in ici]
    for shape in SHAPES[chips]:
        if jax_places([int(d) for d in shape.split("x")], ici):
            return shape
    raise ValueError(f"no slice shape of {chips} chips places {ici}")


def individual_scales(scale):
    """MaxText's get_individual_scales: (emb, heads and mlp, layers) exponents."""
    log2 = scale.bit_length() - 1
    assert 1 << log2 == scale, scale
    b, r = divmod(log2, 3)
    return b + (r > 1), b + (r > 0), b


def synthetic_model(scale, emb=2560, heads=8, mlp=8192, layers=16):
    """The base.yml @76bd53b0 model at global_parameter_scale `scale`."""
    e, h, l = individual_scales(scale)
    return dict(emb=emb << e, heads=heads << h, head_dim=256, mlp=mlp << h, layers=layers << l,
                vocab=32768)


def maxtext_params(emb, heads, head_dim, mlp, layers, vocab, gated=False, tied=True,
                   norms_per_layer=1):
    """Every parameter of a MaxText decoder (no biases): embedding (and logits unless tied),
    per layer Q, K, V, O (multi-head), the MLP's 2 or 3 matrices and the norms, final norm.
    MaxText's 2023 default block has one norm per layer (attention and MLP in parallel)."""
    per_layer = 4 * emb * heads * head_dim + (3 if gated else 2) * emb * mlp
    per_layer += norms_per_layer * emb
    return vocab * emb * (1 if tied else 2) + layers * per_layer + emb


def step_time_s(tflops_per_chip, params, heads, layers, head_dim, seq, pdbs, attention_factor):
    """The step time that MaxText's TFLOP/s per device implies (module docstring)."""
    tflop = (6 * params * seq * pdbs
             + attention_factor * heads * layers * head_dim * seq ** 2 * pdbs) / 1e12
    return tflop / tflops_per_chip


def read_args(name):
    """The KEY=VALUE lines of workloads/maxtext/NAME.args."""
    with open(os.path.join(ROOT, MAXTEXT, name + ".args")) as f:
        return [l.strip() for l in f if l.strip() and not l.startswith("#")]


def arg(args, key):
    return next(a.split("=", 1)[1] for a in args if a.startswith(key + "="))


# public_runs.md 4a (v5p, MaxText configs/v5p/README.md; scripts @76bd53b0): model, slice
# name (v5p-N: N/2 chips), slices, TFLOP/s per chip.
_V5P = [("32b", 128, 1, 328), ("32b", 128, 2, 319), ("64b", 128, 1, 323), ("64b", 128, 2, 309),
        ("128b", 256, 1, 315), ("128b", 256, 2, 305), ("128b", 512, 2, 274),
        ("256b", 1024, 2, 289), ("512b", 1024, 1, 294), ("512b", 1024, 2, 282),
        ("1024b", 2048, 2, 237), ("1024b", 4096, 1, 297), ("1024b", 4096, 2, 279)]
# public_runs.md 4b (v5e-256 slices; scripts @76bd53b0 = largest_job @9bc243c9): model,
# TFLOP/s per chip on 1, 2, 4, 8, 16, 32 slices.
_V5E = [("16b", [120, 117, 117, 115, 111, 108]), ("32b", [132, 128, 126, 125, 123, 119]),
        ("64b", [118, 112, 110, 108, 105, 99]), ("128b", [110, 110, 108, 104, 100, 91])]
# public_runs.md 4d (A3, 8 H100 per VM; configs/a3/llama_2_7b/{1,2,4,8,16}vm.sh @efb6d9e4).
_A3 = [(1, 492), (2, 422), (4, 407), (8, 409), (16, 375)]

SKIPPED = [
    ("v5p 128B on 1x v5p-512 (315 TFLOP/s)", "section 8: differs between MaxText's config "
     "README (316, 68.83 %) and main README (315, 68.53 %)"),
    ("v5p 256B on 1x v5p-1024 (308 TFLOP/s)", "section 8: differs between the config README "
     "(308) and the main README (316)"),
    ("v5p 1024B on 1x v5p-2048 (254 TFLOP/s)", "section 8: the main README's 249 / 64.05 % is "
     "inconsistent and differs from the config README's 254 / 55.35 %"),
    ("v4 22B and 52B, 1-8 slices (section 4c)", "section 8: sequence length 1024 or 2048 "
     "unknown; the configs are bundled (workloads/maxtext/v4-*.args)"),
]


def v5p_runs():
    runs = []
    for size, slice_cores, slices, tflops in _V5P:
        args = read_args("v5p-" + size)
        runs.append(Run(f"maxtext/v5p-{slice_cores}-{size}-{slices}x", args, "base-76bd53b0.yml",
                        "tpu-v5p", slices, slice_cores // 2, tflops,
                        f"{size.upper()}: {slices}x v5p-{slice_cores}, {tflops} TFLOP/s/chip",
                        slice_shape(slice_cores // 2, args)))
    return runs


def v5e_runs():
    runs = []
    for size, per_slices in _V5E:
        args = read_args("v5e-" + size)
        for slices, tflops in zip([1, 2, 4, 8, 16, 32], per_slices):
            runs.append(Run(f"maxtext/v5e-256-{size}-{slices}x", args, "base-76bd53b0.yml",
                            "tpu-v5e", slices, 256, tflops,
                            f"{size.upper()}: {slices}x v5e-256, {tflops} TFLOP/s/chip",
                            "16x16"))
    return runs


def a3_runs():
    base = read_args("a3-llama2-7b")
    runs = []
    for vms, tflops in _A3:
        args = [a for a in base if not a.startswith("dcn_data_parallelism=")]
        args.append(f"dcn_data_parallelism={vms}")
        runs.append(Run(f"maxtext/a3-llama2-7b-{vms}x", args, "base-efb6d9e4.yml", "dgx-h100",
                        vms, 8, tflops, f"Llama2-7B: {vms}x A3 (8 H100), {tflops} TFLOP/s/GPU",
                        ""))
    return runs


def synthetic_step_s(run, attention_factor):
    m = synthetic_model(int(arg(run.args, "global_parameter_scale")))
    params = maxtext_params(m["emb"], m["heads"], m["head_dim"], m["mlp"], m["layers"], m["vocab"])
    return step_time_s(run.tflops, params, m["heads"], m["layers"], m["head_dim"],
                       int(arg(run.args, "max_target_length")),
                       float(arg(run.args, "per_device_batch_size")), attention_factor)


def llama2_7b_step_s(run):
    # configs/models/llama2-7b.yml @efb6d9e4: 4096, 32 heads of 128, 11008 gated (silu,
    # linear), 32 layers, vocab 32000, untied; decoder_block llama2: two norms per layer.
    params = maxtext_params(4096, 32, 128, 11008, 32, 32000, gated=True, tied=False,
                            norms_per_layer=2)
    return step_time_s(run.tflops, params, 32, 32, 128, int(arg(run.args, "max_target_length")),
                       float(arg(run.args, "per_device_batch_size")), 6)


def rows(runs, step_s):
    return [Row(r.stem, step_s(r), r.note) for r in runs]


_SOURCE = "shared/validation/public_runs.md section 4{} (AI-Hypercomputer/maxtext {})"
_NOTES = ("The models are MaxText's synthetic ones (base.yml @76bd53b0 scaled by "
          "global_parameter_scale; public_runs.md section 4 marks the derived dimensions "
          "uncertain); BF16 is inferred. MaxText's default decoder block is the parallel one "
          "(model.parallel_block: one tensor-parallel gather and reduction per layer and "
          "pass); remat_policy full re-runs the forward as XLA does (jax.checkpoint's "
          "recomputation, dead-code-eliminated: each block's last GEMM and its reduction "
          "are not re-run); remat_policy minimal is meshsim's projections recomputation (the "
          "weight matmuls' outputs kept, the attention core re-run). The importer's "
          "approximations are in each experiment's header: activation_embed on tensor as "
          "sequence parallelism, HSDP across slices as FSDP over all chips.")

V5P_MAXTEXT = Dataset(
    key="tpu-v5p-maxtext", title="TPU v5p, bf16: MaxText synthetic 32B-1024B (2023-12)",
    gpu="TPU v5p", precision="bf16", topology="topologies/tpu-v5p.yaml",
    source=_SOURCE.format("a", "configs/v5p/README.md; scripts @76bd53b0"),
    rows=rows(v5p_runs(), lambda r: synthetic_step_s(r, 6)),
    # topologies/tpu-v5p.yaml (branch h2-tpu) uses the roofline kernel model.
    # One overhead (5 us: 0, 2 and 5 us moved every row by < 0.1 % in the first grid), the
    # matmul values around the optimum of a first pass at 0.85 with collective matmul, and
    # 0.70 since XLA's dead-code-eliminated full recomputation and the parallel block.
    grids={"roofline": {"matmul": "0.70,0.72,0.74,0.76,0.78,0.80", "kernel_overhead_us": "5"}},
    json="results/calibration-tpu-v5p-maxtext.json",
    derivation="step time = (6*N*s*pdbs + 6*h*l*d*s^2*pdbs) / published TFLOP/s per chip "
               "(MaxText's calculate_training_tflops @76bd53b0, causal attention halved)",
    notes=_NOTES)

V5E_MAXTEXT = Dataset(
    key="tpu-v5e-maxtext", title="TPU v5e, bf16: MaxText synthetic 16B-128B on 1-32 slices",
    gpu="TPU v5e", precision="bf16", topology="topologies/tpu-v5e.yaml",
    source=_SOURCE.format("b", "configs/v5e/README.md; scripts @76bd53b0 = @9bc243c9"),
    rows=rows(v5e_runs(), lambda r: synthetic_step_s(r, 12)),
    # One overhead, matmul around the optimum of earlier passes (0.86 without collective
    # matmul, which shortens the 128B rows; with it, 0.86 of 0.86/0.88/0.90, so lower
    # values next): the 24 rows reach 8,192 chips and take about
    # 80 s per grid point on 2 idle cores; the kernel overhead moves the v5p rows by < 0.1 %.
    # Since XLA's dead-code-eliminated full recomputation (every row is remat full: 7/12 of
    # the weight FLOPs re-run, not all) and the parallel block, the optimum moved from 0.82
    # to about 0.72: a pass over 0.68-0.76 (step 0.02) chose 0.72, this finer one the same.
    grids={"roofline": {"matmul": "0.73,0.74,0.75,0.76,0.78", "kernel_overhead_us": "2"}},
    json="results/calibration-tpu-v5e-maxtext.json",
    derivation="step time = (6*N*s*pdbs + 12*h*l*d*s^2*pdbs) / published TFLOP/s per chip "
               "(MaxText's calculate_training_tflops @9bc243c9, attention not halved)",
    notes=_NOTES)

A3_MAXTEXT = Dataset(
    key="h100-maxtext", title="H100, bf16: MaxText A3 Llama2-7B, 8-128 GPUs (2024-04)",
    gpu="H100-SXM5-80GB", precision="bf16", topology="topologies/dgx-h100.yaml",
    source=_SOURCE.format("d", "configs/a3/llama_2_7b/README.md; scripts @efb6d9e4"),
    rows=rows(a3_runs(), llama2_7b_step_s),
    grids={"shapes": {"matmul": "0.70,0.72,0.74,0.76,0.78,0.80", "kernel_overhead_us": "0,5,10"}},
    json="results/calibration-h100-maxtext.json",
    derivation="step time = (6*N*s*pdbs + 6*h*l*d*s^2*pdbs) / published TFLOP/s per GPU "
               "(MaxText's calculate_tflops_training_per_device @efb6d9e4; N = 6.74B)",
    notes="ici_fsdp 8 inside a VM, dcn_data across VMs (HSDP, modelled as FSDP over all "
          "GPUs), remat_policy minimal_flash (modelled as no recomputation), cudnn flash "
          "attention; each experiment's header lists the approximations. For validation, not "
          "for a fit: scripts/calibrate.py would write its optimum into dgx-h100.yaml, which "
          "holds the Megatron-LM fit (XLA's GPU kernels would need a topology of their own).")

DATASETS = {d.key: d for d in (V5P_MAXTEXT, V5E_MAXTEXT, A3_MAXTEXT)}
RUNS = {"tpu-v5p-maxtext": v5p_runs, "tpu-v5e-maxtext": v5e_runs, "h100-maxtext": a3_runs}


def generate(meshsim, keys):
    """Writes each row's experiment with `meshsim import maxtext`; returns the failures."""
    failed = []
    for key in keys:
        for r in RUNS[key]():
            out = os.path.join(ROOT, "workloads/experiments", r.stem + ".yaml")
            os.makedirs(os.path.dirname(out), exist_ok=True)
            cmd = [meshsim, "import", "maxtext", os.path.join(MAXTEXT, r.base), *r.args,
                   "--topology", r.topology, "--slices", str(r.slices),
                   "--chips-per-slice", str(r.chips_per_slice), "-o",
                   os.path.relpath(out, ROOT)] + (["--slice-shape", r.shape] if r.shape else [])
            p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
            if p.returncode != 0:
                failed.append((r.stem, p.stderr.strip().splitlines()[-1:]))
    return failed


# The TPU data sets that are fitted (the A3 one is for validation only: see its notes).
FITTED = ["tpu-v5p-maxtext", "tpu-v5e-maxtext"]


def calibrate(args):
    """scripts/calibrate.py's grid and leave-one-out on one MaxText data set: its functions,
    with its data set replaced by this one (so calibrate.py needs no change)."""
    import calibrate as cal  # noqa: E402 (scripts/ is on sys.path: this file's folder)
    ds = DATASETS[args.key]
    cal.DATASET = ds
    model = cal.kernel_model(args.set)
    grid_spec = ds.grids[model]
    matmuls = (args.matmul or grid_spec["matmul"]).split(",")
    overheads = (args.overhead_us or grid_spec["kernel_overhead_us"]).split(",")
    grid = cal.simulate_grid(args.meshsim, matmuls, overheads, args.set, args.jobs)
    chosen, folds = cal.fit(grid)
    published = [r.published_s for r in ds.rows]
    for point in sorted(grid, key=lambda p: cal.score(
            [cal.error_percent(s, q) for s, q in zip(grid[p], published)]))[:10]:
        errors = [cal.error_percent(s, q) for s, q in zip(grid[point], published)]
        print(f"{cal.score(errors)}  matmul {point[0]} overhead {point[1]}  " +
              " ".join(f"{e:+.1f}" for e in errors))
    held = [abs(f["error_percent"]) for f in folds]
    print(f"fit: matmul {chosen[0]}, kernel_overhead_us {chosen[1]}; held-out mean "
          f"{sum(held) / len(held):.2f}%, max {max(held):.2f}%")
    if args.write:
        cal.write_fit(chosen)
    with open(os.path.join(ROOT, ds.json), "w") as out:
        json.dump({
            "objective": "mean absolute step-time error (%), rounded to 0.01; ties: "
                         "smaller max error, then smaller overhead, then smaller matmul",
            "dataset": ds.key, "title": ds.title, "topology": ds.topology,
            "kernel_model": model, "grid": {"matmul": matmuls, "kernel_overhead_us": overheads},
            "sets": args.set,
            "runs": [{"run": r.experiment, "published_s": r.published_s} for r in ds.rows],
            "points": [{"matmul": p[0], "kernel_overhead_us": p[1], "step_time_s": grid[p]}
                       for p in sorted(grid, key=lambda p: (float(p[0]), float(p[1])))],
            "fit": {"matmul": chosen[0], "kernel_overhead_us": chosen[1]},
            "leave_one_out": folds,
        }, out, indent=1)
        out.write("\n")
    return 0


POINTER_HEADING = "## TPU data sets: MaxText's tables"


def pointer_lines():
    """The section of results/validation.md that points at results/validation-maxtext.md:
    per fitted TPU data set its rows with the published step time and the in-sample and
    held-out errors of its calibration (results/calibration-tpu-*-maxtext.json, written by
    `calibrate`). scripts/validate.py writes it into results/validation.md, and `report`
    replaces it there, so that either keeps it current."""
    lines = [POINTER_HEADING, "",
             "The TPU rows of shared/validation/public_runs.md section 4 (MaxText's v5p and v5e "
             "tables) are fitted and reported by `scripts/validation_maxtext.py` (generate, "
             "calibrate, report): per-row tables, the exposed communication and the grid in "
             "[results/validation-maxtext.md](validation-maxtext.md). From their calibrations:",
             "", "| data set | rows | fit: matmul, overhead us | fit mean / max | "
             "held-out mean / max |", "|---|---|---|---|---|"]
    tables, fit_all, held_all = [], [], []
    for key in FITTED:
        ds = DATASETS[key]
        path = os.path.join(ROOT, ds.json)
        if not os.path.exists(path):
            lines.append(f"| {ds.title} | {len(ds.rows)} | (no {ds.json}) | - | - |")
            continue
        with open(path) as f:
            cal = json.load(f)
        folds = cal["leave_one_out"]
        fit = [abs(x["in_sample_error_percent"]) for x in folds]
        held = [abs(x["error_percent"]) for x in folds]
        fit_all += fit
        held_all += held
        lines.append(f"| {ds.title} | {len(folds)} | {cal['fit']['matmul']}, "
                     f"{cal['fit']['kernel_overhead_us']} | {sum(fit) / len(fit):.2f}% / "
                     f"{max(fit):.2f}% | {sum(held) / len(held):.2f}% / {max(held):.2f}% |")
        tables += ["", f"{ds.title} ({ds.topology}):", "",
                   "| run | published s | error (fit) | held-out error |", "|---|---|---|---|"]
        tables += [f"| {x['run']} | {x['published_s']:.3f} | {x['in_sample_error_percent']:+.2f}% "
                   f"| {x['error_percent']:+.2f}% |" for x in folds]
    if fit_all:
        lines.append(f"| all usable TPU rows (issue 15's goal: mean <= 8 %) | {len(fit_all)} | "
                     f"per data set | {sum(fit_all) / len(fit_all):.2f}% / {max(fit_all):.2f}% | "
                     f"{sum(held_all) / len(held_all):.2f}% / {max(held_all):.2f}% |")
    return lines + tables + ["", "Skipped TPU rows: " + "; ".join(
        f"{what} ({why})" for what, why in SKIPPED) + ".", ""]


def write_pointer(path):
    """Replaces (or adds, after the Summary) the pointer section of results/validation.md."""
    with open(path) as f:
        text = f.read()
    section = "\n".join(pointer_lines()) + "\n"
    start = text.find(POINTER_HEADING)
    if start < 0:
        summary = text.find("## Summary")
        start = text.find("\n## ", summary + 1) + 1 if summary >= 0 else len(text)
        end = start
    else:
        nxt = text.find("\n## ", start + 1)
        end = nxt + 1 if nxt >= 0 else len(text)
    with open(path, "w") as f:
        f.write(text[:start] + section + text[end:])


def report(args):
    """results/validation-maxtext.md: scripts/validate.py's section for each fitted data set."""
    import validate  # noqa: E402
    import validation_ranking  # noqa: E402
    lines = ["# Validation on MaxText's TPU tables", "",
             "Generated by `scripts/validation_maxtext.py report` (after `generate` and "
             "`calibrate --key KEY --write` per data set); the GPU data sets are in "
             "results/validation.md. Rows and the step times derived from the published "
             "TFLOP/s: `scripts/validation_maxtext.py list`.", ""]
    summary = []
    simulated = []
    for key in args.key or FITTED:
        section, row, rows = validate.dataset_lines(DATASETS[key], args)
        lines += section
        summary.append(row)
        simulated += rows
    lines += ["## Summary", "", "| data set | rows | fit mean / max | held-out mean / max |",
              "|---|---|---|---|"]
    for ds, n, mean, mx, held_mean, held_max, _ in summary:
        held = f"{held_mean:.2f}% / {held_max:.2f}%" if held_mean is not None else "-"
        lines.append(f"| {ds.title} | {n} | {mean:.2f}% / {mx:.2f}% | {held} |")
    if len(summary) > 1 and all(row[4] is not None for row in summary):
        # validate.dataset_lines gives the fitted rows' count as text ("13", or "13 (+2 not
        # fitted: ...)"): its leading number weighs the data set.
        weight = [int(str(row[1]).split()[0]) for row in summary]
        rows = sum(weight)
        lines.append(
            f"| all of them (row-weighted) | {rows} | "
            f"{sum(w * row[2] for w, row in zip(weight, summary)) / rows:.2f}% / "
            f"{max(row[3] for row in summary):.2f}% | "
            f"{sum(w * row[4] for w, row in zip(weight, summary)) / rows:.2f}% / "
            f"{max(row[5] for row in summary):.2f}% |")
    lines += ["", "Skipped rows:", ""] + [f"- {what}: {why}" for what, why in SKIPPED]
    # A run's model is its size in the table (its experiment writes the model inline, named
    # as the run): maxtext/v5p-128-32b-2x trains the 32B model.
    lines += [""] + validation_ranking.ranking_lines(
        simulated, lambda stem: re.search(r"-(\d+b)-\d+x$", stem).group(1))[0]
    with open(os.path.join(ROOT, args.out), "w") as f:
        f.write("\n".join(lines) + "\n")
    if args.validation:
        write_pointer(os.path.join(ROOT, args.validation))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    sub.add_parser("list")
    g = sub.add_parser("generate")
    g.add_argument("--meshsim", default=os.path.join(ROOT, "build/meshsim"))
    g.add_argument("--key", action="append", choices=sorted(DATASETS),
                   help="data set (repeatable; default: all)")
    c = sub.add_parser("calibrate")
    c.add_argument("--meshsim", default=os.path.join(ROOT, "build/meshsim"))
    c.add_argument("--key", required=True, choices=FITTED)
    c.add_argument("--matmul", help="comma-separated grid (default: the data set's)")
    c.add_argument("--overhead-us", help="comma-separated grid (default: the data set's)")
    c.add_argument("--jobs", type=int, default=2)
    c.add_argument("--set", action="append", default=[])
    c.add_argument("--write", action="store_true", help="the fit into the topology")
    r = sub.add_parser("report")
    r.add_argument("--meshsim", default=os.path.join(ROOT, "build/meshsim"))
    r.add_argument("--key", action="append", choices=FITTED)
    r.add_argument("--set", action="append", default=[])
    r.add_argument("--out", default="results/validation-maxtext.md")
    r.add_argument("--validation", default="results/validation.md",
                   help="the file whose TPU pointer section to rewrite ('' : none)")
    args = ap.parse_args()
    if args.command == "calibrate":
        return calibrate(args)
    if args.command == "report":
        return report(args)
    if args.command == "list":
        for d in DATASETS.values():
            print(f"{d.key}: {d.title} ({d.topology})")
            for r in d.rows:
                print(f"  {r.experiment:30s} {r.published_s:8.3f} s  {r.note}")
        for what, why in SKIPPED:
            print(f"skipped: {what}: {why}")
        return 0
    failed = generate(args.meshsim, args.key or sorted(DATASETS))
    for stem, err in failed:
        print(f"{stem}: {' '.join(err)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

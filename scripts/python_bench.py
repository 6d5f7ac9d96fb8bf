#!/usr/bin/env python3
"""The Python API's cost over the CLI on the bundled Llama-2 70B sweep; writes
results/python_bench.md.

    /usr/bin/python3 scripts/python_bench.py [--build build] [-j 2] [--runs 7]

Each run is a fresh process, CLI and API alternating (the order swapped every round, so
that neither always runs on a warmer machine), at the same thread count:

  cli  `meshsim sweep SWEEP -j N -o TMP -q`: load, evaluate, write results.csv,
       pareto.csv and sweep.json; timed from outside (process wall time).
  api  `meshsim.sweep(SWEEP, threads=N)` in /usr/bin/python3 with PYTHONPATH=BUILD/python:
       load, evaluate, rows to a pandas DataFrame; timed inside the process around the
       call, and from outside (the process, with the interpreter's start and the imports
       of meshsim and pandas).

The overhead is the median API time over the median CLI time, minus one. The script also
checks that the API's rows equal the CLI's results.csv, cell for cell. With
--baseline-cli PATH it also times another meshsim executable in the same rounds: one
built without the Python module, to show what compiling the library position-independent
(-fPIC, which the module needs) costs the CLI.
"""
import argparse
import collections
import csv
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SWEEP = "workloads/sweeps/llama2-70b-64-h100.yaml"
API = """
import sys, time
t0 = time.perf_counter()
import meshsim, pandas
t1 = time.perf_counter()
df = meshsim.sweep(sys.argv[1], threads=int(sys.argv[2]))
t2 = time.perf_counter()
print(t2 - t1, t1 - t0, len(df))
"""


def run_cli(exe, threads, out):
    start = time.perf_counter()
    subprocess.run([exe, "sweep", SWEEP, "-j", str(threads), "-o", out,
                    "-q"], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def run_api(build, threads):
    env = dict(os.environ, PYTHONPATH=os.path.join(build, "python"))
    start = time.perf_counter()
    done = subprocess.run(["/usr/bin/python3", "-c", API, SWEEP, str(threads)], cwd=ROOT, env=env,
                          check=True, capture_output=True, text=True)
    wall = time.perf_counter() - start
    call, imports, _ = done.stdout.split()
    return float(call), wall, float(imports)


def rows_equal(build, threads, results_csv):
    sys.path.insert(0, os.path.join(build, "python"))
    import meshsim  # noqa: E402

    os.chdir(ROOT)
    rows = meshsim.sweep(SWEEP, threads=threads, as_frame=False)
    with open(results_csv, newline="") as f:
        header, *cells = list(csv.reader(f))
    if len(rows) != len(cells):
        return False
    for row, line in zip(rows, cells):
        if list(row) != header:
            return False
        for column, cell in zip(header, line):
            v = row[column]
            if v is None or (isinstance(v, float) and math.isnan(v)):
                ok = cell == ""
            elif isinstance(v, bool):
                ok = cell == ("true" if v else "false")
            elif isinstance(v, (int, float)):
                ok = cell != "" and float(cell) == v
            else:
                ok = cell == v
            if not ok:
                return False
    return True


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("-j", "--threads", type=int, default=2)
    p.add_argument("--runs", type=int, default=7)
    p.add_argument("--baseline-cli", help="another meshsim executable to time in the same rounds")
    p.add_argument("--baseline-label", help="what --baseline-cli is (default: its path)")
    p.add_argument("-o", "--output", default=os.path.join(ROOT, "results/python_bench.md"))
    args = p.parse_args()
    build = os.path.abspath(args.build)
    exe = os.path.join(build, "meshsim")
    base = []

    cli, api_call, api_wall, imports = [], [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cli")
        run_cli(exe, args.threads, out)  # warm the page cache and the binaries once
        run_api(build, args.threads)
        kinds = ["cli", "api"] + (["base"] if args.baseline_cli else [])
        for i in range(args.runs):
            order = kinds if i % 2 == 0 else kinds[::-1]
            for which in order:
                if which == "base":
                    base.append(run_cli(args.baseline_cli, args.threads, os.path.join(tmp, "base")))
                elif which == "cli":
                    cli.append(run_cli(exe, args.threads, out))
                else:
                    c, w, imp = run_api(build, args.threads)
                    api_call.append(c)
                    api_wall.append(w)
                    imports.append(imp)
            print(f"round {i + 1}: cli {cli[-1]:.3f} s, api call {api_call[-1]:.3f} s, "
                  f"api process {api_wall[-1]:.3f} s", file=sys.stderr)
        equal = rows_equal(build, args.threads, os.path.join(out, "results.csv"))
        with open(os.path.join(out, "results.csv"), newline="") as f:
            statuses = collections.Counter(row["status"] for row in csv.DictReader(f))

    med = statistics.median
    over_call = med(api_call) / med(cli) - 1
    over_wall = med(api_wall) / med(cli) - 1
    verdict = "meets" if over_call <= 0.05 else "misses"
    command = " ".join(["/usr/bin/python3", "scripts/python_bench.py"] + sys.argv[1:])
    lines = [
        "# The Python API against the CLI: the bundled Llama-2 70B sweep",
        "",
        f"Written by `{command}` (see the script's docstring for what is timed).",
        "",
        f"- sweep: `{SWEEP}` ({sum(statuses.values())} configurations: "
        + ", ".join(f"{n} {k}" for k, n in sorted(statuses.items())) + ")",
        f"- threads: {args.threads} for both; {args.runs} runs each, alternating, fresh "
        "processes, after one warm-up run of each",
        f"- machine: {cpu_name()}, {os.cpu_count()} logical CPUs (shared with other work: "
        "the medians, not single runs, are the measure)",
        f"- build: `{os.path.relpath(build, ROOT)}` (RelWithDebInfo, as scripts/build.sh)",
        f"- the API's rows equal the CLI's results.csv cell for cell: {'yes' if equal else 'NO'}",
        "",
        "| | median s | min s | max s | over the CLI (medians) |",
        "|---|---:|---:|---:|---:|",
        f"| CLI `meshsim sweep -j {args.threads}` (process) | {med(cli):.3f} | {min(cli):.3f} | "
        f"{max(cli):.3f} | |",
        f"| API `meshsim.sweep(threads={args.threads})` (the call, DataFrame included) | "
        f"{med(api_call):.3f} | {min(api_call):.3f} | {max(api_call):.3f} | "
        f"{100 * over_call:+.1f} % |",
        f"| API process (interpreter, `import meshsim, pandas`, the call) | {med(api_wall):.3f} | "
        f"{min(api_wall):.3f} | {max(api_wall):.3f} | {100 * over_wall:+.1f} % |",
    ]
    if base:
        over_base = med(cli) / med(base) - 1
        lines += [
            f"| CLI built without the Python module ({args.baseline_label or args.baseline_cli}; "
            "no -fPIC) | "
            f"{med(base):.3f} | {min(base):.3f} | {max(base):.3f} | CLI {100 * over_base:+.1f} % "
            "over it |",
        ]
    lines += [
        "",
        f"Evaluating the sweep through the API costs {100 * over_call:+.1f} % over the CLI "
        f"({verdict} the goal of at most +5 %). The API process adds the interpreter's start "
        f"and the imports (median {med(imports):.3f} s, mostly pandas), a fixed cost that a "
        "notebook or a search loop pays once.",
        "",
        "Runs (s): CLI " + ", ".join(f"{t:.3f}" for t in cli) + "; API call "
        + ", ".join(f"{t:.3f}" for t in api_call)
        + ("; baseline CLI " + ", ".join(f"{t:.3f}" for t in base) if base else "") + ".",
        "",
    ]
    with open(args.output, "w") as f:
        f.write("\n".join(lines))
    print("\n".join(lines))
    return 0 if equal else 1


if __name__ == "__main__":
    sys.exit(main())

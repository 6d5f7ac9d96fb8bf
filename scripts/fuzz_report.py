#!/usr/bin/env python3
"""Writes results/fuzz.md from the last scripts/fuzz.sh campaign and the regression tests.

Usage: scripts/fuzz_report.py [BUILD_DIR] [OUTPUT]   (defaults: build-asan results/fuzz.md)

Per target it reads the newest line of BUILD_DIR/fuzz-logs/summary.tsv (the command and
its outcome) and BUILD_DIR/fuzz-logs/TARGET.log (libFuzzer's last status line and final
stats). Findings come from tests/unit/fuzz_regressions_test.cc: each TEST there is preceded
by a comment block whose first line is `// Found by fuzz_TARGET: WHAT` (or `// Found by
review, fuzz_TARGET: WHAT`) and which holds a line `// Fix: HOW` (continuation lines start
with `//   `).
"""
import datetime
import pathlib
import platform
import re
import subprocess
import sys

TARGETS = ["experiment", "set", "sweep", "import_hf", "import_megatron"]
ROOT = pathlib.Path(__file__).resolve().parent.parent


def last_summary(build):
    rows = {}
    path = build / "fuzz-logs" / "summary.tsv"
    for line in path.read_text().splitlines()[1:]:
        target, seconds, status, command = line.split("\t", 3)
        rows[target] = {"seconds": int(seconds), "status": status, "command": command}
    return rows


def log_stats(log):
    text = log.read_text(errors="replace")
    stats = {k: v for k, v in re.findall(r"stat::(\w+):\s+(\d+)", text)}
    status = re.findall(r"^#(\d+)\s+\w+\s+cov: (\d+) ft: (\d+) corp: (\d+)/(\S+)", text, re.M)
    done = re.findall(r"^Done (\d+) runs in (\d+) second", text, re.M)
    edges = re.findall(r"Loaded 1 modules\s+\((\d+) inline 8-bit counters", text)
    out = {"execs": stats.get("number_of_executed_units", "?"),
           "exec_s": stats.get("average_exec_per_sec", "?"),
           "rss_mb": stats.get("peak_rss_mb", "?"),
           "slowest_s": stats.get("slowest_unit_time_sec", "?"),
           "new_units": stats.get("new_units_added", "?")}
    if status:
        _, cov, ft, corp, size = status[-1]
        out.update(cov=cov, ft=ft, corp=corp, corp_size=size)
    if done:
        out["wall_s"] = done[-1][1]
    out["edges"] = edges[0] if edges else "?"
    return out


def findings():
    """{target: [(test name, what, fix)]} from the regression tests' comment blocks."""
    text = (ROOT / "tests/unit/fuzz_regressions_test.cc").read_text()
    out = {t: [] for t in TARGETS}
    block = r"((?:^//.*\n)+)TEST\(\w+, (\w+)\)"
    for comment, name in re.findall(block, text, re.M):
        lines = [l[2:].strip() for l in comment.splitlines()]
        joined, current = {}, None
        for l in lines:
            m = re.match(r"Found by (review, )?fuzz_(\w+): (.*)", l)
            if m:
                current, target = "what", m.group(2)
                joined["how"] = "review" if m.group(1) else "fuzzing"
                joined["what"] = m.group(3)
            elif l.startswith("Fix: "):
                current = "fix"
                joined["fix"] = l[5:]
            elif current:
                joined[current] += " " + l
        if "what" in joined:
            out.setdefault(target, []).append(
                (name, joined["how"], joined["what"], joined.get("fix", "")))
    return out


def git(*args):
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True,
                          text=True).stdout.strip()


def main():
    build = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "build-asan"
    output = pathlib.Path(sys.argv[2]) if len(sys.argv) > 2 else ROOT / "results/fuzz.md"
    rows = last_summary(build)
    found = findings()
    clang = subprocess.run(["clang++", "--version"], capture_output=True,
                           text=True).stdout.splitlines()[0]
    cores = subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip()
    code = ["sim", "tests/fuzz", "CMakeLists.txt"]
    commit = git("log", "-1", "--format=%h", "--", *code)
    dirty = " (plus uncommitted changes)" if git("status", "--porcelain", "--", *code) else ""
    day = datetime.date.fromtimestamp((build / "fuzz-logs" / "summary.tsv").stat().st_mtime)
    md = ["# Fuzzing campaigns", "",
          "Written by `scripts/fuzz_report.py` from the logs of the last `scripts/fuzz.sh` run "
          "of each target (README: \"Fuzzing and sanitizers\"). Do not edit by hand.", "",
          f"- run: {day.isoformat()}; code: commit {commit}{dirty}, the last commit that "
          "changed sim/, tests/fuzz/ or CMakeLists.txt",
          f"- host: {platform.machine()}, {cores} cores shared with other work (each target on "
          "one core, `nice -n 10`, two at a time)",
          f"- compiler: {clang}; build-asan: `-O1 -g -fsanitize=address,undefined "
          "-fno-sanitize-recover=undefined -fsanitize=fuzzer-no-link`, asserts on",
          "- coverage: libFuzzer's `cov` (instrumented edges reached, of all in the binary, "
          "which holds every function of the object files it links, called by the target or "
          "not) and "
          "`ft` (features: edges with hit counts); yaml-cpp and the standard library are "
          "shared libraries without instrumentation, header-only nlohmann::json and Boost are "
          "instrumented with meshsim's code", ""]
    md += ["| target | duration | result | exec/s | executions | corpus (units/bytes) | cov | ft "
           "| peak RSS |", "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for t in TARGETS:
        if t not in rows:
            md.append(f"| {t} | not run | | | | | | | |")
            continue
        s = log_stats(build / "fuzz-logs" / f"{t}.log")
        r = rows[t]
        result = "no finding" if r["status"] == "ok" else "**finding**"
        md.append(f"| {t} | {s.get('wall_s', r['seconds'])} s | {result} | {s['exec_s']} | "
                  f"{s['execs']} | {s.get('corp', '?')} / {s.get('corp_size', '?')} | "
                  f"{s.get('cov', '?')} of {s['edges']} | {s.get('ft', '?')} | {s['rss_mb']} MB |")
    md += ["", "## Commands", "",
           "Run from the repository root after `bash scripts/fuzz.sh --build-only`; the seeds "
           "and dictionary come from `tests/fuzz/make_seeds.py` (bundled files plus "
           "`tests/fuzz/seeds/`).", ""]
    for t in TARGETS:
        if t in rows:
            md += [f"- {t}:", "", f"  ```", f"  {rows[t]['command']}", "  ```", ""]
    md += ["## Findings and fixes", "",
           "Every input that crashed, leaked, hit undefined behaviour or an assert, or broke a "
           "target's check in the exploratory runs before the campaign above was fixed in the "
           "library and is a test in `tests/unit/fuzz_regressions_test.cc`. \"Found by review\" "
           "marks defects seen while reading the code behind a target that the fuzzer had not "
           "reached; their inputs were run through that target before the fix to confirm "
           "them.", ""]
    for t in TARGETS:
        items = found.get(t, [])
        md.append(f"### {t}")
        md.append("")
        if not items:
            md += ["No finding.", ""]
            continue
        for name, how, what, fix in items:
            md.append(f"- Found by {how}: {what} Fix: {fix} (test `FuzzRegressions.{name}`)")
        md.append("")
    output.write_text("\n".join(md))
    print(f"fuzz_report.py: wrote {output}")


if __name__ == "__main__":
    main()

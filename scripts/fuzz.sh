#!/usr/bin/env bash
# Build the libFuzzer targets (clang, ASan + UBSan, asserts on) and run them.
#
# Usage: scripts/fuzz.sh [-t SECONDS | -n RUNS] [-j PARALLEL] [-s SEED] [--build-only] [TARGET...]
#   TARGET: experiment | set | sweep | import_hf | import_megatron | import_maxtext
#           (default: all six)
#   -t SECONDS   how long each target runs (default 60)
#   -n RUNS      instead of a time: how many inputs each target tries (libFuzzer's -runs)
#   -j PARALLEL  targets run at a time (default 1; each uses one core)
#   -s SEED      libFuzzer's -seed (default: a random one per run). With a seed, -n and a
#                fresh corpus a run tries the same inputs on any machine, however fast (CI:
#                -s 1 -n 20000, so that a finding is reproduced before CI sees it).
#
# Build folder: build-asan (MESHSIM_SANITIZE=ON MESHSIM_FUZZ=ON, -O1 -g), shared with
# scripts/ci_sanitize.sh. Seeds are made from the bundled files at each run
# (tests/fuzz/make_seeds.py -> build-asan/fuzz-seeds/); the corpus grows in
# build-asan/fuzz-corpus/TARGET across runs; logs go to build-asan/fuzz-logs/TARGET.log and
# crashing inputs to build-asan/fuzz-artifacts/TARGET/. One summary line per target goes
# to build-asan/fuzz-logs/summary.tsv (read by scripts/fuzz_report.py).
# Exit status: 0 when every target ran its time without a finding, 1 otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=60
runs=
parallel=1
seed=
build_only=0
targets=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    -t) seconds=$2; shift 2 ;;
    -n) runs=$2; shift 2 ;;
    -j) parallel=$2; shift 2 ;;
    -s) seed=$2; shift 2 ;;
    --build-only) build_only=1; shift ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
all=(experiment set sweep import_hf import_megatron import_maxtext)
[[ ${#targets[@]} -eq 0 ]] && targets=("${all[@]}")

# Largest input per target (bytes): a little above the largest seed.
declare -A max_len=([experiment]=4096 [set]=1024 [sweep]=4096 [import_hf]=4096
                    [import_megatron]=2048 [import_maxtext]=4096)
for t in "${targets[@]}"; do
  [[ -n "${max_len[$t]:-}" ]] || { echo "fuzz.sh: unknown target $t" >&2; exit 2; }
done

build=build-asan
if [[ ! -f $build/CMakeCache.txt ]] || ! grep -q '^MESHSIM_FUZZ:BOOL=ON' $build/CMakeCache.txt; then
  generator=()
  command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
  CXX=clang++ cmake -S . -B $build "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" -DMESHSIM_SANITIZE=ON -DMESHSIM_FUZZ=ON \
    -DMESHSIM_BUILD_BENCH=OFF >/dev/null
fi
cmake --build $build -j "$(nproc)" --target "${targets[@]/#/fuzz_}"
[[ $build_only -eq 1 ]] && exit 0

root=$PWD
rm -rf $build/fuzz-seeds
python3 tests/fuzz/make_seeds.py . $build/fuzz-seeds
mkdir -p $build/fuzz-logs
summary=$build/fuzz-logs/summary.tsv
[[ -f $summary ]] || printf 'target\tseconds\tstatus\tcommand\n' >"$summary"

# Runs one target; appends its summary line; returns non-zero on a finding.
run_target() {
  local t=$1
  local corpus=$build/fuzz-corpus/$t artifacts=$build/fuzz-artifacts/$t log=$build/fuzz-logs/$t.log
  mkdir -p "$corpus" "$artifacts"
  local limit=-max_total_time="$seconds"
  [[ -n $runs ]] && limit=-runs="$runs"
  local cmd=(nice -n 10 "$build/fuzz/fuzz_$t" "$limit" -max_len="${max_len[$t]}"
             -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -dict="$build/fuzz-seeds/$t.dict"
             ${seed:+-seed="$seed"} -artifact_prefix="$artifacts/" "$corpus" "$build/fuzz-seeds/$t")
  local status=ok
  (cd "$root" && "${cmd[@]}") >"$log" 2>&1 || status=finding
  printf '%s\t%s\t%s\t%s\n' "$t" "${runs:-$seconds}" "$status" "${cmd[*]}" >>"$summary"
  if [[ $status == ok ]]; then
    local stat=(stat::number_of_executed_units stat::average_exec_per_sec)
    echo "fuzz.sh: $t: $(grep -o "${stat[0]}: *[0-9]*" "$log" | grep -o '[0-9]*$') inputs, no finding ($(grep -o "${stat[1]}: *[0-9]*" "$log" | grep -o '[0-9]*$') exec/s)"
  else
    echo "fuzz.sh: $t: FINDING; see $log and $artifacts/" >&2
    grep -m1 -E 'ERROR|runtime error|fuzz check failed' "$log" >&2 || tail -5 "$log" >&2
    return 1
  fi
}

failed=0
pids=()
for t in "${targets[@]}"; do
  run_target "$t" &
  pids+=($!)
  if [[ ${#pids[@]} -ge $parallel ]]; then
    wait "${pids[0]}" || failed=1
    pids=("${pids[@]:1}")
  fi
done
for p in "${pids[@]}"; do wait "$p" || failed=1; done
exit $failed

#!/usr/bin/env bash
# The md5 of every bundled experiment's summary, one line each ("md5 exit=STATUS path"): run
# it with the binary before and after a change that must not change results, and diff the
# two (no output: byte-identical). Extra flags go to every run, e.g. --full-replay to check
# the full replay (an experiment that does not run that way shows its exit status).
# Usage: scripts/summary_md5.sh MESHSIM_BINARY [EXTRA_RUN_FLAGS...] > before.txt
set -uo pipefail
bin=$(realpath "$1")
shift
cd "$(dirname "$0")/.."
# (The summary goes through a file: the status of a pipeline inside $(...) is lost, and
# every run read exit=0.)
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for e in workloads/experiments/*.yaml; do
  "$bin" run "$e" --no-trace -q --reproducible --summary - "$@" >"$out" 2>/dev/null
  code=$?
  h=$(md5sum <"$out" | cut -d' ' -f1)
  echo "$h exit=$code $e"
done

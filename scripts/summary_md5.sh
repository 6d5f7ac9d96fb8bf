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
for e in workloads/experiments/*.yaml; do
  h=$("$bin" run "$e" --no-trace -q --reproducible --summary - "$@" 2>/dev/null | md5sum |
    cut -d' ' -f1)
  code=${PIPESTATUS[0]}
  echo "$h exit=$code $e"
done

#!/usr/bin/env bash
# md5 of every bundled experiment's summary in full replay, to check that a change to the
# program or the replay changes no output: one line per experiment, its md5 and name
# (an experiment that does not run in full replay prints its exit status instead).
#
# Usage: scripts/full_replay_md5.sh MESHSIM_BINARY OUT.txt [EXTRA_RUN_FLAGS...]
#   then: diff before.txt after.txt   (no output: byte-identical)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "$1")
out=$(realpath -m "$2")
shift 2
: > "$out"
for e in workloads/experiments/*.yaml; do
  set +e
  sum=$("$bin" run "$e" --no-trace -q --reproducible --full-replay --summary - "$@" 2>/dev/null |
    md5sum | cut -d' ' -f1)
  code=${PIPESTATUS[0]}
  set -e
  echo "$sum exit=$code ${e#workloads/experiments/}" >> "$out"
done
echo "$(wc -l < "$out") experiments in $out"

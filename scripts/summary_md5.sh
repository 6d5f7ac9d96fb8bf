#!/usr/bin/env bash
# The md5 of every bundled experiment's summary, one line each ("md5 path"): run it with
# the binary before and after a change that must not change results, and diff the two.
# Usage: scripts/summary_md5.sh MESHSIM_BINARY > before.txt
set -uo pipefail
bin=$(realpath "$1")
cd "$(dirname "$0")/.."
for e in workloads/experiments/*.yaml; do
  h=$("$bin" run "$e" --no-trace -q --reproducible --summary - 2>/dev/null | md5sum | cut -d' ' -f1)
  echo "$h $e"
done

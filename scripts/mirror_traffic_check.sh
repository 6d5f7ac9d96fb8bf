#!/usr/bin/env bash
# Step time of every bundled experiment that replays symmetrically, with
# cluster.mirror_traffic near (the default) and full, side by side, and the CPU seconds of
# each run (README "Mirror traffic"). Writes markdown to stdout.
# Usage: scripts/mirror_traffic_check.sh [MESHSIM_BINARY] > results/mirror_traffic.md
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/meshsim}
step() {  # experiment, mirror mode -> "step_time_s cpu_s"
  local out times
  out=$(mktemp)
  times=$(mktemp)
  /usr/bin/time -o "$times" -f "%U" "$bin" run "$1" --set "cluster.mirror_traffic=$2" \
    --summary "$out" --no-trace --reproducible -q >/dev/null 2>&1 || true
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(repr(d["step_time_s"]), d["sim"]["replayed_ranks"] < d["gpus"])' "$out" | tr '\n' ' '
  tail -1 "$times"
  rm -f "$out" "$times"
}
echo "# cluster.mirror_traffic: near against full"
echo
echo "Written by \`scripts/mirror_traffic_check.sh\` ($(date -u +%Y-%m-%d), load average"
echo "$(cut -d' ' -f1-3 /proc/loadavg) at the start). Experiments that replay every rank (expert"
echo "parallelism, MoE skew, what-ifs) have no mirrors and are left out. CPU: user seconds."
echo
echo "| experiment | step s, near | step s, full | difference | CPU s near | CPU s full |"
echo "|---|---|---|---|---|---|"
for f in workloads/experiments/*.yaml; do
  # MoE skew and what-ifs replay every rank: skipped without running (and any other
  # experiment that turns out to replay every rank, after one run). Expert parallelism,
  # which replayed every rank when results/mirror_traffic.md was written, is checked by
  # scripts/expert_symmetry_check.sh.
  grep -qE '^\s*(ep:\s*([2-9]|[1-9][0-9]+)|moe_skew:|what_if:)' "$f" && continue
  read -r near symmetric cpu_near <<<"$(step "$f" near)"
  [[ $symmetric == True ]] || continue
  read -r full _ cpu_full <<<"$(step "$f" full)"
  diff=$(python3 -c "a,b=$near,$full; print('same bits' if a==b else '%+.4f %%' % ((a-b)/b*100))")
  echo "| $(basename "$f" .yaml) | $near | $full | $diff | $cpu_near | $cpu_full |"
done

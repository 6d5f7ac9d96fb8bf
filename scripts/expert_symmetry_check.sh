#!/usr/bin/env bash
# Symmetric replay against --full-replay on the bundled expert-parallel experiments
# (README "Symmetry"): step time and bytes per link class on both networks, and the wall
# seconds of each run. Writes markdown to stdout. The validation's large rows (LARGE_RUNS,
# scripts/validation_data.py), whose full replays take minutes each, run with a global
# batch of 2 x pp micro-batches per pipeline instead of theirs.
# Usage: scripts/expert_symmetry_check.sh [MESHSIM_BINARY] > results/expert_symmetry.md
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/meshsim}
large=$(python3 -c 'import sys; sys.path.insert(0, "scripts")
import validation_data as v; print(" ".join(sorted(v.LARGE_RUNS)))')
# run experiment network_model "extra arguments" -> "step_s replayed class_bytes... wall_s"
run() {
  local out start
  out=$(mktemp)
  start=$(date +%s.%N)
  # shellcheck disable=SC2086  # $3: extra arguments, split on purpose
  "$bin" run "$1" --set "cluster.network_model=$2" $3 --summary "$out" --no-trace \
    --reproducible -q >/dev/null 2>&1 || true
  python3 - "$out" "$start" "$(date +%s.%N)" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
links = ";".join("%s %.6g" % (l["name"].split(" (")[0], l["bytes"])
                 for l in d["links"] if "->" not in l["name"])
print(repr(d["step_time_s"]), d["sim"]["replayed_ranks"], links.replace(" ", "_"),
      "%.1f" % (float(sys.argv[3]) - float(sys.argv[2])))
EOF
  rm -f "$out"
}
echo "# Expert parallelism: symmetric replay against full replay"
echo
echo "Written by \`scripts/expert_symmetry_check.sh\` ($(date -u +%Y-%m-%d), load average"
echo "$(cut -d' ' -f1-3 /proc/loadavg) at the start). Every bundled experiment with ep > 1; the"
echo "validation's large rows with a global batch of 2 x pp micro-batches per pipeline (named"
echo "with it). Bytes per link class as the summary's \`links\` give them (6 significant"
echo "digits), \"same\" when both replays give the same. Wall: seconds on a shared machine."
echo
echo "| experiment | network | step s, symmetric | step s, full | difference | link bytes | replayed | wall sym | wall full |"
echo "|---|---|---|---|---|---|---|---|---|"
for f in workloads/experiments/*.yaml; do
  grep -qE '^\s*ep:\s*([2-9]|[1-9][0-9]+)' "$f" || continue
  name=$(basename "$f" .yaml)
  extra=""
  if [[ " $large " == *" $name "* ]]; then
    degree() { grep -oE "^\s*$1:\s*[0-9]+" "$f" | grep -oE '[0-9]+$'; }
    batch=$(($(degree dp) * $(degree pp) * $(degree micro_batch) * 2))
    extra="--set plan.global_batch=$batch"
    name="$name (global batch $batch)"
  fi
  for net in alpha_beta flow; do
    read -r sym ranks links_sym wall_sym <<<"$(run "$f" "$net" "$extra")"
    read -r full _ links_full wall_full <<<"$(run "$f" "$net" "$extra --full-replay")"
    diff=$(python3 -c "a,b=$sym,$full; print('same bits' if a==b else '%+.4f %%' % ((a-b)/b*100))")
    links=$([[ $links_sym == "$links_full" ]] && echo same || echo "${links_sym} vs ${links_full}")
    echo "| $name | $net | $sym | $full | $diff | ${links//_/ } | $ranks | $wall_sym | $wall_full |"
  done
done

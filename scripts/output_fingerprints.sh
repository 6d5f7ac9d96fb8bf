#!/usr/bin/env bash
# Fingerprints of everything meshsim writes for the bundled inputs, to check that a
# refactoring changes no output: every bundled experiment's summary.json (--reproducible),
# trace and human summary; every bundled sweep's results.csv, pareto.csv, sweep.json and
# explorer page (the 530B spaces on alpha-beta as bundled); the planner's table, CSV and
# explorer; an import of each kind. One line per file: its sha256 and a name.
#
# Usage: scripts/output_fingerprints.sh MESHSIM_BINARY OUT.txt
#   then: diff before.txt after.txt   (no output: byte-identical)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "$1")
out=$(realpath -m "$2")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
: > "$out"
add() { (cd "$work" && echo "$(sha256sum < "$1" | cut -d' ' -f1) $2") >> "$out"; }

for e in workloads/experiments/*.yaml; do
  n=$(basename "$e" .yaml)
  set +e
  "$bin" run "$e" --reproducible -o "$work/run-$n" > "$work/run-$n.txt" 2>/dev/null
  code=$?
  set -e
  echo "exit $code" >> "$work/run-$n.txt"
  sed -i '/^  simulated /d; /^trace: /d' "$work/run-$n.txt"  # host timings and paths
  add "run-$n.txt" "run/$n/stdout"
  add "run-$n/summary.json" "run/$n/summary.json"
  add "run-$n/trace.json" "run/$n/trace.json"
done

for s in workloads/sweeps/*.yaml; do
  n=$(basename "$s" .yaml)
  "$bin" sweep "$s" -o "$work/sweep-$n" -j "$(nproc)" -q --html "$work/sweep-$n/explorer.html" \
    > /dev/null
  for f in results.csv pareto.csv sweep.json explorer.html; do add "sweep-$n/$f" "sweep/$n/$f"; done
done

set +e
"$bin" plan --model workloads/models/llama2-70b.yaml --cluster topologies/dgx-h100.yaml \
  --gpus 64 --budget-gib 64 --top 0 --html "$work/plan.html" --csv "$work/plan.csv" \
  > "$work/plan.txt"
"$bin" plan --model workloads/models/llama2-70b.yaml --cluster topologies/dgx-h100.yaml \
  --gpus 1 --budget-gib 64 > "$work/plan1.txt"
set -e
sed -i "s|$work|WORK|g" "$work/plan.txt"
for f in plan.txt plan1.txt plan.csv plan.html; do add "$f" "plan/$f"; done

"$bin" import hf tests/fixtures/hf/llama3-70b.json > "$work/hf.yaml" 2>/dev/null
"$bin" import megatron "--num-layers 96 --hidden-size 12288 --num-attention-heads 96 \
  --seq-length 2048 --tensor-model-parallel-size 8 --pipeline-model-parallel-size 8 \
  --micro-batch-size 1 --global-batch-size 64 --sequence-parallel --recompute-activations \
  --fp16 --world-size 64" --cluster topologies/selene-a100.yaml > "$work/megatron.yaml" 2>/dev/null
sed -i 's|^cluster: .*|cluster: (path)|' "$work/megatron.yaml"
add hf.yaml import/hf.yaml
add megatron.yaml import/megatron.yaml
echo "$(wc -l < "$out") fingerprints in $out"

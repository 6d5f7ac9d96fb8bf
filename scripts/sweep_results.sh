#!/usr/bin/env bash
# Regenerates what results/ keeps of the bundled sweeps and the planner (PyTorch-style and,
# with --jax, JAX-style plans): for each sweep
# its results.csv, pareto.csv, explorer page and plots (results/sweeps/<name>/), and the
# planner's explorer for Llama-2 70B on 64 H100s with a screenshot, its table for
# Mixtral 8x7B on 64 H100s (a MoE model: expert parallelism varied too)
# (results/plan_explorer.png, taken with headless Chromium).
# Usage: scripts/sweep_results.sh [BUILD_DIR]   (default build; meshsim must be built)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
meshsim=$build/meshsim
[[ -x $meshsim ]] || { echo "sweep_results.sh: build meshsim first (scripts/build.sh)" >&2; exit 1; }
python=/usr/bin/python3  # Debian's, with python3-matplotlib
chromium=$(command -v chromium || command -v chromium-browser || true)

for name in llama2-70b-64-h100 gpt3-175b-1024-a100 llama2-7b-16-h100-jax; do
  out=results/sweeps/$name
  mkdir -p "$out"
  "$meshsim" sweep "workloads/sweeps/$name.yaml" -o "$out" -j "$(nproc)" -q \
    --html "$out/explorer.html" > "$out/summary.txt" || { cat "$out/summary.txt"; exit 1; }
  "$python" scripts/plot_sweep.py "$out/results.csv" -o "$out" --name "$name"
done

"$meshsim" plan --model workloads/models/llama2-70b.yaml --cluster topologies/dgx-h100.yaml \
  --gpus 64 --budget-gib 64 --top 0 --html results/plan_explorer.html > results/plan_llama2-70b-64.txt
"$meshsim" plan --model workloads/models/llama2-70b.yaml --cluster topologies/dgx-h100.yaml \
  --gpus 1 --budget-gib 64 > results/plan_llama2-70b-1.txt || true   # exit 3: nothing fits
"$meshsim" plan --model workloads/models/llama2-70b.yaml --cluster topologies/dgx-h100.yaml \
  --gpus 64 --budget-gib 64 --top 20 --jax > results/plan_llama2-70b-64-jax.txt
# A MoE model: the planner varies expert parallelism too (README "meshsim plan").
"$meshsim" plan --model workloads/models/mixtral-8x7b.yaml --cluster topologies/dgx-h100.yaml \
  --gpus 64 --top 20 > results/plan_mixtral-8x7b-64.txt
if [[ -n $chromium ]]; then
  profile=$(mktemp -d)
  "$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$profile" \
    --window-size=1300,1000 --screenshot=results/plan_explorer.png \
    "file://$PWD/results/plan_explorer.html#tp=8&pp=4&dp=2&zero=1&mb=1" 2>/dev/null
  rm -rf "$profile"
else
  echo "sweep_results.sh: chromium not found; no screenshot (bash scripts/setup.sh installs it)" >&2
fi
ls -l results/sweeps/*/ results/plan_explorer.*

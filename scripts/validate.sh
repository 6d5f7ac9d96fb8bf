#!/usr/bin/env bash
# Regenerates results/calibration.json and results/validation.md from the calibration set
# of shared/validation: the calibration grid with its leave-one-out folds
# (scripts/calibrate.py, a few minutes on 2 cores), the same for the other kernel model
# (results/calibration-<model>.json, for the comparison), then the validation tables.
# It does not change the topology: `scripts/calibrate.py --write` does, first.
# Usage: scripts/validate.sh [BUILD_DIR]   (builds meshsim there first; default build)
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build}
[ -x "$build_dir/meshsim" ] || bash scripts/build.sh "$build_dir" -DMESHSIM_BUILD_TESTS=OFF -DMESHSIM_BUILD_BENCH=OFF
python3 scripts/calibrate.py --meshsim "$build_dir/meshsim" --jobs "$(nproc)" \
  --json results/calibration.json
# The other kernel model, fitted the same way, for the comparison section.
committed=$(python3 -c 'import json; print(json.load(open("results/calibration.json"))["kernel_model"])')
other=roofline; [ "$committed" = roofline ] && other=shapes
python3 scripts/calibrate.py --meshsim "$build_dir/meshsim" --jobs "$(nproc)" \
  --set "cluster.efficiency.kernel_model=$other" --json "results/calibration-$other.json" > /dev/null
python3 scripts/validate.py --meshsim "$build_dir/meshsim" --calibration results/calibration.json \
  --compare "results/calibration-$other.json" --out results/validation.md

#!/usr/bin/env bash
# Regenerates results/calibration.json and results/validation.md from the calibration set
# of shared/validation: the calibration grid with its leave-one-out folds
# (scripts/calibrate.py, a few minutes on 2 cores), then the validation tables.
# Usage: scripts/validate.sh [BUILD_DIR]   (builds meshsim there first; default build)
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build}
[ -x "$build_dir/meshsim" ] || bash scripts/build.sh "$build_dir" -DMESHSIM_BUILD_TESTS=OFF -DMESHSIM_BUILD_BENCH=OFF
python3 scripts/calibrate.py --meshsim "$build_dir/meshsim" --jobs "$(nproc)" \
  --json results/calibration.json
python3 scripts/validate.py --meshsim "$build_dir/meshsim" --calibration results/calibration.json \
  --out results/validation.md

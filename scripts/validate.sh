#!/usr/bin/env bash
# Regenerates results/validation.md from the calibration set of shared/validation.
# Usage: scripts/validate.sh [BUILD_DIR]   (builds meshsim there first; default build)
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build}
[ -x "$build_dir/meshsim" ] || bash scripts/build.sh "$build_dir" -DMESHSIM_BUILD_TESTS=OFF -DMESHSIM_BUILD_BENCH=OFF
python3 scripts/validate.py --meshsim "$build_dir/meshsim" --out results/validation.md

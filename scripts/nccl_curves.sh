#!/usr/bin/env bash
# Regenerates results/nccl.md and results/nccl.png: meshsim bench-collective against the
# public nccl-tests curves listed in scripts/nccl_curves.py (a few seconds).
# Usage: scripts/nccl_curves.sh [BUILD_DIR]   (builds meshsim there first; default build)
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build}
[ -x "$build_dir/meshsim" ] || bash scripts/build.sh "$build_dir" -DMESHSIM_BUILD_TESTS=OFF -DMESHSIM_BUILD_BENCH=OFF
# Debian's matplotlib (python3-matplotlib, scripts/setup.sh) is in the system Python.
/usr/bin/python3 scripts/nccl_curves.py --meshsim "$build_dir/meshsim" --out results/nccl.md

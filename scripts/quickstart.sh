#!/usr/bin/env bash
# One command from a fresh Debian 12 machine to a simulated training step: installs the
# Debian packages, builds, and runs the bundled default experiment (summary on stdout,
# summary.json and trace.json under results/runs/default/).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh build -DMESHSIM_BUILD_TESTS=OFF -DMESHSIM_BUILD_BENCH=OFF
./build/meshsim run workloads/experiments/default.yaml

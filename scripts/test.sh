#!/usr/bin/env bash
# One command from a fresh Debian 12 machine to a passing test suite: installs the Debian
# packages, builds everything (library, CLI, tests, benchmarks) with optimisation, and
# runs all tests under CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh build-test -DMESHSIM_BUILD_TESTS=ON -DMESHSIM_BUILD_BENCH=ON
cd build-test
ctest --output-on-failure -j "$(nproc)"

#!/usr/bin/env bash
# One command from a fresh Debian 12 machine to a passing test suite: installs the Debian
# packages, builds everything (library, CLI, Python module, tests, benchmarks) with
# optimisation, runs all tests under CTest, then the Python API's tests with pytest
# (Debian's /usr/bin/python3, the module of build-test/python).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh build-test -DMESHSIM_BUILD_TESTS=ON -DMESHSIM_BUILD_BENCH=ON
(cd build-test && ctest --output-on-failure -j "$(nproc)")
PYTHONPATH=build-test/python /usr/bin/python3 -m pytest -q tests/python

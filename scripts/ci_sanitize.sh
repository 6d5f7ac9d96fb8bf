#!/usr/bin/env bash
# CI's sanitizer stage (run by .ci/run after scripts/test.sh): builds build-asan (clang,
# AddressSanitizer + UndefinedBehaviorSanitizer, asserts on, -O1), runs the unit tests
# there once, then every fuzz target for FUZZ_RUNS inputs (default 20000) from its seeds, seeded.
# Fails on any sanitizer report, failed assert or test, or fuzz finding.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${FUZZ_RUNS:-20000}
start=$SECONDS

# Configures build-asan and builds the fuzz targets (the same folder as scripts/fuzz.sh).
bash scripts/fuzz.sh --build-only
cmake --build build-asan -j "$(nproc)" --target meshsim_unit_tests
echo "ci_sanitize.sh: built in $((SECONDS - start)) s"

# Leak checking stays on (ASan's default on Linux); UB already aborts (-fno-sanitize-recover).
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_stack_use_after_return=1:strict_string_checks=1} \
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1} \
  build-asan/tests/meshsim_unit_tests --gtest_brief=1
echo "ci_sanitize.sh: unit tests passed under ASan+UBSan at $((SECONDS - start)) s"

# A fresh corpus, a fixed seed and a fixed number of inputs: CI tries the same inputs on
# every run, which `bash scripts/fuzz.sh -n 20000 -s 1` tries on any machine first (about a
# minute per target on CI's 2 cores; exploration with random seeds and time limits:
# scripts/fuzz.sh -t SECONDS, results/fuzz.md).
rm -rf build-asan/fuzz-corpus build-asan/fuzz-artifacts build-asan/fuzz-logs
bash scripts/fuzz.sh -n "$runs" -j "$(nproc)" -s 1
echo "ci_sanitize.sh: done in $((SECONDS - start)) s"

#!/usr/bin/env bash
# Regenerates results/calibration*.json and results/validation.md from the data sets of
# shared/validation (scripts/validation_data.py): per data set (GPU kind and precision) the
# calibration grid with its leave-one-out folds (scripts/calibrate.py --dataset KEY), the
# A100 grid again with the other kernel model (results/calibration-<model>.json, for the
# comparison), then the validation tables (scripts/validate.py). About an hour on 2 busy
# cores (the A100 grids, and the H100 weak-scaling rows simulate up to 6,144 GPUs).
# It does not change the topologies: `scripts/calibrate.py --dataset KEY --write` does, first.
# Usage: scripts/validate.sh [BUILD_DIR]   (builds meshsim there first; default build)
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build}
[ -x "$build_dir/meshsim" ] || bash scripts/build.sh "$build_dir" -DMESHSIM_BUILD_TESTS=OFF -DMESHSIM_BUILD_BENCH=OFF
jobs=${JOBS:-$(nproc)}
python3 scripts/calibrate.py --dataset a100-korthikanti --meshsim "$build_dir/meshsim" \
  --jobs "$jobs" --json results/calibration.json
# The other kernel model, fitted the same way on the A100 runs, for the comparison section.
committed=$(python3 -c 'import json; print(json.load(open("results/calibration.json"))["kernel_model"])')
other=roofline; [ "$committed" = roofline ] && other=shapes
python3 scripts/calibrate.py --dataset a100-korthikanti --meshsim "$build_dir/meshsim" \
  --jobs "$jobs" --set "cluster.efficiency.kernel_model=$other" \
  --json "results/calibration-$other.json" > /dev/null
# The other data sets with a grid (scripts/validation_data.py), in its order: a GPU's FP8 set
# before the BF16 set that reuses its kernel overhead.
for key in $(python3 -c 'import sys; sys.path.insert(0, "scripts")
from validation_data import DATASETS
print(" ".join(k for k, d in DATASETS.items() if d.grids and k != "a100-korthikanti"))'); do
  json=$(python3 -c "import sys; sys.path.insert(0, 'scripts')
from validation_data import DATASETS; print(DATASETS['$key'].json)")
  python3 scripts/calibrate.py --dataset "$key" --meshsim "$build_dir/meshsim" \
    --jobs "$jobs" --json "$json"
done
python3 scripts/validate.py --meshsim "$build_dir/meshsim" --calibration results/calibration.json \
  --compare "results/calibration-$other.json" --out results/validation.md

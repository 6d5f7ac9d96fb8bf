"""results/ stays true: every calibration file (results/calibration*.json, written by
scripts/calibrate.py and scripts/validation_maxtext.py calibrate) records each run's step
time at every grid point; at the fitted point the current meshsim must give exactly those
times. A change that moves a fitted row fails here until its data set is refitted
(scripts/validate.sh, or the calibrate command in the file's data set) and the reports
regenerated, rather than leaving results/validation*.md quietly stale (as the TPU files were
from 2026-12-01 to 2026-12-03). The first RUNS runs of each file are checked (about 25 s in
all on this VM; the largest TPU rows take a minute each); a change that moves any row
usually moves several."""
import json

import pytest

from conftest import ROOT

CALIBRATIONS = sorted((ROOT / "results").glob("calibration*.json"))
RUNS = 8


def test_there_are_calibration_files():
    assert len(CALIBRATIONS) >= 7


@pytest.mark.parametrize("path", CALIBRATIONS, ids=lambda p: p.name)
def test_fitted_point_reproduces(cli, path):
    cal = json.loads(path.read_text())
    fit = cal["fit"]
    point = next(p for p in cal["points"] if p["matmul"] == fit["matmul"]
                 and p["kernel_overhead_us"] == fit["kernel_overhead_us"])
    sets = list(cal["sets"]) + [
        f"cluster.efficiency.{cal.get('matmul_key', 'matmul')}={fit['matmul']}",
        f"cluster.efficiency.kernel_overhead_us={fit['kernel_overhead_us']}"]
    stale = []
    for run, recorded in list(zip(cal["runs"], point["step_time_s"]))[:RUNS]:
        args = ["run", f"workloads/experiments/{run['run']}.yaml", "--no-trace", "--summary", "-",
                "-q", "--reproducible"]
        for s in sets:
            args += ["--set", s]
        proc = cli(*args)
        assert proc.returncode in (0, 3), proc.stderr
        now = json.loads(proc.stdout)["step_time_s"]
        if abs(now - recorded) > 1e-9 * recorded:
            stale.append(f"{run['run']}: {recorded} s recorded, {now} s now")
    assert not stale, f"{path.name} is stale (refit its data set): " + "; ".join(stale)

"""meshsim.sweep, pareto and rank: the CLI's results.csv columns and values, whatever the
number of threads."""
import csv
import math

import pytest

import meshsim
from conftest import ROOT

# A small sweep (Llama-2 7B on 16 GPUs, 2 x 3 x 2 groups, pp auto): a few seconds.
SMALL_AXES = {"plan.tp": [1, 2], "plan.pp": "auto", "plan.zero": [0, 1, 3],
              "plan.recompute": ["selective", "full"]}
SMALL_SWEEP = {
    "name": "api-small",
    "base": "workloads/experiments/default.yaml",
    "axes": SMALL_AXES,
}


def read_csv(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    return rows[0], rows[1:]


def same(value, cell):
    """Whether a typed API value is the text results.csv holds."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return cell == ""
    if isinstance(value, bool):
        return cell == ("true" if value else "false")
    if isinstance(value, (int, float)):
        return cell != "" and float(cell) == value
    return cell == value


@pytest.fixture(scope="module")
def small_cli(cli, tmp_path_factory):
    out = tmp_path_factory.mktemp("sweep")
    sweep_file = out / "api-small.yaml"
    sweep_file.write_text(
        f"name: api-small\nbase: {ROOT / 'workloads/experiments/default.yaml'}\naxes:\n"
        "  plan.tp: [1, 2]\n  plan.pp: auto\n  plan.zero: [0, 1, 3]\n"
        "  plan.recompute: [selective, full]\n")
    cli("sweep", sweep_file, "-o", out / "out", "-j", 2, "-q")
    return out / "out"


def test_rows_have_the_csv_columns_and_values(small_cli):
    header, cells = read_csv(small_cli / "results.csv")
    rows = meshsim.sweep(SMALL_SWEEP, threads=2, as_frame=False)
    assert len(rows) == len(cells) > 0
    for row, line in zip(rows, cells):
        assert list(row) == header
        for column, cell in zip(header, line):
            assert same(row[column], cell), (column, row[column], cell)
    assert header == meshsim.result_columns()  # plan.recompute is a plan column


def test_dataframe_has_the_csv_columns(small_cli):
    header, cells = read_csv(small_cli / "results.csv")
    df = meshsim.sweep(SMALL_SWEEP, threads=2)
    assert list(df.columns) == header
    assert len(df) == len(cells)
    ok = df[df["status"] == "ok"]
    assert len(ok) > 0 and ok["step_time_s"].dtype == float
    assert df["plan.tp"].dtype.kind == "i"


def test_experiment_and_axes_equal_the_sweep_file(small_cli):
    e = meshsim.load_experiment("workloads/experiments/default.yaml")
    a = meshsim.sweep(e, axes=SMALL_AXES, name="api-small", threads=2, as_frame=False)
    b = meshsim.sweep(SMALL_SWEEP, threads=2, as_frame=False)
    assert a == b


def test_threads_give_identical_rows():
    one = meshsim.sweep(SMALL_SWEEP, threads=1, as_frame=False)
    two = meshsim.sweep(SMALL_SWEEP, threads=2, as_frame=False)
    four = meshsim.sweep(SMALL_SWEEP, threads=4, as_frame=False)
    assert one == two == four


def test_pareto_equals_the_cli(small_cli):
    header, cells = read_csv(small_cli / "pareto.csv")
    for rows in (meshsim.sweep(SMALL_SWEEP, threads=2, as_frame=False),
                 meshsim.sweep(SMALL_SWEEP, threads=2)):
        front = meshsim.pareto(rows)
        configs = list(front["config"]) if hasattr(front, "columns") else [r["config"] for r in front]
        assert configs == [int(line[header.index("config")]) for line in cells]
    ranked = meshsim.rank(meshsim.sweep(SMALL_SWEEP, threads=2, as_frame=False))
    times = [r["step_time_s"] for r in ranked]
    assert times == sorted(times) and all(r["status"] == "ok" for r in ranked)


def test_overrides_apply_to_the_base():
    rows = meshsim.sweep("workloads/experiments/default.yaml", axes={"plan.zero": [0, 3]},
                         overrides={"plan.tp": 4, "plan.dp": 2}, as_frame=False)
    assert [(r["plan.tp"], r["plan.dp"], r["plan.zero"]) for r in rows] == [(4, 2, 0), (4, 2, 3)]


def test_axis_error_names_the_axis():
    with pytest.raises(meshsim.InputError) as info:
        meshsim.sweep("workloads/experiments/default.yaml", axes={"plan.tp": ["two"]})
    assert info.value.key == "axes.plan.tp"
    assert (info.value.file, info.value.line) == ("<sweep>", 0)
    with pytest.raises(meshsim.InputError) as info:
        meshsim.sweep("workloads/experiments/default.yaml", axes={"plan.layers": "auto"})
    assert info.value.key == "axes.plan.layers"

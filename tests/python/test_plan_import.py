"""meshsim.plan and meshsim.import_hf against `meshsim plan` and `meshsim import hf`."""
import csv
import json
import math
import re

import pytest

import meshsim
from conftest import ROOT
from test_sweep import same

PLAN = ("workloads/models/llama2-7b.yaml", 16, "topologies/dgx-h100.yaml")


def cli_plan(cli, tmp_path, *extra):
    done = cli("plan", "--model", PLAN[0], "--gpus", PLAN[1], "--cluster", PLAN[2],
               "--budget-gib", 40, "--top", 0, "-j", 2, "--csv", tmp_path / "plan.csv", *extra)
    # The table's rows: "  1   1   1   16    3  [....": #, tp, pp, dp, zero.
    order = [tuple(map(int, m.groups())) for m in
             re.finditer(r"^\s*\d+\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+\[", done.stdout, re.M)]
    with open(tmp_path / "plan.csv", newline="") as f:
        rows = list(csv.reader(f))
    return order, rows[0], rows[1:]


def test_plan_equals_the_cli(cli, tmp_path):
    order, header, cells = cli_plan(cli, tmp_path)
    verdicts = meshsim.plan(*PLAN, budget_gib=40, threads=2, as_frame=False, include_invalid=True)
    valid = [r for r in verdicts if r["status"] != "invalid"]
    # The CLI's table order, plan for plan.
    assert [(r["plan.tp"], r["plan.pp"], r["plan.dp"], r["plan.zero"]) for r in valid] == order
    assert_rows_equal_csv(verdicts, header, cells)


def assert_rows_equal_csv(verdicts, header, cells):
    """Every row (invalid ones included) equals the --csv row of its configuration."""
    assert sorted(r["config"] for r in verdicts) == [int(c[0]) for c in cells]
    by_config = {int(c[0]): c for c in cells}
    for row in verdicts:
        assert list(row) == header
        for column, cell in zip(header, by_config[row["config"]]):
            assert same(row[column], cell), (row["config"], column, row[column], cell)


def test_jax_plan_equals_the_cli(cli, tmp_path):
    _, header, cells = cli_plan(cli, tmp_path, "--jax")
    verdicts = meshsim.plan(*PLAN, budget_gib=40, jax=True, threads=2, as_frame=False,
                            include_invalid=True)
    assert_rows_equal_csv(verdicts, header, cells)
    # JAX-style rows: each has its mesh sizes, ICI x DCN = 16 chips; the fitting ones come
    # fastest first.
    for r in verdicts:
        sizes = [r[f"plan.mesh.{net}.{axis}"] for net in ("ici", "dcn")
                 for axis in ("stage", "data", "tensor")]
        assert math.prod(int(x) for x in sizes) == 16, r["config"]
    ok = [r["step_time_s"] for r in verdicts if r["status"] == "ok"]
    assert ok and ok == sorted(ok)
    with pytest.raises(meshsim.InputError) as info:
        meshsim.plan(*PLAN, jax=True, overrides={"plan.rules.batch": "[tensor]"})
    assert info.value.key.startswith("plan.rules")


def test_plan_takes_a_model_dict_and_overrides(cli, tmp_path):
    model = meshsim.import_hf(ROOT / "tests/fixtures/hf/llama2-7b.json")
    a = meshsim.plan(model, 16, PLAN[2], budget_gib=40, threads=2, as_frame=False,
                     overrides={"model.seq_len": 2048})
    b = meshsim.plan(model.to_dict() | {"seq_len": 2048}, 16, PLAN[2], budget_gib=40, threads=2,
                     as_frame=False)
    assert a == b and len(a) > 0
    with pytest.raises(meshsim.InputError) as info:
        meshsim.plan(*PLAN, overrides={"plan.tp": 2})
    assert info.value.key == "plan.tp"


def test_import_hf_equals_the_cli(cli, tmp_path):
    config = ROOT / "tests/fixtures/hf/mixtral-8x7b.json"
    cli("import", "hf", config, "-o", tmp_path / "cli.yaml", "-q")
    model = meshsim.import_hf(config)
    cli_lines = (tmp_path / "cli.yaml").read_text().splitlines()
    api_lines = model.yaml.splitlines()
    # The header names the command that wrote the file; the rest is identical.
    assert [l for l in api_lines if "meshsim" not in l] == [l for l in cli_lines if "meshsim" not in l]
    assert model.params_total > model.params_active > 0
    assert model.to_dict()["experts"] == 8 and model.name == "mixtral-8x7b"  # the file stem
    from_dict = meshsim.import_hf(json.loads(config.read_text()), name="mixtral-8x7b")
    assert meshsim.import_hf(json.loads(config.read_text())).name == "mixtral"  # model_type
    assert from_dict.to_dict() == model.to_dict()


def test_import_hf_errors_name_the_field():
    config = json.loads((ROOT / "tests/fixtures/hf/llama2-7b.json").read_text())
    config["num_attention_heads"] = "many"
    with pytest.raises(meshsim.InputError) as info:
        meshsim.import_hf(config)
    assert info.value.key == "num_attention_heads" and info.value.file == "<dict>"
    with pytest.raises(meshsim.InputError) as info:
        meshsim.import_hf("no/such/config.json")
    assert info.value.file == "no/such/config.json"


def test_model_in_an_experiment_dict():
    model = meshsim.import_hf(ROOT / "tests/fixtures/hf/llama2-7b.json", seq_len=4096)
    e = {"name": "hf", "model": model, "cluster": "topologies/dgx-h100.yaml",
         "cluster_overrides": {"nodes": 1}, "plan": {"tp": 8, "global_batch": 8}}
    s = meshsim.run(e)
    assert s.gpus == 8 and s.params_total == pytest.approx(model.params_total)

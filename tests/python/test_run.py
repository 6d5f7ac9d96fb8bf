"""meshsim.load_experiment and meshsim.run: the same numbers as `meshsim run`, the same
errors as the YAML loader, and simulations that run in parallel threads."""
import gzip
import json
import pickle
import threading
import time

import pytest

import meshsim
from conftest import ROOT, cli_summary

# The bundled experiments, each compared with the CLI key for key, but the slow ones: the
# speed benchmark (gpt-1t-3072: 3,072 GPUs), the Korthikanti 530B/1T and 128k-context runs
# (4-13 s a run on a busy 2-core machine), and the public validation rows (public-*.yaml:
# up to two minutes a run, the MoE rows on GB200/B200), which scripts/validate.sh runs;
# of those, one small row per GPU kind stands for the family here.
SLOW = {"gpt-1t-3072.yaml", "llama3-405b-128k-cp16.yaml"} | {
    f"korthikanti-{s}.yaml" for s in ("530b-selective", "530b-full", "1t-selective", "1t-full")}
PUBLIC_SAMPLE = {"public-h100-megatron-1.7b.yaml", "public-b200-bridge-llama3-8b-cs.yaml",
                 "public-gb200-bridge-llama3-8b-mx.yaml", "public-h100-nemo-llama2-7b.yaml"}
EXPERIMENTS = sorted(p.name for p in (ROOT / "workloads/experiments").glob("*.yaml")
                     if p.name not in SLOW
                     and (not p.name.startswith("public-") or p.name in PUBLIC_SAMPLE))


def test_the_public_sample_is_bundled():
    for name in PUBLIC_SAMPLE | SLOW:
        assert (ROOT / "workloads/experiments" / name).exists(), name


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_run_equals_cli(cli, name):
    path = f"workloads/experiments/{name}"
    api = meshsim.run(path, reproducible=True)
    assert api.to_dict() == cli_summary(cli, path)


def test_summary_attributes_are_typed_and_match_to_dict():
    s = meshsim.run("workloads/experiments/default.yaml", reproducible=True)
    d = s.to_dict()
    assert isinstance(s.step_time_s, float) and s.step_time_s == d["step_time_s"]
    assert isinstance(s.gpus, int) and not isinstance(s.gpus, bool) and s.gpus == 16
    assert isinstance(s.fits, bool) and s.fits == d["fits"]
    assert isinstance(s.name, str) and s.name == d["name"]
    assert s.memory_breakdown_gib.activations == d["memory_breakdown_gib"]["activations"]
    assert s.time_breakdown_s.bubble == d["time_breakdown_s"]["bubble"]
    assert isinstance(s.sim.events, int) and s.sim.events == d["sim"]["events"]
    assert s.sim.wall_s == 0  # reproducible
    assert len(s.devices) == 16 and s.devices == d["devices"]
    assert s.links == d["links"] and s.rerouted is None
    # Every scalar of summary.json, dotted, and nothing else.
    flat = {}
    for k, v in d.items():
        if isinstance(v, dict):
            flat.update({f"{k}.{f}": x for f, x in v.items()})
        elif not isinstance(v, list):
            flat[k] = v
    assert s.scalars() == flat


def test_overrides_equal_cli_set(cli):
    path = "workloads/experiments/default.yaml"
    api = meshsim.run(path, overrides={"plan.tp": 4, "plan.dp": 1, "plan.zero": 3},
                      reproducible=True)
    assert api.to_dict() == cli_summary(cli, path, "plan.tp=4", "plan.dp=1", "plan.zero=3")
    e = meshsim.load_experiment(path, {"plan.tp": 4, "plan.dp": 1})
    assert e.plan["plan.tp"] == 4 and e.plan["plan.dp"] == 1 and e.gpus == 16
    assert e.with_overrides({"plan.zero": 3}).plan["plan.zero"] == 3
    assert meshsim.run(e.with_overrides({"plan.zero": 3}), reproducible=True).to_dict() == api.to_dict()
    again = pickle.loads(pickle.dumps(e))  # as its source and overrides
    assert again.plan == e.plan and again.overrides == {"plan.tp": "4", "plan.dp": "1"}


def test_dict_experiment_equals_file(cli):
    d = {
        "name": "default",
        "model": "workloads/models/llama2-7b.yaml",
        "cluster": "topologies/dgx-h100.yaml",
        "cluster_overrides": {"nodes": 2},
        "plan": {"tp": 2, "pp": 2, "dp": 4, "global_batch": 32},
    }
    api = meshsim.run(d, reproducible=True)
    # The same experiment through the CLI: the file's keys overridden to these values.
    cli_json = cli_summary(cli, "workloads/experiments/default.yaml",
                           "model=../models/llama2-7b.yaml", "cluster=../../topologies/dgx-h100.yaml",
                           "cluster_overrides={nodes: 2}", "plan={tp: 2, pp: 2, dp: 4, global_batch: 32}")
    assert api.to_dict() == cli_json


def test_file_error_carries_file_line_column_and_key(tmp_path, cli):
    bad = tmp_path / "bad.yaml"
    text = (ROOT / "workloads/experiments/default.yaml").read_text()
    text = text.replace("../", str(ROOT / "workloads/experiments") + "/../", 2)
    text = text.replace("tp: ", "tp: eight #", 1)
    bad.write_text(text)
    with pytest.raises(meshsim.InputError) as info:
        meshsim.load_experiment(bad)
    e = info.value
    assert e.file == str(bad) and e.key == "plan.tp"
    assert e.line > 0 and e.column > 0
    lines = text.splitlines()
    assert "tp:" in lines[e.line - 1]
    # The same one-line message as the CLI's.
    done = cli("validate", bad, check=False)
    assert done.returncode == 2
    assert done.stderr.strip() == f"meshsim: {e}" or done.stderr.strip().endswith(str(e))


def test_dict_error_names_the_key_without_a_line():
    with pytest.raises(meshsim.InputError) as info:
        meshsim.load_experiment({"name": "x", "model": "workloads/models/llama2-7b.yaml",
                                 "cluster": "topologies/dgx-h100.yaml",
                                 "plan": {"tp": "eight"}})
    e = info.value
    assert (e.file, e.line, e.column, e.key) == ("<dict>", 0, 0, "plan.tp")
    assert str(e).startswith("<dict>: plan.tp: ")
    assert isinstance(e, ValueError)


def test_override_error_names_the_set_argument():
    with pytest.raises(meshsim.InputError) as info:
        meshsim.load_experiment("workloads/experiments/default.yaml", {"plan.tpp": 2})
    assert info.value.key == "plan.tpp"
    assert info.value.file == "--set plan.tpp=2"


def test_bad_plan_is_input_error():
    with pytest.raises(meshsim.InputError) as info:
        meshsim.run("workloads/experiments/default.yaml", overrides={"plan.tp": 3})
    assert info.value.key == "plan" and "24 but the cluster has 16 GPUs" in info.value.message


def test_trace_is_written_like_the_cli(tmp_path, cli):
    path = "workloads/experiments/default.yaml"
    meshsim.run(path, trace=tmp_path / "api.json.gz", reproducible=True)
    cli("run", path, "--trace", tmp_path / "cli.json.gz", "--summary", tmp_path / "s.json",
        "--reproducible", "-q")
    assert gzip.decompress((tmp_path / "api.json.gz").read_bytes()) == \
        gzip.decompress((tmp_path / "cli.json.gz").read_bytes())
    meshsim.run(path, trace=tmp_path / "two.json", trace_ranks=[3, 1, 3])
    pids = {ev["pid"] for ev in json.loads((tmp_path / "two.json").read_text())["traceEvents"]
            if ev.get("ph") == "X"}
    assert pids == {1, 3}
    with pytest.raises(meshsim.InputError) as info:
        meshsim.run(path, trace=tmp_path / "x.json", trace_ranks=[16])
    assert info.value.key == "trace_ranks"


def test_unwritable_trace_is_io_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(meshsim.IoError) as info:
        meshsim.run("workloads/experiments/default.yaml", trace=blocker / "trace.json")
    assert isinstance(info.value, OSError)


def test_threads_run_in_parallel_and_agree():
    """Four runs on four Python threads give the serial run's summary; while they run, the
    main thread keeps running Python (the GIL is released during the simulation)."""
    path = "workloads/experiments/gpt3-175b-selective.yaml"
    start = time.perf_counter()
    expected = meshsim.run(path, reproducible=True).to_dict()
    one_run = time.perf_counter() - start
    results = [None] * 4

    def work(i):
        results[i] = meshsim.run(path, reproducible=True).to_dict()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    longest_pause = 0.0
    last = time.perf_counter()
    for t in threads:
        t.start()
    while any(t.is_alive() for t in threads):
        time.sleep(0.001)
        now = time.perf_counter()
        longest_pause = max(longest_pause, now - last)
        last = now
    for t in threads:
        t.join()
    assert results == [expected] * 4
    # With the GIL held through a run, this loop would stall for at least one whole run
    # (a relative bound: a loaded machine slows both sides alike).
    assert longest_pause < 0.5 * one_run, (longest_pause, one_run)

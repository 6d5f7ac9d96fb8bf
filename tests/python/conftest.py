"""Shared fixtures of the Python API's tests (run by scripts/test.sh:
PYTHONPATH=build-test/python /usr/bin/python3 -m pytest tests/python).

The CLI they compare against is the `meshsim` executable of the same build folder as
the module (build*/meshsim next to build*/python/meshsim), or $MESHSIM_CLI."""
import json
import os
import pathlib
import subprocess

import pytest

import meshsim

ROOT = pathlib.Path(__file__).resolve().parents[2]


def cli_path():
    if os.environ.get("MESHSIM_CLI"):
        return pathlib.Path(os.environ["MESHSIM_CLI"])
    return pathlib.Path(meshsim.__file__).resolve().parents[2] / "meshsim"


@pytest.fixture(scope="session")
def cli():
    """Runs the meshsim CLI from the repository root; returns the CompletedProcess."""
    path = cli_path()
    if not path.exists():
        pytest.fail(f"the meshsim CLI is not at {path} (build it, or set MESHSIM_CLI)")

    def run(*args, check=True):
        done = subprocess.run([str(path), *map(str, args)], cwd=ROOT, capture_output=True,
                              text=True)
        if check and done.returncode not in (0, 3):
            raise AssertionError(f"meshsim {' '.join(map(str, args))}: exit {done.returncode}\n{done.stderr}")
        return done

    return run


@pytest.fixture(autouse=True)
def at_root(monkeypatch):
    """Every test runs in the repository root, as the README's commands do."""
    monkeypatch.chdir(ROOT)


def cli_summary(cli, experiment, *sets):
    args = ["run", experiment, "--summary", "-", "--no-trace", "--reproducible", "-q"]
    for s in sets:
        args += ["--set", s]
    return json.loads(cli(*args).stdout)

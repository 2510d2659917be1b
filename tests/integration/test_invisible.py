"""Nothing of gpuprof shows inside the job: its sitecustomize, its imports, an old interpreter the job
starts, the forks the job makes. Plain python is the oracle."""

import glob
import json
import os
import shutil
import subprocess
import sys

import pytest

from tests.conftest import PROGRAMS
from tests.integration.helpers import env_with_source, gpuprof, load_json, plain, without_gpuprof_lines

SHOW_SITE = os.path.join(PROGRAMS, "site_beside", "show_sitecustomize.py")


def both(tmp_path, *args, env=None, options=()):
    """(plain run, gpuprof run) of the same command line, with the same environment."""
    env = env or env_with_source()
    expected = plain(*options, *args, cwd=tmp_path, env=env)
    got = gpuprof("run", "-q", "--out", str(tmp_path / "run"), "--", sys.executable, *options, *args,
                  cwd=tmp_path, env=env)
    return expected, got


def with_site_dir(name):
    env = env_with_source()
    env["PYTHONPATH"] = os.path.join(PROGRAMS, name) + os.pathsep + env["PYTHONPATH"]
    return env


def test_a_sitecustomize_beside_the_script_is_found_later_as_without_gpuprof(tmp_path):
    expected, got = both(tmp_path, SHOW_SITE)
    assert "later import: beside the script" in expected.stdout and "at start: None" in expected.stdout
    assert got.returncode == expected.returncode == 0, got.stderr
    assert got.stdout == expected.stdout


def test_a_sitecustomize_on_pythonpath_runs_once_and_stays_the_module(tmp_path):
    expected, got = both(tmp_path, SHOW_SITE, env=with_site_dir("site_on_path"))
    assert "at start: on PYTHONPATH\nruns at start: 1\n" in expected.stdout
    assert got.stdout == expected.stdout
    assert glob.glob(str(tmp_path / "run" / "events" / "*.jsonl"))      # the probes started too


def test_a_failing_sitecustomize_fails_as_without_gpuprof(tmp_path):
    expected, got = both(tmp_path, SHOW_SITE, env=with_site_dir("site_broken"))
    assert "at start: None" in expected.stdout and "RuntimeError: broken site set-up" in expected.stderr
    assert got.stdout == expected.stdout
    # gpuprof's own process finds the same PYTHONPATH and says so first; the job's words come last.
    assert without_gpuprof_lines(got.stderr).endswith(expected.stderr)
    assert glob.glob(str(tmp_path / "run" / "events" / "*.jsonl"))


def import_time_names(stderr: str) -> list:
    """The module column of `-X importtime`, indentation kept (it shows who imported whom)."""
    return [line.split("|")[2].rstrip() for line in stderr.splitlines() if line.startswith("import time:")]


def test_the_import_time_list_is_the_programs_own(tmp_path):
    script = os.path.join(PROGRAMS, "imports_colorsys.py")
    expected, got = both(tmp_path, script, options=("-X", "importtime"))
    assert got.returncode == 0 and got.stdout == expected.stdout
    names = import_time_names(got.stderr)
    assert not [name for name in names if "_gpuprof_job" in name or "launch.bootstrap" in name]
    assert names == import_time_names(expected.stderr[expected.stderr.index("import time:"):])
    assert names[-1].strip() == "colorsys"


def old_python(version: str):
    """An interpreter of that version that runs here, or None."""
    candidates = [shutil.which(f"python{version}")]
    candidates += sorted(glob.glob(os.path.expanduser(f"~/.pyenv/versions/{version}.*/bin/python{version}")))
    for exe in filter(None, candidates):
        try:
            if subprocess.run([exe, "-c", "pass"], capture_output=True, timeout=30).returncode == 0:
                return exe
        except (OSError, subprocess.SubprocessError):
            continue
    return None


@pytest.mark.parametrize("version", ["2.7", "3.6"])
def test_an_old_interpreter_the_job_starts_sees_no_bootstrap(tmp_path, version):
    exe = old_python(version)
    if exe is None:
        pytest.skip(f"no python{version} here")
    script = os.path.join(PROGRAMS, "old_python_child.py")
    expected, got = both(tmp_path, script, exe)
    assert "stderr: ''\nstatus: 0\n" in expected.stdout
    assert got.returncode == 0 and got.stdout == expected.stdout
    assert not os.path.exists(tmp_path / "run" / "bootstrap-errors.log")


def test_a_fork_that_leaves_at_once_writes_nothing_and_a_child_that_exits_registers(tmp_path):
    script = os.path.join(PROGRAMS, "fork_children.py")
    expected, got = both(tmp_path, script, "5")
    assert got.returncode == expected.returncode == 0 and got.stdout == expected.stdout
    files = glob.glob(str(tmp_path / "run" / "events" / "*.jsonl"))
    firsts = []
    for path in files:
        with open(path) as handle:
            firsts.append(json.loads(handle.readline()))
    assert sorted(first["origin"] for first in firsts) == ["exec", "fork"]
    parent = next(first for first in firsts if first["origin"] == "exec")
    child = next(first for first in firsts if first["origin"] == "fork")
    assert child["ppid"] == parent["pid"] and child["t"] >= parent["t"]
    processes = load_json(tmp_path / "run" / "report.json")["processes"]["list"]
    assert sorted(p["origin"] for p in processes) == ["exec", "fork"]

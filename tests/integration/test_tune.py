"""`gpuprof tune` on a real program: a short search (few short rounds, one setting), its JSON record,
a patch that `git apply` takes, and a check of the patched program. Nothing here judges timing
beyond the program's own design: its samples wait 20 ms on a store with no CPU, so more workers
are faster however loaded the machine is."""

import os
import shutil
import subprocess
import sys

import pytest

from tests.conftest import PROGRAMS
from tests.integration.helpers import gpuprof, load_json

pytestmark = pytest.mark.torch


def git(*args, cwd):
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=60)


@pytest.fixture
def project(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    folder = tmp_path / "project"
    folder.mkdir()
    shutil.copy(os.path.join(PROGRAMS, "tune_target.py"), folder / "train.py")
    git("init", "-q", cwd=folder)
    git("add", "-A", cwd=folder)
    git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "start", cwd=folder)
    return folder


def test_tune_finds_workers_writes_a_patch_git_applies_and_checks_it(project, tmp_path):
    before = subprocess.run([sys.executable, "train.py"], cwd=project, capture_output=True, text=True, timeout=120)
    assert before.returncode == 0, before.stderr
    got = gpuprof("tune", "--budget", "40", "--only", "num_workers", "--steps", "8", "--warmup-steps", "2",
                  "--min-window", "0", "--check", "--check-rounds", "2", "--out", str(tmp_path / "runs"),
                  "--json", str(tmp_path / "tune.json"), "--patch", str(tmp_path / "tune.patch"), "train.py",
                  cwd=str(project), timeout=400)
    assert got.returncode == 0, got.stderr
    assert "Traceback" not in got.stderr and got.stdout == ""
    assert "gpuprof tune: [" in got.stderr                                  # the progress lines
    record = load_json(tmp_path / "tune.json")
    assert record["format"] == "gpuprof.tune/1"
    assert record["searched"] == ["num_workers"]
    assert record["rows"] and all({"label", "settings", "speedup", "interval_low", "outcome"} <= set(row)
                                  for row in record["rows"])
    best = record["best"]
    assert best["faster"] and best["settings"]["num_workers"] >= 1
    assert record["check"]["same_output"] and record["check"]["same_status"]
    assert git("status", "--porcelain", cwd=project).stdout == ""          # nothing written without --apply

    patch = (tmp_path / "tune.patch").read_text()
    assert "# one process: the store's waits add up" in patch              # the comment kept on its line
    applied = git("apply", str(tmp_path / "tune.patch"), cwd=project)
    assert applied.returncode == 0, applied.stderr
    source = (project / "train.py").read_text()
    assert f"    num_workers={best['settings']['num_workers']},  # one process" in source
    after = subprocess.run([sys.executable, "train.py"], cwd=project, capture_output=True, text=True, timeout=120)
    assert after.returncode == 0, after.stderr
    assert after.stdout == before.stdout

"""The job's interpreter, import path, threads and working folder are what plain python gives it."""

import os
import subprocess
import sys

import pytest

from tests.conftest import PROGRAMS, ROOT
from tests.integration.helpers import env_with_source, gpuprof, load_json, plain

CONTEXT = os.path.join(PROGRAMS, "shadow", "import_context.py")


def test_empty_pythonpath_entries_and_a_users_gpuprof_module_import_as_without_gpuprof(tmp_path):
    (tmp_path / "localmod.py").write_text("X = 1\n")
    env = env_with_source()
    env["PYTHONPATH"] = ROOT + os.pathsep          # the trailing empty entry puts the cwd on sys.path
    expected = plain(CONTEXT, cwd=tmp_path, env=env)
    got = gpuprof("run", "-q", "--out", str(tmp_path / "run"), CONTEXT, cwd=tmp_path, env=env)
    assert expected.returncode == got.returncode == 0, got.stderr
    assert "localmod from localmod.py" in expected.stdout and "the user's own gpuprof.py" in expected.stdout
    assert got.stdout == expected.stdout              # the same thread count too: gpuprof starts none


@pytest.mark.torch
def test_torch_compile_with_a_handwritten_loop_gives_no_warning(tmp_path):
    pytest.importorskip("torch")
    script = os.path.join(PROGRAMS, "compiled_loop.py")
    expected = plain(script, cwd=tmp_path, timeout=300)
    got = gpuprof("run", "-q", "--out", str(tmp_path / "run"), script, cwd=tmp_path, timeout=300)
    assert expected.returncode == got.returncode == 0, got.stderr[-3000:]
    assert got.stdout == expected.stdout and got.stderr == expected.stderr
    steps = load_json(tmp_path / "run" / "report.json")["steps"]
    assert steps["count"] == 12 and steps["data_wait_source"] == "before-first-forward"


def test_probes_that_cannot_load_are_named_not_taken_for_a_program_that_never_trained(tmp_path):
    script = tmp_path / "t.py"
    script.write_text("print('hi')\n")
    got = gpuprof("run", "-q", "--out", str(tmp_path / "run"), "--", sys.executable, "-I", str(script),
                  cwd=tmp_path)
    assert got.returncode == 0 and got.stdout == "hi\n"
    report = load_json(tmp_path / "run" / "report.json")
    assert any("python -I" in note or "runs with -I" in note for note in report["notes"])
    assert not any("no training step" in note for note in report["notes"])


def test_the_default_run_folder_leaves_the_programs_working_tree_clean(tmp_path):
    """A program that refuses to run in a dirty git tree runs the same under gpuprof."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "train.py").write_text(
        "import subprocess, sys\n"
        "dirty = subprocess.run(['git', 'status', '--porcelain'], capture_output=True, text=True).stdout\n"
        "sys.exit('refusing: the tree is dirty' if dirty else 0)\n")
    for args in (["init", "-q"], ["add", "train.py"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "t"]):
        subprocess.run(["git", *args], cwd=repo, check=True)
    state = tmp_path / "state"
    env = env_with_source({"XDG_STATE_HOME": str(state)})
    got = gpuprof("run", "train.py", cwd=repo, env=env)
    assert got.returncode == 0, got.stderr
    assert subprocess.run(["git", "status", "--porcelain"], cwd=repo, capture_output=True, text=True).stdout == ""
    runs = list((state / "gpuprof" / "runs").iterdir())
    assert len(runs) == 1 and (runs[0] / "report.json").exists() and str(runs[0]) in got.stderr

"""`gpuprof tune` refuses before anything runs: --apply on a git tree with uncommitted changes
(unless --force), and bad options, each in one line with exit status 2 and no traceback."""

import shutil
import subprocess

import pytest

from gpuprof.commands.cli import main
from gpuprof.commands.tune.git_tree import uncommitted


@pytest.fixture
def repo(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    (tmp_path / "train.py").write_text("import torch\nprint('hi')\n")
    (tmp_path / "notes.txt").write_text("a\n")
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "x"]):
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)
    return tmp_path


def run(args, cwd, monkeypatch, capsys):
    monkeypatch.chdir(cwd)
    with pytest.raises(SystemExit) as exited:
        main(args)
    return exited.value.code, capsys.readouterr().err


def test_a_clean_tree_has_nothing_uncommitted_and_an_edit_or_an_untracked_target_counts(repo):
    assert uncommitted([str(repo / "train.py")]) == []
    (repo / "new.py").write_text("x = 1\n")
    assert uncommitted([str(repo / "train.py")]) == []                 # an untracked file elsewhere: no matter
    assert "new.py (untracked)" in uncommitted([str(repo / "new.py")])[0]
    (repo / "notes.txt").write_text("b\n")
    assert "notes.txt" in uncommitted([str(repo / "train.py")])[0]


def test_outside_git_nothing_is_uncommitted(tmp_path):
    (tmp_path / "train.py").write_text("x = 1\n")
    assert uncommitted([str(tmp_path / "train.py")]) == []


def test_apply_on_a_dirty_tree_is_refused_before_anything_runs(repo, monkeypatch, capsys):
    (repo / "notes.txt").write_text("changed\n")
    status, err = run(["tune", "--apply", "--out", str(repo / "runs"), "train.py"], repo, monkeypatch, capsys)
    assert status == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gpuprof: error: --apply: uncommitted changes in")
    assert "--force" in lines[0] and "Traceback" not in err
    assert not (repo / "runs").exists()
    assert (repo / "train.py").read_text() == "import torch\nprint('hi')\n"


@pytest.mark.parametrize("args, words", [
    (["--budget", "0"], "--budget must be a positive"),
    (["--allow", "warp"], "--allow warp: not a setting"),
    (["--allow", "num_workers"], "searched anyway"),
    (["--only", "echo"], "name it with --allow too"),
    (["--check-rounds", "1"], "--check-rounds must be between"),
    (["--loader", "train.py"], "FILE:LINE"),
])
def test_bad_options_are_one_line_and_exit_2(repo, monkeypatch, capsys, args, words):
    status, err = run(["tune", *args, "train.py"], repo, monkeypatch, capsys)
    assert status == 2, err
    assert len(err.strip().splitlines()) == 1 and words in err and "Traceback" not in err


def test_a_missing_script_is_one_line(repo, monkeypatch, capsys):
    status, err = run(["tune", "absent.py"], repo, monkeypatch, capsys)
    assert status == 2 and err.strip() == "gpuprof: error: no such file: absent.py"

import os
import sys

import pytest

from gpuprof.commands.cli.run_args import split_user_args
from gpuprof.capture.launch.command import resolve
from gpuprof.errors import UsageProblem

VALUE_OPTIONS = {"--out", "--json", "--interval", "-m", "--module"}


@pytest.mark.parametrize("args, expected", [
    (["train.py", "--json", "x"], ["--", "train.py", "--json", "x"]),
    (["--json", "r.json", "train.py", "--lr", "1"], ["--json", "r.json", "--", "train.py", "--lr", "1"]),
    (["-m", "pkg.train", "--json", "x"], ["-m", "pkg.train", "--", "--json", "x"]),
    (["-mpkg.train", "a"], ["-m", "pkg.train", "--", "a"]),
    (["--module=pkg", "a"], ["--module", "pkg", "--", "a"]),
    (["-q", "--", "torchrun", "--nproc", "2", "t.py"], ["-q", "--command-mode", "--", "torchrun", "--nproc", "2", "t.py"]),
    (["--interval=0.2", "t.py"], ["--interval=0.2", "--", "t.py"]),
    (["--help"], ["--help"]),
])
def test_options_end_where_the_users_program_begins(args, expected):
    assert split_user_args(args, VALUE_OPTIONS) == expected


def test_script_command_uses_the_given_interpreter(tmp_path):
    script = tmp_path / "t.py"
    script.write_text("print(1)\n")
    command = resolve(script=str(script), args=["--lr", "1"], python=sys.executable)
    assert command.argv == [sys.executable, str(script), "--lr", "1"]
    assert command.label == "t"


def test_the_default_interpreter_is_the_first_python_on_path(tmp_path, monkeypatch):
    """`gpuprof run train.py` runs what `python train.py` would: another venv's python included."""
    venv_bin = tmp_path / "otherenv" / "bin"
    venv_bin.mkdir(parents=True)
    fake = venv_bin / "python"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    script = tmp_path / "t.py"
    script.write_text("print(1)\n")
    monkeypatch.setenv("PATH", f"{venv_bin}{os.pathsep}/usr/bin")
    assert resolve(script=str(script)).argv[0] == str(fake)
    with pytest.raises(UsageProblem, match="not an executable file"):
        resolve(script=str(script), python=str(script))


@pytest.mark.parametrize("make, message", [
    (lambda p: str(p / "missing.py"), "no such file"),
    (lambda p: str(p), "is a directory"),
    (lambda p: (p / "b.bin").write_bytes(b"\x7fELF\0\0\1") and str(p / "b.bin"), "binary file"),
])
def test_bad_scripts_are_named_in_one_line(tmp_path, make, message):
    with pytest.raises(UsageProblem) as info:
        resolve(script=make(tmp_path))
    assert message in str(info.value) and "\n" not in str(info.value)


def test_missing_module_and_command_are_usage_problems():
    with pytest.raises(UsageProblem, match="no module named 'no_such_mod_xyz'"):
        resolve(module="no_such_mod_xyz.train", python=sys.executable)    # looked up for this interpreter
    with pytest.raises(UsageProblem, match="command not found"):
        resolve(command=["no-such-launcher-xyz", "a"])
    with pytest.raises(UsageProblem, match="nothing to run"):
        resolve()

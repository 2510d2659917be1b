"""What a new user meets first: the wrong interpreter explained, a report JSON rendered on its own,
and a test suite that does not depend on the signal dispositions it was started with (a traceback
through a DataLoader with no gpuprof frame in it: test_probe_cost)."""

import json
import os
import signal
import subprocess
import sys

import pytest

from tests.conftest import PROGRAMS, ROOT
from tests.integration.helpers import env_with_source, gpuprof, load_json

CPU_STARVED = os.path.join(ROOT, "examples", "cpu_starved.py")


def _interpreter_without_torch():
    """An interpreter of another environment that cannot import torch (the base python under this
    virtual environment, or a python3 on PATH), else None."""
    candidates = [getattr(sys, "_base_executable", None), "/usr/bin/python3", "/usr/local/bin/python3"]
    for path in candidates:
        if not path or not os.path.isfile(path) or os.path.realpath(path) == os.path.realpath(sys.executable) \
                and sys.prefix == sys.base_prefix:
            continue
        found = subprocess.run([path, "-c", "import importlib.util, sys; "
                                "sys.exit(0 if importlib.util.find_spec('torch') is None else 1)"],
                               capture_output=True, timeout=60)
        if found.returncode == 0:
            return path
    return None


def test_a_program_that_cannot_import_torch_is_told_which_interpreter_has_it(tmp_path):
    pytest.importorskip("torch")
    python = _interpreter_without_torch()
    if python is None:
        pytest.skip("no interpreter without torch on this machine")
    got = gpuprof("run", "--python", python, "--out", str(tmp_path / "run"), CPU_STARVED, cwd=tmp_path)
    assert got.returncode == 1 and "ModuleNotFoundError: No module named 'torch'" in got.stderr
    text = " ".join(got.stderr.split())
    assert f"ran under {python}, not gpuprof's own interpreter ({sys.executable})" in text
    assert f"could not import torch: it ran under {python}" in text
    assert f"gpuprof run --python {sys.executable} ..." in text
    report = load_json(tmp_path / "run" / "report.json")
    assert report["interpreter"]["missing_module"] == "torch" and not report["interpreter"]["same_environment"]


def test_the_same_interpreter_gets_no_interpreter_line(tmp_path):
    got = gpuprof("run", "--out", str(tmp_path / "run"), os.path.join(PROGRAMS, "exits.py"), "exit_none", cwd=tmp_path)
    report = load_json(tmp_path / "run" / "report.json")
    assert report["interpreter"]["same_environment"] and report["interpreter"]["missing_module"] is None
    assert "not gpuprof's own interpreter" not in got.stderr


@pytest.fixture(scope="module")
def saved_report(tmp_path_factory):
    """A report JSON kept on its own, as a CI job keeps `run --json`, its run folder gone."""
    folder = tmp_path_factory.mktemp("kept")
    got = gpuprof("run", "-q", "--out", str(folder / "run"), "--json", str(folder / "report.json"),
                  os.path.join(PROGRAMS, "exits.py"), "exit_none", cwd=folder)
    assert got.returncode == 0, got.stderr
    subprocess.run(["rm", "-rf", str(folder / "run")], check=True)
    return folder / "report.json"


@pytest.mark.parametrize("fmt, words", [("console", "exited with status 0"), ("markdown", "### gpuprof:"),
                                        ("json", '"format": "gpuprof.report/1"'),
                                        ("html", "the run folder is not at hand")])
def test_report_renders_a_report_json_alone(tmp_path, saved_report, fmt, words):
    got = gpuprof("report", str(saved_report), "--format", fmt, cwd=tmp_path)
    assert got.returncode == 0, got.stderr
    assert words in got.stdout and "Traceback" not in got.stderr


def test_a_trace_from_a_report_json_alone_says_what_is_missing(tmp_path, saved_report):
    got = gpuprof("report", str(saved_report), "--format", "trace", cwd=tmp_path)
    assert got.returncode == 2 and got.stdout == ""
    assert got.stderr.count("\n") == 1 and "--format trace needs the run folder" in got.stderr


def test_report_of_a_path_that_is_neither_says_so(tmp_path):
    got = gpuprof("report", str(tmp_path / "nothing.json"), cwd=tmp_path)
    assert got.returncode == 2 and "no such run folder or report JSON" in got.stderr
    (tmp_path / "other.json").write_text(json.dumps({"format": "something/1"}))
    got = gpuprof("report", str(tmp_path / "other.json"), cwd=tmp_path)
    assert got.returncode == 2 and "is not a gpuprof report" in got.stderr


@pytest.mark.signals
def test_the_signal_tests_pass_when_started_with_sigint_ignored(tmp_path):
    """A shell's background job (`pytest &`) starts with SIGINT ignored: the tests that send
    signals set the dispositions they rely on instead of inheriting it."""
    def ignore_interrupts():
        signal.signal(signal.SIGINT, signal.SIG_IGN)

    tests = ["tests/integration/test_signals.py::test_sigint_sent_to_gpuprof_alone_is_forwarded_once",
             "tests/integration/test_terminal.py::test_ctrl_c_in_a_terminal_reaches_the_checkpoint_handler_once"]
    got = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests], cwd=ROOT,
                         env=env_with_source(), capture_output=True, text=True, timeout=300,
                         preexec_fn=ignore_interrupts)
    assert got.returncode == 0, got.stdout[-3000:] + got.stderr[-2000:]
    assert "2 passed" in got.stdout

"""Signals: forwarded once, statuses preserved, a report whatever happened."""

import os
import signal
import subprocess
import sys

import pytest

from tests.conftest import PROGRAMS
from tests.integration.helpers import env_with_source, load_json

pytestmark = pytest.mark.signals
WAIT = os.path.join(PROGRAMS, "wait_for_signal.py")


def start(tmp_path, *args):
    proc = subprocess.Popen([sys.executable, "-m", "gpuprof", "run", "--out", str(tmp_path / "run"), *args],
                            cwd=tmp_path, env=env_with_source(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout.readline() == "ready\n"       # wait for the child, never sleep-and-hope
    return proc


def child_pid(tmp_path):
    return load_json(tmp_path / "run" / "run.json").get("pid")


def test_sigterm_to_gpuprof_reaches_the_child_and_gives_143_and_a_report(tmp_path):
    proc = start(tmp_path, WAIT)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 143
    report = load_json(tmp_path / "run" / "report.json")
    assert report["exit_code"] == 143 and report["signal"] == "SIGTERM" and report["interrupted"]
    pid = load_json(tmp_path / "run" / "run.json")["pid"]
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_a_handler_that_saves_a_checkpoint_finishes_once(tmp_path):
    proc = start(tmp_path, WAIT, "checkpoint")
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 5
    assert out.count("saving checkpoint") == 1 and "checkpoint saved" in out
    run = load_json(tmp_path / "run" / "run.json")
    assert [s["forwarded"] for s in run["signals"]] == [True]


def test_sigint_sent_to_gpuprof_alone_is_forwarded_once(tmp_path):
    proc = start(tmp_path, WAIT, "checkpoint")
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 5 and out.count("saving checkpoint on SIGINT") == 1


def test_child_killed_by_sigkill_gives_137_and_a_partial_report(tmp_path):
    code = "import os, signal; print('dying', flush=True); os.kill(os.getpid(), signal.SIGKILL)"
    script = tmp_path / "die.py"
    script.write_text(code)
    got = subprocess.run([sys.executable, "-m", "gpuprof", "run", "--out", str(tmp_path / "run"), str(script)],
                         cwd=tmp_path, env=env_with_source(), capture_output=True, text=True, timeout=60)
    assert got.returncode == 137
    report = load_json(tmp_path / "run" / "report.json")
    assert report["signal"] == "SIGKILL" and "out-of-memory" in report["outcome"]
    assert "out-of-memory" in got.stderr

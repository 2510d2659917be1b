"""A run cut short: a training loop that ignores SIGTERM, stopped the way a user
stops it (TERM to gpuprof, forwarded and ignored, then KILL), leaves a run folder whose report gives
a verdict from the steps recorded and says the run was cut short. Only the processes this test
started are signalled."""

import glob
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from tests.conftest import PROGRAMS
from tests.integration.helpers import default_signal_dispositions, env_with_source, gpuprof

pytestmark = [pytest.mark.signals, pytest.mark.torch]
IGNORES_TERM = os.path.join(PROGRAMS, "ignores_term.py")
READY_AFTER = 111


def start(tmp_path):
    proc = subprocess.Popen([sys.executable, "-m", "gpuprof", "run", "-q", "--out", str(tmp_path / "run"), IGNORES_TERM,
                             str(READY_AFTER)], cwd=tmp_path, env=env_with_source(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=default_signal_dispositions)
    assert proc.stdout.readline() == "ready\n"      # READY_AFTER steps taken
    return proc


def event_file(tmp_path) -> str:
    found = glob.glob(str(tmp_path / "run" / "events" / "*.jsonl"))
    assert len(found) == 1, found
    return found[0]


def wait_for_a_flush_after(path: str, since: float, timeout: float = 30.0) -> None:
    """The program's probes flush their events about once a second: wait for one after `since`, so
    the steps up to 'ready' are on disk before the KILL (which loses what is still buffered)."""
    deadline = time.monotonic() + timeout
    while os.stat(path).st_mtime <= since and time.monotonic() < deadline:
        time.sleep(0.05)


def gone(pid: int, timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as handle:
                if handle.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.05)
    return False


def test_a_run_killed_after_an_ignored_term_gets_a_verdict_and_says_it_was_cut_short(tmp_path):
    proc = start(tmp_path)
    ready_at = time.time()
    proc.send_signal(signal.SIGTERM)
    assert proc.stdout.readline() == "ignoring SIGTERM\n"          # forwarded once, and ignored
    path = event_file(tmp_path)
    with open(path) as handle:
        child = json.loads(handle.readline())["pid"]
    wait_for_a_flush_after(path, ready_at)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    assert gone(child)                                              # the program died with gpuprof
    assert json.load(open(tmp_path / "run" / "run.json"))["status"] == "running"   # no header was written

    got = gpuprof("report", str(tmp_path / "run"), "-f", "json", cwd=str(tmp_path))
    assert got.returncode == 0, got.stderr
    report = json.loads(got.stdout)
    assert report["verdict"]["bottleneck"], report["verdict"]
    assert report["outcome"].startswith("cut short")
    assert report["steps"]["measured"] >= READY_AFTER - 1
    assert report["program"]["name"] == "ignores_term.py"
    assert any(note.startswith("the run was cut short") for note in report["notes"])
    console = gpuprof("report", str(tmp_path / "run"), cwd=str(tmp_path))
    assert console.returncode == 0 and "cut short" in console.stdout and "No verdict" not in console.stdout


def test_a_program_killed_after_an_ignored_term_is_cut_short_not_out_of_memory(tmp_path):
    """The user kills the program itself (its pid), not gpuprof: gpuprof reports what it saw."""
    proc = start(tmp_path)
    proc.send_signal(signal.SIGTERM)
    assert proc.stdout.readline() == "ignoring SIGTERM\n"
    with open(event_file(tmp_path)) as handle:
        child = json.loads(handle.readline())["pid"]
    os.kill(child, signal.SIGKILL)
    proc.communicate(timeout=120)
    assert proc.returncode == -signal.SIGKILL
    report = json.load(open(tmp_path / "run" / "report.json"))
    assert report["verdict"]["bottleneck"], report["verdict"]
    assert report["outcome"] == "cut short: SIGTERM did not end it, signal 9 (SIGKILL) did"
    assert not any("out-of-memory" in note for note in report["notes"])

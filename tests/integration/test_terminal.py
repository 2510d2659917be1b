"""Ctrl-C typed in a real (pseudo-)terminal: the job gets it once, passed on to its whole group
exactly as the terminal would have sent it."""

import os
import pty
import select
import sys
import time

import pytest

from tests.conftest import PROGRAMS
from tests.integration.helpers import default_signal_dispositions, env_with_source, load_json

pytestmark = pytest.mark.signals


def read(fd, until: bytes = None, timeout: float = 60.0) -> bytes:
    """Read the terminal until `until` shows up, or (without it) until the other side closes."""
    data = b""
    deadline = time.monotonic() + timeout
    while until is None or until not in data:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            if until is not None:
                raise AssertionError(f"no {until!r} in {data!r}")
            break
        ready, _, _ = select.select([fd], [], [], min(remaining, 0.5))
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            data += chunk
    return data


def test_ctrl_c_in_a_terminal_reaches_the_checkpoint_handler_once(tmp_path):
    out = tmp_path / "run"
    argv = [sys.executable, "-m", "gpuprof", "run", "--no-live", "--out", str(out),
            os.path.join(PROGRAMS, "wait_for_signal.py"), "checkpoint"]
    env = env_with_source()
    pid, fd = pty.fork()
    if pid == 0:  # the child: gpuprof in the foreground of a fresh terminal
        os.chdir(tmp_path)
        default_signal_dispositions()
        os.execve(sys.executable, argv, env)
    try:
        before = read(fd, until=b"ready")
        os.write(fd, b"\x03")                      # the terminal's Ctrl-C
        after = read(fd)
        _, status = os.waitpid(pid, 0)
    finally:
        os.close(fd)
    text = (before + after).decode(errors="replace")
    assert os.WEXITSTATUS(status) == 5, text
    assert text.count("saving checkpoint on SIGINT") == 1 and "checkpoint saved" in text
    run = load_json(out / "run.json")
    assert [(s["signal"], s["from"], s["to"]) for s in run["signals"]] == [("SIGINT", "terminal", "group")]
    report = load_json(out / "report.json")
    assert report["interrupted"] and report["exit_code"] == 5

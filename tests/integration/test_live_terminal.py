"""The live status line in a real terminal (tmux): it never shares a row with the program's output
and the terminal is left clean."""

import os
import shlex
import shutil
import subprocess
import sys
import time

import pytest

from tests.conftest import PROGRAMS
from tests.integration.helpers import env_with_source

pytestmark = [pytest.mark.signals,
              pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")]


def tmux(*args, check=True):
    return subprocess.run(["tmux", *args], capture_output=True, text=True, check=check)


def test_the_live_line_keeps_to_its_own_row(tmp_path):
    session = f"gpuprof-live-{os.getpid()}"
    env = env_with_source()
    command = " ".join(shlex.quote(p) for p in [
        "env", f"PYTHONPATH={env['PYTHONPATH']}", f"PATH={env['PATH']}", sys.executable, "-m", "gpuprof", "run",
        "--live", "--out", str(tmp_path / "run"), os.path.join(PROGRAMS, "chatty.py")])
    tmux("new-session", "-d", "-s", session, "-x", "100", "-y", "20", f"{command}; echo EXIT=$?; sleep 30")
    screens = []
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            screen = tmux("capture-pane", "-p", "-t", session, check=False).stdout
            screens.append(screen)
            if "EXIT=" in screen:
                break
            time.sleep(0.1)
    finally:
        tmux("kill-session", "-t", session, check=False)
    assert "EXIT=0" in screens[-1], screens[-1]
    status_rows = 0
    for screen in screens:
        for row in screen.splitlines():
            if "gpuprof" in row and ("CPU" in row or "steps/s" in row):
                status_rows += 1
                assert "chatty" not in row and "progress" not in row, row
    assert status_rows > 0                     # the line was shown
    last = screens[-1]
    assert "steps/s" not in last               # and taken down at the end

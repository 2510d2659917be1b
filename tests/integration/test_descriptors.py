"""Descriptors and stdio: the job sees what plain python sees, and gpuprof never writes into its files."""

import concurrent.futures
import os
import shlex
import subprocess
import sys

import pytest

from tests.conftest import PROGRAMS
from tests.integration.helpers import env_with_source

GAMES = os.path.join(PROGRAMS, "fd_games.py")


def shell(line: str, cwd, under_gpuprof: bool):
    """Run `python <line>` through bash (which sets up redirections), plainly or under gpuprof."""
    prefix = [sys.executable] + (["-m", "gpuprof", "run", "-q", "--out", "run"] if under_gpuprof else [])
    command = " ".join(shlex.quote(p) for p in prefix) + " " + line
    return subprocess.run(["bash", "-c", command], cwd=cwd, env=env_with_source(), capture_output=True, timeout=180)


@pytest.mark.torch
def test_a_program_that_closes_every_descriptor_gets_no_gpuprof_data_in_its_files(tmp_path):
    pytest.importorskip("torch")
    plain_dir, probed_dir = tmp_path / "plain", tmp_path / "probed"
    plain_dir.mkdir()
    probed_dir.mkdir()
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:      # side by side: nothing timed
        plain_run = pool.submit(shell, f"{GAMES} closerange results.csv", plain_dir, False)
        got = shell(f"{GAMES} closerange results.csv", probed_dir, True)
        expected = plain_run.result()
    assert expected.returncode == got.returncode == 0, got.stderr
    assert got.stdout == expected.stdout
    assert (probed_dir / "results.csv").read_bytes() == (plain_dir / "results.csv").read_bytes()
    assert b'"k"' not in (probed_dir / "results.csv").read_bytes()


def test_descriptors_passed_in_by_the_shell_reach_the_job_with_their_numbers(tmp_path):
    expected = shell(f"{GAMES} fd3 3>plain.log", tmp_path, False)
    got = shell(f"{GAMES} fd3 3>probed.log", tmp_path, True)
    assert expected.returncode == got.returncode == 0, got.stderr
    assert (tmp_path / "probed.log").read_bytes() == (tmp_path / "plain.log").read_bytes() == b"to fd3\n"
    assert got.stdout == expected.stdout        # the same next free number: nothing of gpuprof's in the way


@pytest.mark.parametrize("redirect", ["0<&-", "1>&-", "2>&-", "0<&- 1>&- 2>&-"])
def test_closed_stdio_is_closed_for_the_job_as_under_plain_python(tmp_path, redirect):
    expected = shell(f"{GAMES} stdio plain.txt {redirect}", tmp_path, False)
    got = shell(f"{GAMES} stdio probed.txt {redirect}", tmp_path, True)
    assert got.returncode == expected.returncode
    assert (tmp_path / "probed.txt").read_text() == (tmp_path / "plain.txt").read_text()
    assert got.stdout == expected.stdout
    assert (tmp_path / "run" / "report.json").exists()

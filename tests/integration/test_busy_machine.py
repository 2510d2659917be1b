"""An input-bound job beside a process that spins on one of the two cores, with torch's default
intra-op threads: the threads fight the spinner for a core, compute slows more than the input, and
the wait shrinks. The verdict weighs what the other process took (gpuprof.judge.verdict.bottlenecks.
input_cpu.job_alone_wait) and stays the input; the report says the machine was busy."""

import os
import subprocess
import sys

import pytest

from tests.conftest import PROGRAMS, ROOT
from tests.integration.helpers import env_with_source, gpuprof, load_json


@pytest.mark.torch
@pytest.mark.skipif((os.cpu_count() or 1) != 2, reason="a spinner on one of two cores")
def test_beside_a_spinner_an_input_bound_job_with_two_intra_op_threads_stays_input(tmp_path):
    pytest.importorskip("torch")
    env = {key: value for key, value in env_with_source({}).items() if key != "OMP_NUM_THREADS"}
    hog = subprocess.Popen([sys.executable, os.path.join(PROGRAMS, "busy.py"), "600"], stdout=subprocess.DEVNULL)
    try:
        got = gpuprof("run", "-q", "--out", str(tmp_path / "run"), os.path.join(ROOT, "examples", "cpu_starved.py"),
                      cwd=str(tmp_path), timeout=300, env=env)
    finally:
        hog.kill()
        hog.wait()
    assert got.returncode == 0, got.stderr
    report = load_json(tmp_path / "run" / "report.json")
    assert report["system"]["others"]["notable"], report["system"]["others"]
    verdict = report["verdict"]
    assert verdict["bottleneck"].startswith("input."), verdict["summary"]
    assert "busy_machine" in verdict

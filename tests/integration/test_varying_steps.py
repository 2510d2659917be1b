"""Slow steps at a steady interval, found in a real loop with its period and the function that runs
in them (an evaluation every 10 steps, as nanoGPT's estimate_loss), and gated on p90."""

import os
import sys

import pytest

from tests.conftest import PROGRAMS
from tests.integration.helpers import gpuprof, load_json

pytest.importorskip("torch")
pytestmark = pytest.mark.torch


def test_an_evaluation_every_ten_steps_is_found_with_its_period_and_function(tmp_path):
    got = gpuprof("run", "-q", "--out", str(tmp_path / "run"), "--", sys.executable,
                  os.path.join(PROGRAMS, "periodic_eval.py"), cwd=str(tmp_path), timeout=300)
    assert got.returncode == 0 and "periodic_eval: done" in got.stdout, got.stderr
    report = load_json(tmp_path / "run" / "report.json")
    spikes = report["steps"]["periodic_slow_steps"]
    assert spikes["every"] == 10 and spikes["count"] >= 9, spikes
    assert spikes["where"].startswith("estimate_loss (") and "periodic_eval.py:" in spikes["where"]
    assert any(note.startswith("every 10 steps a step takes") and "estimate_loss" in note for note in report["notes"])
    assert report["steps"]["p90_step_s"] > 3 * report["steps"]["median_step_s"]
    gate = gpuprof("gate", str(tmp_path / "run"), "--max-p90-step", str(report["steps"]["median_step_s"] * 2),
                   "--judge-busy-machine", cwd=str(tmp_path))
    assert gate.returncode == 1 and "max_p90_step" in " ".join((gate.stdout + gate.stderr).split())

"""Evaluation reported apart from training: a validation loader every few steps is listed with its
role and line, its share and its own input verdict are reported, and the training verdict comes
from the training steps alone."""

import os
import sys

import pytest

from tests.conftest import PROGRAMS
from tests.integration.helpers import gpuprof, load_json

pytest.importorskip("torch")
pytestmark = pytest.mark.torch

PROGRAM = os.path.join(PROGRAMS, "validate_every_few_steps.py")


def test_a_validation_loader_every_five_steps_is_reported_apart_from_the_training_verdict(tmp_path):
    got = gpuprof("run", "--out", str(tmp_path / "run"), "--", sys.executable, PROGRAM, cwd=str(tmp_path),
                  timeout=300)
    assert got.returncode == 0 and "validate_every_few_steps:" in got.stdout, got.stderr
    report = load_json(tmp_path / "run" / "report.json")
    lines = open(PROGRAM).read().splitlines()
    train_line = next(i for i, text in enumerate(lines, 1) if text.strip().startswith("train_loader ="))
    val_line = next(i for i, text in enumerate(lines, 1) if text.strip().startswith("val_loader ="))

    # The training loader keeps up: the validation loader's waits are not the training's data wait.
    verdict = report["verdict"]
    assert not verdict["bottleneck"].startswith("input."), verdict
    assert report["steps"]["data_wait_share"] < 0.1, report["steps"]

    # Both loaders listed with their roles and the lines that built them.
    roles = {loader["role"]: loader["where"] for loader in report["dataloaders"]}
    assert roles["train"].endswith(f"validate_every_few_steps.py:{train_line}"), roles
    assert roles["validation"].endswith(f"validate_every_few_steps.py:{val_line}"), roles

    # The evaluation's share of the loop and of the run, and its own input verdict: its samples are slow.
    evaluation = report["steps"]["evaluation"]
    assert evaluation["passes"] >= 5 and evaluation["share"] >= 0.1 and 0 < evaluation["wall_share"] < evaluation["share"]
    assert evaluation["input"]["bottleneck"] == "input.cpu" and evaluation["input"]["wait_share"] > 0.5, evaluation
    assert any(f["bottleneck"] == "evaluation.loop" for f in report["findings"]), report["findings"]

    printed = " ".join((got.stdout + got.stderr).split())       # the report wraps to 100 columns
    assert "DataLoader (train) at" in printed and "DataLoader (validation) at" in printed
    assert "of the run): left out of step time and data wait" in printed
    assert "its input: Input-bound" in printed


def test_model_eval_phases_without_a_second_loader_are_evaluation(tmp_path):
    program = os.path.join(PROGRAMS, "eval_mode_no_loader.py")
    got = gpuprof("run", "--out", str(tmp_path / "run"), "--", sys.executable, program, cwd=str(tmp_path),
                  timeout=300)
    assert got.returncode == 0 and "eval_mode_no_loader: done" in got.stdout, got.stderr
    report = load_json(tmp_path / "run" / "report.json")
    evaluation = report["steps"]["evaluation"]
    # Twelve estimate_loss calls inside the measured steps, each under model.eval() ... model.train().
    assert evaluation["passes"] == 12 and evaluation["loaders"] == [], evaluation
    assert evaluation["share"] >= 0.1 and evaluation["wait_s"] == 0
    assert any(f["bottleneck"] == "evaluation.loop" for f in report["findings"]), report["findings"]
    assert "12 passes with the model in eval mode" in " ".join((got.stdout + got.stderr).split())

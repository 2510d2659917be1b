"""The model-side probes and try changes on real compute-bound programs: the trained model and its
optimizer are noted at the line that calls the model, a program that runs autocast already is not
offered it, and a change that makes the loss infinite fails its row instead of reading as a speed-up."""

import os
import re
import sys

import pytest

from tests.conftest import PROGRAMS
from tests.integration.helpers import gpuprof, load_json

pytest.importorskip("torch")
pytestmark = pytest.mark.torch

PROGRAM = os.path.join(PROGRAMS, "model_side.py")
CALL_LINE = 28          # `out = model(x)` in tests/programs/model_side.py


def has_bf16() -> bool:
    from gpuprof.capture.samplers.system import cpu_flags
    return bool({"avx512_bf16", "amx_bf16"} & set(cpu_flags()))


def profiled(tmp_path, mode):
    got = gpuprof("run", "-q", "--out", str(tmp_path / mode), "--", sys.executable, PROGRAM, mode,
                  cwd=str(tmp_path), timeout=300)
    assert got.returncode == 0, got.stderr
    assert f"model_side {mode}: final loss" in got.stdout
    return load_json(tmp_path / mode / "report.json")


def test_the_trained_model_and_its_optimizer_are_noted_and_get_model_side_fixes(tmp_path):
    report = profiled(tmp_path, "plain")
    model = report["model"]
    assert model["class"] == "Sequential" and model["where"].endswith(f"model_side.py:{CALL_LINE}")
    assert model["dtypes"] == {"float32": model["params"]} and model["autocast"] is None and not model["compiled"]
    assert model["optimizer"]["class"] == "SGD" and "foreach" in model["optimizer"]["takes"]
    assert report["verdict"]["bottleneck"] == "compute"
    ids = [a["id"] for a in report["advice"]]
    assert "compile" in ids and ("mixed-precision" in ids) == has_bf16()
    compiled = next(a for a in report["advice"] if a["id"] == "compile")
    assert compiled["estimated_speedup"] is None and compiled["prior"] and compiled["where"].endswith(f":{CALL_LINE}")


def test_a_loop_without_an_optimizer_has_its_model_noted_from_the_gradients_backward_left(tmp_path):
    report = profiled(tmp_path, "by-hand")
    model = report["model"]
    assert model["class"] == "Sequential" and model["where"].endswith(f"model_side.py:{CALL_LINE}")
    assert model["optimizer"] is None
    assert ("mixed-precision" in [a["id"] for a in report["advice"]]) == has_bf16()


def test_a_forward_under_autocast_already_is_not_offered_mixed_precision(tmp_path):
    report = profiled(tmp_path, "autocast")
    assert report["model"]["autocast"] == "bfloat16"
    assert "mixed-precision" not in [a["id"] for a in report["advice"]]


@pytest.mark.skipif(not has_bf16(), reason="mixed precision is offered on CPUs with bf16 instructions only")
def test_a_change_that_makes_the_loss_infinite_fails_its_row(tmp_path):
    got = gpuprof("try", "--out", str(tmp_path / "exp"), "--rounds", "1", "--max-rounds", "1", "--min-window", "0",
                  "--steps", "12", "--warmup-steps", "3", "--fix", "mixed-precision", "--json", str(tmp_path / "try.json"),
                  PROGRAM, "naive-bce", "40", cwd=tmp_path, timeout=600)
    assert got.returncode == 0, got.stderr
    record = load_json(tmp_path / "try.json")
    row = record["rows"][1]
    assert row["conclusion"] == "failed" and row["broke_training"]
    assert re.match(r"the loss became (inf|nan) at backward call \d+", row["error"]), row["error"]
    assert record["best"] is None
    assert "failed, not a speed-up (the loss became" in " ".join(got.stderr.split())

"""FLOPs, MFU, energy and money end to end: a seeded program prints the same loss curve with and
without gpuprof while its third step is counted; the count is within 10% of a hand count; MFU is
printed with its peak's source (given, or measured on this CPU after the run and cached); on the
simulated GPU the report has joules per step, idle GPU-hours, the data sheet's dense peak and the
cost at a price set in [tool.gpuprof.run]."""

import dataclasses
import json
import os
import sys

import pytest

from tests.conftest import PROGRAMS
from tests.integration.helpers import env_with_source, gpuprof, load_json, plain_beside_gpuprof

pytest.importorskip("torch")
pytestmark = pytest.mark.torch

PROGRAM = os.path.join(PROGRAMS, "flops_models.py")
B, T, WIDTH, VOCAB, LAYERS = 8, 16, 64, 100, 2


def hand_count(kind: str) -> int:
    """Forward and backward FLOPs of one step of tests/programs/flops_models.py, from the layer shapes."""
    def linear(n_in, n_out, rows):
        return 2 * rows * n_in * n_out
    if kind == "cnn":
        conv1, conv2 = 2 * B * 8 * 16 * 16 * 3 * 9, 2 * B * 16 * 16 * 16 * 8 * 9
        return 2 * conv1 + 3 * conv2 + 3 * linear(16 * 16 * 16, 10, B)
    rows = B * T
    layer = (linear(WIDTH, 3 * WIDTH, rows) + linear(WIDTH, WIDTH, rows) + linear(WIDTH, 4 * WIDTH, rows)
             + linear(4 * WIDTH, WIDTH, rows) + 4 * B * T * T * WIDTH)
    return 3 * (LAYERS * layer + linear(WIDTH, VOCAB, rows))


def cache_env(tmp_path) -> dict:
    return env_with_source({"XDG_CACHE_HOME": str(tmp_path / "cache")})


@pytest.mark.parametrize("kind", ["transformer", "cnn"])
def test_the_count_leaves_the_loss_curve_alone_and_matches_a_hand_count(tmp_path, kind):
    alone, got = plain_beside_gpuprof([PROGRAM, kind],
                                      ["run", "--out", str(tmp_path / "run"), "--peak-tflops", "0.5", PROGRAM, kind],
                                      cwd=str(tmp_path), env=cache_env(tmp_path), timeout=300)
    assert got.returncode == 0, got.stderr
    assert got.stdout == alone.stdout and "step 7 loss" in got.stdout
    section = load_json(tmp_path / "run" / "report.json")["efficiency"]
    assert section["flops_per_step"] == pytest.approx(hand_count(kind), rel=0.10)
    assert section["counted"]["coverage"] == "complete" and section["counted"]["step"] == 3
    assert section["peak"] == {"tflops": 0.5, "source": "given (--peak-tflops)", "dtype": "FP32"}
    assert section["mfu"] == pytest.approx(section["achieved_tflops"] / 0.5, rel=1e-3)
    shown = " ".join(got.stderr.split())         # the console may wrap a long line
    assert "TFLOPS FP32, given (--peak-tflops))" in shown and " MFU " in shown
    if kind == "transformer":
        convention = section["transformer"]
        assert (convention["layers"], convention["heads"], convention["head_dim"], convention["seq_len"]) == (2, 4, 16, 16)
        assert convention["tokens_per_step"] == B * T
        assert convention["flops_per_step"] == pytest.approx(section["flops_per_step"], rel=0.10)
        assert " 6N + 12LHQT " in shown


def test_a_cpu_run_measures_its_peak_once_and_caches_it(tmp_path):
    env = cache_env(tmp_path)
    got = gpuprof("run", "-q", "--out", str(tmp_path / "run"), PROGRAM, "mlp", cwd=str(tmp_path), env=env, timeout=300)
    assert got.returncode == 0, got.stderr
    peak = load_json(tmp_path / "run" / "report.json")["efficiency"]["peak"]
    assert peak["tflops"] > 0 and peak["source"].startswith("measured (matmul benchmark")
    with open(tmp_path / "cache" / "gpuprof" / "peaks.json") as handle:
        cached = json.load(handle)
    assert [entry["tflops"] for entry in cached.values()] == [peak["tflops"]]
    shown = gpuprof("report", str(tmp_path / "run"), cwd=str(tmp_path), env=env)
    assert "MFU" in shown.stdout and "measured (matmul benchmark" in shown.stdout


def test_the_simulated_gpu_gives_joules_per_step_idle_gpu_hours_and_the_cost(tmp_path):
    from gpuprof.commands.doctor.runner import Runner
    from gpuprof.testing.scenarios import SCENARIOS
    (tmp_path / "pyproject.toml").write_text("[tool.gpuprof.run]\nprice_per_gpu_hour = 3.0\n")
    scenario = dataclasses.replace(next(s for s in SCENARIOS if s.name == "compute-pageable"), args=("--steps", "20"))
    runner = Runner(str(tmp_path), python=sys.executable)
    runner.env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    outcome = runner.run(scenario)
    assert outcome.ok, outcome.error
    section = load_json(os.path.join(outcome.folder, "report.json"))["efficiency"]
    assert section["energy"]["j_per_step"] > 0 and "NVML" in section["energy"]["source"]
    assert section["hours_of"] == "GPU" and 0 < section["idle_share"] < 1 and section["idle_hours"] > 0
    assert section["peak"]["source"] == "data sheet: H100 SXM dense BF16" and 0 < section["mfu"] < 1
    assert section["price_per_hour"] == 3.0 and section["cost"] == pytest.approx(section["hours"] * 3.0, rel=1e-3)

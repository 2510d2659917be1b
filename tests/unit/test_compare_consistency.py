"""`gpuprof compare` on a try folder whose rounds' steps split into instant ones and ones that wait:
the step time, the throughput and the speed-up on its lines come from one measure,
so "B measured 2.57x faster" never stands beside a throughput that rose 16%."""

import copy
import os

import pytest

from gpuprof.gate import compare as cmp
from gpuprof.gate.decide import decide
from gpuprof.record.reader import load_run
from gpuprof.present.render import compare_text
from gpuprof.present.reporting.build import build_report
from tests.conftest import ROOT

GOLDEN = os.path.join(ROOT, "tests", "golden", "runs", "cpu_starved")
BATCH = 16


@pytest.fixture(scope="module")
def golden():
    return build_report(load_run(GOLDEN), run_dir=GOLDEN)


def run(golden, median, p25, p75, mean, samples_per_second, mean_se=0.004):
    """The golden run with these steady figures; its throughput and mean agree, as a real run's do."""
    out = copy.deepcopy(golden)
    out["steps"].update(batch_size=BATCH, samples_per_second=samples_per_second)
    out["steps"]["steady"].update(median_step_s=median, p25_step_s=p25, p75_step_s=p75, mean_step_s=mean,
                                  mean_se_s=mean_se, steps=45)
    return out


def split_rounds(golden):
    """A try folder's baseline: three rounds where half the steps find a batch ready (1 ms) and half
    wait about a second for one, so each round's median sits in the waiting group (~998 ms)."""
    return [run(golden, 0.998, 0.001, 0.998, 0.470, 34.0),
            run(golden, 0.990, 0.001, 0.990, 0.462, 34.6),
            run(golden, 1.002, 0.001, 1.002, 0.458, 34.9)]


def steady_run(golden):
    """B: every step about 390 ms, 16% more samples a second than A."""
    return run(golden, 0.388, 0.380, 0.400, 0.398, 40.1, mean_se=0.002)


def test_a_try_folder_of_split_rounds_is_measured_by_its_rounds_means(golden):
    rounds = split_rounds(golden)
    a = cmp.side(rounds[0], "exp", "try folder: its baseline, 3 runs", rounds=rounds[1:])
    result = cmp.compare(a, cmp.side(steady_run(golden), "B"))
    assert result["a"]["statistic"] == result["b"]["statistic"] == "mean"
    assert result["a"]["step_s"] == pytest.approx(0.462)
    # the throughput shown is over the same rounds (their median), not the first round's
    assert result["a"]["samples_per_second"] == pytest.approx(34.6)
    assert BATCH / result["a"]["samples_per_second"] == pytest.approx(result["a"]["step_s"], rel=0.01)
    throughput_gain = result["b"]["samples_per_second"] / result["a"]["samples_per_second"]
    assert result["step"]["speedup"] == pytest.approx(throughput_gain, rel=0.02)
    text = compare_text.headline(result)
    assert "1.16x faster" in text and "2.57x" not in text and "mean step" in text


def test_the_gate_judges_the_same_rounds_by_the_same_measure(golden):
    rounds = split_rounds(golden)
    result = decide(steady_run(golden), {"max_regression": 0.05}, baseline=rounds[0], baseline_rounds=rounds[1:])
    check = result.checks[0]
    assert check.measured == pytest.approx(0.398 / 0.462 - 1)
    assert check.detail.startswith("mean step 398.00 ms vs 462.00 ms")


def test_runs_whose_steps_agree_keep_their_medians(golden):
    steady = steady_run(golden)
    result = cmp.compare(cmp.side(steady, "A", rounds=[steady, steady]), cmp.side(steady, "B"))
    assert result["a"]["statistic"] == result["b"]["statistic"] == "median"
    assert result["a"]["step_s"] == pytest.approx(0.388)

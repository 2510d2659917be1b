"""The gate decision and its configuration, on plain data: edges included."""

import pytest

from gpuprof.gate import config
from gpuprof.gate.decide import FAIL, MISSING, PASS, SKIPPED, decide
from gpuprof.gate.errors import GateInputError
from gpuprof.present.render.gate_text import junit_xml, markdown


def report(wait=0.5, sps=100.0, median=0.010, batch=32, name="train.py", util=None):
    gpus = [] if util is None else [{"util_gpu": util}]
    return {"format": "gpuprof.report/1", "command": ["python", name], "program": {"kind": "script", "name": name},
            "steps": {"data_wait_share": wait, "samples_per_second": sps, "measured": 50, "batch_size": batch,
                      "steady": {"median_step_s": median, "steps": 45}},
            "system": {"gpus": gpus, "gpu_status": {"reason": None if gpus else "no GPU"}},
            "verdict": {"summary": "Input-bound: 50% of each step waits."}, "advice": []}


def statuses(result):
    return {c.name: c.status for c in result.checks}


@pytest.mark.parametrize("wait, expected", [(0.2, PASS), (0.2000001, FAIL), (0.0, PASS)])
def test_max_data_wait_is_inclusive(wait, expected):
    assert statuses(decide(report(wait=wait), {"max_data_wait": 0.2})) == {"max_data_wait": expected}


def test_minimums_are_inclusive_and_missing_metrics_fail():
    result = decide(report(sps=100.0), {"min_samples_per_second": 100.0, "min_gpu_util": 0.5})
    assert statuses(result) == {"min_samples_per_second": PASS, "min_gpu_util": MISSING}
    assert not result.passed
    assert "no GPU" in result.checks[1].detail


def test_regression_against_a_baseline():
    slower = report(median=0.014)
    assert statuses(decide(slower, {"max_regression": 0.15}, report(median=0.010))) == {"max_regression": FAIL}
    assert statuses(decide(report(median=0.0115), {"max_regression": 0.15}, report(median=0.010))) == {"max_regression": PASS}
    same = decide(report(), {"max_regression": 0.15}, report())
    assert same.passed and "45 steady steps" in same.checks[0].detail


def test_regression_without_baseline_is_skipped():
    result = decide(report(), {"max_regression": 0.1})
    assert statuses(result) == {"max_regression": SKIPPED} and result.passed


def test_different_programs_or_batch_sizes_are_refused_unless_forced():
    with pytest.raises(GateInputError, match="different program"):
        decide(report(), {"max_regression": 0.1}, report(name="other.py"))
    with pytest.raises(GateInputError, match="batch size"):
        decide(report(), {"max_regression": 0.1}, report(batch=64))
    assert decide(report(), {"max_regression": 0.1}, report(batch=64), force=True).passed


def test_junit_has_one_testcase_per_threshold_and_failures_carry_the_numbers():
    result = decide(report(wait=0.6), {"max_data_wait": 0.2, "min_samples_per_second": 10, "max_regression": 0.1})
    xml = junit_xml(result, "run/report.json")
    assert xml.count("<testcase ") == 3 and xml.count("<failure ") == 1 and "<skipped " in xml
    assert "measured 60.0%" in xml and "Input-bound" in xml
    assert "gate: FAILED" in markdown(result, report(wait=0.6))


def test_config_from_pyproject_found_upward(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.gpuprof.gate]\nmax_data_wait = 0.25\nbaseline = 'base.json'\n")
    nested = tmp_path / "a" / "b"
    nested.mkdir(parents=True)
    values, source = config.load(None, str(nested))
    assert values == {"max_data_wait": 0.25, "baseline": str(tmp_path / "base.json")}
    assert source == str(tmp_path / "pyproject.toml")
    assert config.merge(values, {"max_data_wait": 0.1, "min_gpu_util": None})["max_data_wait"] == 0.1


@pytest.mark.parametrize("text, message", [
    ("[tool.gpuprof.gate]\nmax_data_wiat = 0.2\nspeed = 1\n", "unknown gate keys max_data_wiat, speed"),
    ("[tool.gpuprof.gate]\nmax_data_wait = 'high'\n", "must be a number"),
    ("[tool.gpuprof.gate\n", "not valid TOML"),
])
def test_bad_config_names_the_problem(tmp_path, text, message):
    path = tmp_path / "gate.toml"
    path.write_text(text)
    with pytest.raises(GateInputError, match=message):
        config.load(str(path))


def test_a_plain_gate_table_is_accepted_in_an_explicit_config(tmp_path):
    path = tmp_path / "gpuprof.toml"
    path.write_text("[gate]\nmin_samples_per_second = 50\n")
    assert config.load(str(path))[0] == {"min_samples_per_second": 50.0}


@pytest.mark.parametrize("table, words", [
    ({"max_data_wait": 20}, "0.2 for 20%"),
    ({"min_gpu_util": 70}, "0.7 for 70%"),
    ({"max_regression": -0.1}, "must not be negative"),
])
def test_thresholds_out_of_range_are_refused_not_always_passed(table, words):
    from gpuprof.gate.config import validate
    with pytest.raises(GateInputError, match=words.replace("(", r"\(")):
        validate(table, "gpuprof.toml")


def test_out_of_range_flags_are_refused_too():
    from gpuprof.gate.config import merge
    with pytest.raises(GateInputError, match="--max-data-wait is a share"):
        merge({}, {"max_data_wait": 20.0})
    assert merge({"max_data_wait": 0.5}, {"max_data_wait": 0.2}) == {"max_data_wait": 0.2}


def spread(median, p25, p75, steps):
    r = report(median=median)
    r["steps"]["steady"].update(p25_step_s=p25, p75_step_s=p75, steps=steps)
    return r


def test_a_change_inside_the_noise_of_two_noisy_runs_does_not_fail():
    # 20% slower, but each run's median is uncertain by about +-13% (wide steps, few of them).
    noisy = decide(spread(0.012, 0.008, 0.016, 8), {"max_regression": 0.15}, spread(0.010, 0.006, 0.014, 8))
    assert noisy.checks[0].status == PASS and "within the noise" in noisy.checks[0].detail
    steady = decide(spread(0.012, 0.0119, 0.0121, 200), {"max_regression": 0.15}, spread(0.010, 0.0099, 0.0101, 200))
    assert steady.checks[0].status == FAIL and "noise ±" in steady.checks[0].detail


def test_rounds_decide_on_their_median_and_spread():
    base = [report(median=m) for m in (0.010, 0.0101, 0.0099)]
    slower = [report(median=m) for m in (0.0125, 0.0124, 0.0126)]
    result = decide(slower[0], {"max_regression": 0.15}, base[0], rounds=slower[1:], baseline_rounds=base[1:])
    assert result.checks[0].status == FAIL and "3 runs vs 3" in result.checks[0].detail
    jumpy = [report(median=m) for m in (0.0125, 0.008, 0.016)]
    result = decide(jumpy[0], {"max_regression": 0.15}, base[0], rounds=jumpy[1:], baseline_rounds=base[1:])
    assert result.checks[0].status == PASS


def test_a_disturbed_baseline_round_does_not_hide_a_regression():
    """Four baseline rounds, one of them slowed by another process: the gate, as try does, leaves it
    out when the other three agree, so the real 25% regression is not lost in its noise."""
    base = [report(median=m) for m in (0.010, 0.0101, 0.0099, 0.020)]
    slower = [report(median=m) for m in (0.0125, 0.0124, 0.0126, 0.0125)]
    result = decide(slower[0], {"max_regression": 0.15}, base[0], rounds=slower[1:], baseline_rounds=base[1:])
    assert result.checks[0].status == FAIL


def test_p90_step_time_bounds_the_slow_steps_a_median_hides():
    periodic = report(median=0.010)
    periodic["steps"]["p90_step_s"] = 0.250          # every tenth step evaluates
    assert statuses(decide(periodic, {"max_p90_step": 0.1})) == {"max_p90_step": FAIL}
    assert statuses(decide(periodic, {"max_p90_step": 0.25})) == {"max_p90_step": PASS}
    assert statuses(decide(report(), {"max_p90_step": 0.1})) == {"max_p90_step": MISSING}
    assert "250.0 ms" in junit_xml(decide(periodic, {"max_p90_step": 0.1}), "report.json")


def test_a_run_measured_on_a_busy_machine_is_disturbed_not_passed_or_failed():
    from gpuprof.gate.decide import DISTURBED
    busy = report(wait=0.5)
    busy["system"]["others"] = {"other_cores": 1.2, "cpu_count": 2, "share": 0.6, "notable": True, "over": "steps"}
    result = decide(busy, {"max_data_wait": 0.2, "min_gpu_util": 0.5})
    assert statuses(result) == {"max_data_wait": DISTURBED, "min_gpu_util": MISSING}   # missing stays missing
    assert not result.undecided
    result = decide(busy, {"max_data_wait": 0.2})
    assert result.undecided and not result.passed and "1.2 of 2 cores busy" in result.disturbed
    assert "not decided" in markdown(result, busy) and 'skipped="1"' in junit_xml(result, "r.json")
    # a busy baseline disturbs a regression check too; a quiet machine decides as before
    baseline = dict(report(), system=busy["system"])
    assert statuses(decide(report(median=0.014), {"max_regression": 0.15}, baseline)) == {"max_regression": DISTURBED}
    assert statuses(decide(report(wait=0.5), {"max_data_wait": 0.2})) == {"max_data_wait": FAIL}


def test_run_defaults_and_gate_thresholds_read_the_same_pyproject(tmp_path):
    """`[tool.gpuprof.run]` and `[tool.gpuprof.gate]` come from one file through one reader: both
    found from a folder below it, each table checked by its own command."""
    from gpuprof.commands.workflows.run_config import file_defaults
    (tmp_path / "pyproject.toml").write_text("[tool.gpuprof.run]\ninterval = 1\n[tool.gpuprof.gate]\nmax_data_wait = 0.2\n")
    below = tmp_path / "src" / "pkg"
    below.mkdir(parents=True)
    assert file_defaults(str(below)) == {"interval": 1.0}
    assert config.load(cwd=str(below)) == ({"max_data_wait": 0.2}, str(tmp_path / "pyproject.toml"))

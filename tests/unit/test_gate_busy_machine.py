"""The gate on a busy machine: a check the load could only have made harder to pass, and that passed,
passes; the rest are not decided (exit 3) unless a check failed on a quiet measure (exit 1). And the
gate's "no thresholds" error, which names every threshold flag."""

import json

import pytest

from gpuprof.gate import config
from gpuprof.gate.decide import DISTURBED, FAIL, MISSING, PASS, decide
from gpuprof.present.render.gate_text import junit_xml, markdown

BUSY = {"other_cores": 1.2, "cpu_count": 2, "share": 0.6, "notable": True, "over": "steps"}


def report(busy=False, wait=0.1, sps=100.0, median=0.010, p90=0.012, mfu=0.4, util=0.9):
    system = {"gpu_status": {"job_util": util}}
    if busy:
        system["others"] = dict(BUSY)
    return {"format": "gpuprof.report/1", "command": ["python", "train.py"],
            "program": {"kind": "script", "name": "train.py"},
            "steps": {"data_wait_share": wait, "samples_per_second": sps, "measured": 50, "batch_size": 32,
                      "p90_step_s": p90, "steady": {"median_step_s": median, "steps": 45}},
            "efficiency": {"mfu": mfu}, "system": system,
            "verdict": {"summary": "Compute-bound."}, "advice": []}


def statuses(result):
    return {c.name: c.status for c in result.checks}


SLOWER_IS_HARDER = {"max_p90_step": 0.1, "min_samples_per_second": 50.0, "min_mfu": 0.3, "max_regression": 0.15}


def test_a_pass_that_load_could_only_have_made_harder_passes_on_a_busy_machine():
    result = decide(report(busy=True), SLOWER_IS_HARDER, baseline=report())
    assert statuses(result) == {name: PASS for name in SLOWER_IS_HARDER}
    assert result.passed and not result.undecided
    assert all("busy machine, which could only have made it harder" in c.detail for c in result.checks)
    assert "1.2 of 2 cores busy while the run was measured" in result.disturbed
    assert "gate: passed" in markdown(result, report(busy=True)) and "<skipped" not in junit_xml(result, "r.json")


def test_a_failure_on_a_busy_machine_is_not_decided():
    result = decide(report(busy=True, sps=40.0, median=0.014), SLOWER_IS_HARDER, baseline=report())
    assert statuses(result) == {"max_p90_step": PASS, "min_samples_per_second": DISTURBED, "min_mfu": PASS,
                                "max_regression": DISTURBED}
    assert result.undecided and "rerun on a quiet machine" in result.disturbed


@pytest.mark.parametrize("thresholds", [{"max_data_wait": 0.2}, {"min_gpu_util": 0.5}])
def test_a_pass_that_load_could_have_helped_is_not_decided(thresholds):
    # a slowed main process waits less for its workers; another process's kernels count in NVML's figure
    result = decide(report(busy=True), thresholds)
    assert statuses(result) == {name: DISTURBED for name in thresholds} and result.undecided


def test_a_regression_against_a_busy_baseline_is_not_decided_even_when_it_passes():
    # a slowed baseline makes the change look smaller
    result = decide(report(), {"max_regression": 0.15}, baseline=report(busy=True))
    assert statuses(result) == {"max_regression": DISTURBED} and result.undecided
    assert "while the baseline was measured" in result.disturbed


def test_a_busy_baseline_leaves_the_checks_that_do_not_read_it_decided():
    result = decide(report(wait=0.5), {"max_data_wait": 0.2, "max_regression": 0.15}, baseline=report(busy=True))
    assert statuses(result) == {"max_data_wait": FAIL, "max_regression": DISTURBED}
    assert not result.passed and not result.undecided          # failed on a quiet measure: exit 1


def test_a_missing_measure_still_fails_and_judging_as_measured_still_decides():
    result = decide(report(busy=True, mfu=None), {"min_mfu": 0.3, "max_p90_step": 0.1})
    assert statuses(result) == {"min_mfu": MISSING, "max_p90_step": PASS} and not result.undecided
    judged = decide(report(busy=True, wait=0.5), {"max_data_wait": 0.2, "judge_busy_machine": True})
    assert statuses(judged) == {"max_data_wait": FAIL} and not judged.disturbed


@pytest.mark.parametrize("flags, busy, expected", [
    ({"min_samples_per_second": 50.0}, True, 0),
    ({"min_samples_per_second": 50.0, "max_data_wait": 0.2}, True, 3),
    ({"min_samples_per_second": 500.0}, True, 3),
    ({"min_samples_per_second": 500.0}, False, 1),
])
def test_the_gates_exit_status_on_a_busy_machine(tmp_path, flags, busy, expected):
    from gpuprof.commands.workflows.gate import run_gate
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report(busy=busy)))
    assert run_gate(str(path), flags=flags, cwd=str(tmp_path)) == expected


def test_no_thresholds_names_every_threshold_flag(tmp_path):
    from gpuprof.errors import UsageProblem
    from gpuprof.commands.workflows.gate import run_gate
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report()))
    with pytest.raises(UsageProblem) as raised:
        run_gate(str(path), flags={"judge_busy_machine": True, "max_data_wait": None}, cwd=str(tmp_path))
    assert str(raised.value).startswith("no thresholds: give --max-data-wait, ")
    for name in config.THRESHOLDS:
        assert config.flag_of(name) in str(raised.value)


def test_the_gate_command_has_a_flag_for_every_threshold_and_no_other():
    import typer

    from gpuprof.commands.cli.app import app, register_commands
    register_commands()
    command = typer.main.get_command(app).commands["gate"]
    flags = {opt for param in command.params for opt in param.opts if opt.startswith("--")}
    thresholds = {flag for flag in flags if flag.startswith(("--max-", "--min-"))}
    assert thresholds == {config.flag_of(name) for name in config.THRESHOLDS}

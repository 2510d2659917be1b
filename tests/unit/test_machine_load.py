"""Other processes' cores during the measured steps: from the machine's CPU columns less the job's
own, said beside the verdict with a lower confidence when notable, and nothing on a quiet machine."""

from gpuprof.judge.sections import machine_load
from gpuprof.judge.sections.machine_load import notable, others_during, with_busy_machine


def record(idle, job_cores, cores=2, n=10):
    """A system record of n one-second samples: the machine's idle share and the job's cores busy."""
    return {"cpu_count": cores, "columns": {"t": [float(i + 1) for i in range(n)], "dt": [1.0] * n,
                                             "cpu_idle": [idle] * n, "cpu_iowait": [0.0] * n,
                                             "job_user_s": [job_cores] * n, "job_system_s": [0.0] * n}}


VERDICT = {"bottleneck": "input.cpu", "confidence": 0.9, "summary": "Input-bound"}


def test_a_core_held_by_another_process_is_said_beside_the_verdict_with_less_confidence():
    others = others_during(record(idle=0.0, job_cores=1.0), 2.0, 9.0)     # machine full, the job used one core
    assert others["other_cores"] == 1.0 and others["notable"] and others["over"] == "steps"
    verdict = with_busy_machine(VERDICT, others)
    assert "1.0 of 2 cores busy" in verdict["busy_machine"] and verdict["confidence"] == 0.45
    assert verdict["bottleneck"] == "input.cpu"


def test_a_quiet_machine_says_nothing_and_keeps_the_confidence():
    others = others_during(record(idle=0.45, job_cores=1.0), 2.0, 9.0)    # 0.1 core of noise
    assert others["other_cores"] == 0.1 and not others["notable"]
    assert with_busy_machine(VERDICT, others) == VERDICT


def test_the_window_falls_back_to_the_run_and_no_columns_is_no_figure():
    assert others_during(record(idle=0.0, job_cores=1.0), 100.0, 200.0)["over"] == "run"
    assert others_during({}, 0.0, 1.0) is None
    assert notable(0.5, 2) and not notable(0.4, 2) and not notable(1.9, 8) and notable(2.0, 8)


def test_under_a_core_limit_others_count_against_the_hosts_cores():
    limited = dict(record(idle=0.0, job_cores=1.0), cpu_count=1, cpu_limit={"host_cpus": 2, "cpus": 1})
    others = others_during(limited, 2.0, 9.0)
    assert others["cpu_count"] == 2 and others["other_cores"] == 1.0
    assert not others["notable"]              # the other core may be the one the job was not allowed


def test_under_a_limit_the_note_speaks_of_the_hosts_cores():
    limited = dict(record(idle=0.0, job_cores=0.2), cpu_count=1, cpu_limit={"host_cpus": 2, "cpus": 1})
    others = others_during(limited, 2.0, 9.0)
    assert others["notable"] and others["job_cores"] == 1
    assert "1.8 of the host's 2 cores busy" in with_busy_machine(VERDICT, others)["busy_machine"]


def test_try_and_the_report_give_one_figure_for_the_cores_others_held():
    # The run's averages say 1.5 other cores (idle 10% of 2 cores, the job 0.3); over the measured
    # steps the report's system.others says 0.7: try's rounds read the report's figure.
    report = {"system": {"cpu_count": 2, "cpu": {"idle": 0.1, "iowait": 0.0}, "job": {"cores_busy": 0.3},
                         "others": {"other_cores": 0.7, "cpu_count": 2, "share": 0.35, "notable": True,
                                    "over": "steps"}}}
    assert machine_load.machine_during(report)["other_cores"] == 0.7
    del report["system"]["others"]
    assert machine_load.machine_during(report)["other_cores"] == 1.5

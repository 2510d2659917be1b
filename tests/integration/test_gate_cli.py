"""The gate on real runs: exit codes, JUnit, TOML configuration, baselines, bad input."""

import json
import os

import pytest

from tests.conftest import PROGRAMS, ROOT
from tests.integration.helpers import env_with_source, gpuprof, load_json

pytest.importorskip("torch")
pytestmark = pytest.mark.torch


#: These runs are made on whatever machine runs the tests, busy or not: judged as measured.
JUDGE = "--judge-busy-machine"


def profiled(tmp_path, name, *args):
    out = tmp_path / name
    got = gpuprof("run", "-q", "--out", str(out), *args, cwd=tmp_path, timeout=300)
    assert got.returncode == 0, got.stderr
    return out


def test_a_starved_run_fails_and_a_tuned_run_passes(tmp_path):
    starved = profiled(tmp_path, "starved", os.path.join(ROOT, "examples", "cpu_starved.py"))
    junit = tmp_path / "gate.xml"
    got = gpuprof("gate", str(starved), "--max-data-wait", "0.2", "--junit", str(junit), JUDGE, cwd=tmp_path)
    assert got.returncode == 1 and "max_data_wait" in got.stderr
    xml = junit.read_text()
    assert "<failure" in xml and "Input-bound" in xml
    tuned = profiled(tmp_path, "tuned", os.path.join(ROOT, "examples", "tuned.py"))
    assert gpuprof("gate", str(tuned / "report.json"), "--max-data-wait", "0.3", JUDGE, cwd=tmp_path).returncode == 0
    (tmp_path / "pyproject.toml").write_text("[tool.gpuprof.gate]\nmax_data_wait = 0.2\njudge_busy_machine = true\n")
    assert gpuprof("gate", str(starved), cwd=tmp_path).returncode == 1
    assert gpuprof("gate", str(tuned), cwd=tmp_path).returncode == 0


def test_a_slower_run_fails_the_regression_check_and_a_run_passes_against_itself(tmp_path):
    script = os.path.join(PROGRAMS, "paced_steps.py")
    # 5 ms against 60 ms of paced compute: on a loaded machine a 20 ms step measured 44 ms (the rest of
    # the step waits for a core), so the two runs differ by far more than any load adds to both.
    base = profiled(tmp_path, "base", script, "5", "30")
    slow = profiled(tmp_path, "slow", script, "60", "30")
    got = gpuprof("gate", str(slow), "--baseline", str(base), "--max-regression", "0.15", JUDGE, cwd=tmp_path)
    assert got.returncode == 1, got.stderr
    assert gpuprof("gate", str(base), "--baseline", str(base), "--max-regression", "0.15", JUDGE,
                   cwd=tmp_path).returncode == 0
    other = profiled(tmp_path, "other", "--steps", "3", os.path.join(ROOT, "examples", "compute_heavy.py"))
    refused = gpuprof("gate", str(other), "--baseline", str(base), "--max-regression", "0.15", cwd=tmp_path)
    assert refused.returncode == 2 and "different program" in refused.stderr


def test_run_with_gate_and_a_step_window(tmp_path):
    gate_file = tmp_path / "gate.toml"
    gate_file.write_text("[tool.gpuprof.gate]\nmax_data_wait = 0.2\njudge_busy_machine = true\n")
    got = gpuprof("run", "-q", "--out", str(tmp_path / "run"), "--steps", "15", "--warmup-steps", "2",
                  "--gate", str(gate_file), "--junit", str(tmp_path / "j.xml"),
                  os.path.join(ROOT, "examples", "cpu_starved.py"), cwd=tmp_path, timeout=300,
                  env=dict(env_with_source(), OMP_NUM_THREADS="1"))    # input-bound whatever else runs
    assert got.returncode == 1                      # the program was stopped politely; the gate failed
    report = load_json(tmp_path / "run" / "report.json")
    assert report["stopped_after_steps"] == 15 and report["steps"]["measured"] == 15
    # Stopped at a step boundary: no KeyboardInterrupt traceback in a CI log.
    assert "Traceback" not in got.stderr and "<failure" in (tmp_path / "j.xml").read_text()


def test_the_programs_failure_wins_over_the_gate(tmp_path):
    gate_file = tmp_path / "gate.toml"
    gate_file.write_text("[tool.gpuprof.gate]\nmax_data_wait = 0.99\n")
    got = gpuprof("run", "-q", "--out", str(tmp_path / "run"), "--gate", str(gate_file),
                  os.path.join(PROGRAMS, "crash.py"), cwd=tmp_path)
    assert got.returncode == 1 and "boom" in got.stderr


def test_a_run_measured_on_a_busy_machine_is_not_decided_unless_asked(tmp_path):
    report = {"format": "gpuprof.report/1", "command": ["python", "train.py"], "verdict": {"summary": "Input-bound"},
              "program": {"kind": "script", "name": "train.py"}, "advice": [],
              "steps": {"data_wait_share": 0.5, "measured": 40},
              "system": {"others": {"other_cores": 1.1, "cpu_count": 2, "share": 0.55, "notable": True, "over": "steps"}}}
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report))
    got = gpuprof("gate", str(path), "--max-data-wait", "0.2", cwd=tmp_path)
    assert got.returncode == 3 and "not decided" in got.stderr and "1.1 of 2 cores busy" in got.stderr, got.stderr
    assert gpuprof("gate", str(path), "--max-data-wait", "0.2", JUDGE, cwd=tmp_path).returncode == 1


@pytest.mark.parametrize("content, message", [
    ("{not json", "not valid JSON"),
    ('{"hello": 1}', "not a gpuprof report"),
    ('{"format": "gpuprof.report/99"}', "gpuprof.report/99"),
])
def test_bad_reports_exit_2_without_a_traceback(tmp_path, content, message):
    path = tmp_path / "r.json"
    path.write_text(content)
    got = gpuprof("gate", str(path), "--max-data-wait", "0.2", cwd=tmp_path)
    assert got.returncode == 2 and message in got.stderr and "Traceback" not in got.stderr
    assert got.stderr.count("\n") == 1


def test_gate_usage_errors(tmp_path):
    missing = gpuprof("gate", str(tmp_path / "nope.json"), "--max-data-wait", "0.2", cwd=tmp_path)
    assert missing.returncode == 2 and "no such report" in missing.stderr
    bad_config = tmp_path / "bad.toml"
    bad_config.write_text("[tool.gpuprof.gate]\nmax_wait = 1\n")
    got = gpuprof("run", "--gate", str(bad_config), os.path.join(PROGRAMS, "busy.py"), cwd=tmp_path,
                  env=env_with_source({"XDG_STATE_HOME": str(tmp_path / "state")}))
    assert got.returncode == 2 and "max_wait" in got.stderr and not (tmp_path / "state").exists()


def _run_folder(path, events: str, meta=None):
    (path / "events").mkdir(parents=True)
    (path / "run.json").write_text(json.dumps(dict({"format": "gpuprof.run/1", "status": "finished", "exit_code": 0,
                                                    "duration_s": 1.0, "command": ["python", "t.py"]}, **(meta or {}))))
    (path / "events" / "h-1-ab.jsonl").write_text(events)
    return path


@pytest.mark.parametrize("events, meta", [
    ('{"k":"process","pid":1,"t":0.0}\n{"k":"step","f":1}\n', None),              # a line without t
    ('{"k":"process","pid":1,"t":0.0}\n{"k":"batch","t":1.0,"w":"x"}\n', None),    # wrong type
    ("[" * 50000 + "]" * 50000 + '\n{"k":"step","t":1.0}\n', None),              # deep nesting
    ('{"k":"process","pid":1,"t":0.0}\n', {"exit_code": "zero"}),                # run.json of wrong types
])
def test_malformed_saved_runs_give_one_line_and_exit_2(tmp_path, events, meta):
    run = _run_folder(tmp_path / "run", events, meta)
    got = gpuprof("report", str(run), cwd=tmp_path)
    assert got.returncode == 2 and got.stderr.count("\n") == 1 and "Traceback" not in got.stderr, got.stderr
    assert "malformed" in got.stderr.replace(str(tmp_path), "")


@pytest.mark.parametrize("content", [
    '{"format": "gpuprof.report/1", "steps": {"data_wait_share": "high", "measured": 3}}',
    '{"format": "gpuprof.report/1", "steps": [1, 2]}',
    "[" * 50000 + "]" * 50000,
])
def test_malformed_reports_give_the_gate_one_line_and_exit_2(tmp_path, content):
    path = tmp_path / "report.json"
    path.write_text(content)
    got = gpuprof("gate", str(path), "--max-data-wait", "0.2", cwd=tmp_path)
    assert got.returncode == 2 and got.stderr.count("\n") == 1 and "Traceback" not in got.stderr, got.stderr

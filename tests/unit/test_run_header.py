"""run.json's header is declared once: every kind of run writes the same common keys in the same
order, each kind's extras in their one place, so saved runs and readers see what they always saw."""

import json

from gpuprof.record.run_header import RunEnd, RunHeader, SamplingSettings

COMMON_BEFORE = ["format", "status", "gpuprof_version", "command", "kind", "target", "host", "python"]
COMMON_AFTER = ["platform", "started_at", "start_monotonic", "end_monotonic", "duration_s", "pid", "returncode",
                "exit_code", "signal", "interrupted", "signals"]
SETTINGS = SamplingSettings(interval_s=0.1, probes=True, gpu=False, max_steps=20, warmup_steps=2)


def header(**fields) -> RunHeader:
    base = dict(command=["python", "train.py"], kind="script", target="train.py", wall_start=0.0,
                start_monotonic=100.0, end_monotonic=112.5, pid=4242, settings=SETTINGS, provenance={})
    base.update(fields)
    return RunHeader(**base)


def test_a_script_run_has_its_interpreter_after_python_and_its_extras_before_the_notes():
    data = header(interpreter={"path": "/usr/bin/python3", "gpuprof": "/venv/bin/python", "same_environment": False},
                  extras={"supervisor_cpu_s": 0.25}, record_notes=["a note"],
                  end=RunEnd(returncode=-15, exit_code=143, signal="SIGTERM", interrupted=True,
                             signals=[{"signal": "SIGTERM"}])).to_json()
    assert list(data) == COMMON_BEFORE + ["interpreter"] + COMMON_AFTER + ["supervisor_cpu_s", "record_notes",
                                                                           "settings"]
    assert data["format"] == "gpuprof.run/1" and data["status"] == "finished"
    assert data["duration_s"] == 12.5 and data["exit_code"] == 143 and data["signal"] == "SIGTERM"
    assert data["interrupted"] is True and data["record_notes"] == ["a note"]
    assert data["settings"] == {"interval_s": 0.1, "probes": True, "gpu": False, "max_steps": 20, "warmup_steps": 2}


def test_an_attach_has_no_interpreter_and_an_end_it_did_not_see():
    data = header(kind="attach", extras={"attach": {"pid": 4242}},
                  settings=SamplingSettings(interval_s=0.1, probes=False, gpu=True)).to_json()
    assert list(data) == COMMON_BEFORE + COMMON_AFTER + ["attach", "record_notes", "settings"]
    assert [data[k] for k in ("returncode", "exit_code", "signal", "interrupted", "signals", "record_notes")] == \
        [None, None, None, False, [], []]
    assert data["settings"] == {"interval_s": 0.1, "probes": False, "gpu": True, "max_steps": None, "warmup_steps": 0}


def test_a_notebook_cell_has_its_error_in_the_extras_place_and_is_plain_json():
    data = header(kind="notebook", end=RunEnd(returncode=1, exit_code=1, interrupted=True),
                  extras={"cell_error": "KeyboardInterrupt: "}).to_json()
    assert list(data) == COMMON_BEFORE + COMMON_AFTER + ["cell_error", "record_notes", "settings"]
    assert json.loads(json.dumps(data)) == data

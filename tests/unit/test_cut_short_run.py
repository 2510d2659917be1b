"""A run cut short, on a saved run made into what a killed supervisor leaves: the
claim run.json (`"status": "running"`, gpuprof's pid), the job's event files, no system samples.
The report analyses the steps recorded, says the run was cut short, and reads the program from
the events."""

import json
import os
import shutil

import pytest

from gpuprof.record.reader import load_run
from gpuprof.present.reporting import cut_short
from gpuprof.present.reporting.build import build_report
from tests.conftest import ROOT

GOLDEN = os.path.join(ROOT, "tests", "golden", "runs", "cpu_starved")


@pytest.fixture
def killed_run(tmp_path):
    """The golden run as a supervisor killed mid-run leaves it (its child's parent was pid 2551)."""
    run_dir = tmp_path / "run"
    shutil.copytree(GOLDEN, run_dir)
    for name in ("system.json", "gpu.json"):
        os.remove(run_dir / name)
    (run_dir / "run.json").write_text(json.dumps({"format": "gpuprof.run/1", "status": "running", "pid": 2551}))
    return str(run_dir)


def test_a_run_whose_supervisor_was_killed_gets_a_verdict_and_says_it_was_cut_short(killed_run):
    finished = build_report(load_run(GOLDEN), run_dir=GOLDEN)
    report = build_report(load_run(killed_run), run_dir=killed_run)
    assert report["verdict"]["bottleneck"] == finished["verdict"]["bottleneck"] == "input.cpu"
    assert report["outcome"] == "cut short: gpuprof and the program were killed (no exit status recorded)"
    assert report["exit_code"] is None
    assert report["steps"]["measured"] == finished["steps"]["measured"]
    assert report["notes"][0].startswith(f"the run was cut short (gpuprof was killed before the program ended): "
                                         f"the verdict rests on the {finished['steps']['measured']} measured steps")
    assert "no system samples" in report["notes"][0]
    # the header's facts the events hold: the program, its host, how long events came
    assert report["program"] == {"kind": "script", "name": "cpu_starved.py"}
    assert report["command"] == ["examples/cpu_starved.py"]
    assert 0 < report["duration_s"] <= finished["duration_s"]


def test_a_claim_without_events_still_has_no_verdict(tmp_path):
    meta = cut_short.completed_meta({"format": "gpuprof.run/1", "status": "running", "pid": 5}, [])
    assert meta["cut_short"] and "command" not in meta
    report = build_report({"meta": {"format": "gpuprof.run/1", "status": "running", "pid": 5}, "processes": []})
    assert report["verdict"].get("bottleneck") is None
    assert report["outcome"].startswith("cut short")


def test_a_kill_after_an_ignored_term_is_cut_short_and_a_kill_alone_may_be_the_oom_killer():
    after_term = {"signal": "SIGKILL", "interrupted": True, "signals": [{"signal": "SIGTERM", "forwarded": True}]}
    assert cut_short.outcome(after_term) == "cut short: SIGTERM did not end it, signal 9 (SIGKILL) did"
    assert cut_short.note(after_term, {"measured": 110}, True).startswith(
        "the run was cut short (killed by SIGKILL after SIGTERM): the verdict rests on the 110 measured steps")
    alone = {"signal": "SIGKILL", "interrupted": False, "signals": []}
    assert cut_short.outcome(alone) is None and cut_short.note(alone, {"measured": 110}, True) is None

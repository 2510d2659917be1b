"""Measured beats estimated in every output: after `run --verify` (or `report` on its folder) each
format ranks by the measurement, shows it beside the estimate, and colours a measured loss as one."""

import json
import os
import shutil

import pytest

from gpuprof.present.render.gate_text import markdown as gate_markdown
from gpuprof.record.reader import load_run
from gpuprof.present.render import formats
from gpuprof.present.reporting.build import build_report
from gpuprof.commands.workflows.report import report_runs
from gpuprof.commands.workflows.verify import with_measurements
from tests.golden import outputs

RUN = os.path.join(outputs.RUNS, "cpu_starved")
SLOWER = {"label": "num-workers", "fix": "num-workers", "speedup": 0.86, "interval_low": 0.8, "interval_high": 0.92,
          "conclusion": "slower"}


class FailedGate:
    passed, checks, summary = False, [], "input-bound"


@pytest.fixture(scope="module")
def verified():
    record = load_run(RUN)
    report = build_report(record, run_dir=RUN)
    ids = [a["id"] for a in report["advice"]]
    assert ids.index("num-workers") < len(ids) - 1          # not last before it was measured
    return with_measurements(report, {"rows": [{"label": "baseline"}, SLOWER]}, RUN), record


def test_the_fix_measured_slower_goes_last_in_the_saved_report(verified):
    report, _ = verified
    ids = [a["id"] for a in report["advice"]]
    assert ids[0] != "num-workers" and ids[-1] == "num-workers"
    saved = json.loads(formats.render("json", report))
    assert saved["advice"][-1]["measured"]["speedup"] == 0.86 and saved["advice"][-1]["estimate"]["low"] > 0


def test_the_terminal_shows_the_measurement_in_the_colour_of_a_loss(verified):
    report, record = verified
    text = formats.render("console", report, record=record, terminal=True, width=160)
    line = next(line for line in text.splitlines() if "measured 0.86x" in line)
    assert "\x1b[1;31m" in line and "\x1b[1;32m" not in line
    plain = formats.render("console", report, record=record)
    assert "measured 0.86x" in plain and "last: gpuprof try measured it 0.86x" in plain


def test_html_and_markdown_mark_the_loss(verified):
    report, record = verified
    html = formats.render("html", report, record=record)
    assert 'class="gain loss">est. ' in html and "measured 0.86x</span>" in html
    md = formats.render("markdown", report)
    row = next(line for line in md.splitlines() if "(`num-workers`)" in line)
    assert "❌ est." in row and "measured 0.86x" in row


def test_the_gate_names_a_measured_loss_neither_first_nor_as_a_gain(verified):
    report, _ = verified
    text = gate_markdown(FailedGate(), report)
    assert "**Top fix:** Make batches in more DataLoader" not in text and "up to" not in text
    only = dict(report, advice=[a for a in report["advice"] if a["id"] == "num-workers"])
    assert "**Top fix:** none: No fix helped" in gate_markdown(FailedGate(), only)


def test_report_on_a_verified_folder_keeps_the_measurement(tmp_path, verified):
    report, _ = verified
    folder = tmp_path / "run"
    shutil.copytree(RUN, folder)
    (folder / "report.json").write_text(json.dumps(report, default=str), encoding="utf-8")
    for fmt, name in (("console", "out.txt"), ("markdown", "out.md"), ("json", "out.json")):
        assert report_runs([str(folder)], fmt, out_path=str(tmp_path / name)) == 0
        text = (tmp_path / name).read_text(encoding="utf-8")
        assert "0.86" in text, fmt
    again = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert again["advice"][-1]["id"] == "num-workers" and again["advice"][-1]["measured"]["conclusion"] == "slower"

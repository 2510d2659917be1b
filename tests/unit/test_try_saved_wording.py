"""A saved `gpuprof try` record shows the "to keep it" line it stored when the try ran, not what
today's fixes would say; a record saved before rows stored it falls back to today's fixes."""

import copy
import dataclasses
import json
import os

import pytest

from gpuprof.advise import fixes
from gpuprof.advise.keeping import keep_line
from gpuprof.commands.experiments import variants
from gpuprof.commands.experiments.results import summarise
from gpuprof.commands.experiments.runner import Settings
from gpuprof.present.render import formats
from tests.golden import outputs

TODAY = "today's wording of how to keep it"


def saved_record() -> dict:
    with open(outputs.TRY_RECORD, "r", encoding="utf-8") as handle:
        return json.load(handle)


def best_row(record: dict) -> dict:
    return next(r for r in record["rows"] if r["label"] == record["best"])


@pytest.fixture
def reworded(monkeypatch):
    """The registry's fix for the saved record's best row, now keeping its change in other words."""
    fix = fixes.get(best_row(saved_record())["fix"])
    assert fix is not None and fix.keep is not None
    monkeypatch.setitem(fixes._BY_ID, fix.id, dataclasses.replace(fix, keep=lambda *args: TODAY))
    return fix


def test_the_saved_golden_record_renders_the_same_with_its_keep_lines_stored():
    record = saved_record()
    settings = record["settings"]
    for row in record["rows"][1:]:
        row["keep"] = keep_line(row["settings"], row["fix"], settings.get("loader"), settings.get("loader_framework"))
    with open(os.path.join(outputs.EXPECTED, "try", "console.txt"), encoding="utf-8") as handle:
        assert formats.render("try-console", record) == handle.read()
    with open(os.path.join(outputs.EXPECTED, "try", "try.md"), encoding="utf-8") as handle:
        assert formats.render("try-markdown", record) == handle.read()


def test_a_stored_keep_line_is_shown_though_the_fix_now_words_it_otherwise(reworded):
    record = saved_record()
    best_row(record)["keep"] = "the wording this try was measured with"
    for fmt in ("try-console", "try-markdown"):
        text = formats.render(fmt, record)
        assert "to keep it, the wording this try was measured with" in text
        assert TODAY not in text


def test_a_record_without_keep_lines_is_worded_by_todays_fixes(reworded):
    assert f"to keep it, {TODAY}" in formats.render("try-console", saved_record())


def test_a_stored_empty_keep_line_says_nothing_rather_than_asking_the_registry(reworded):
    record = saved_record()
    best_row(record)["keep"] = ""
    text = formats.render("try-console", record)
    assert "to keep it" not in text and TODAY not in text


class FakeExperiment:
    def __init__(self, chosen):
        def report(step):
            return {"steps": {"mean_step_s": step, "data_wait_share": 0.5}, "verdict": {"bottleneck": "input.cpu"},
                    "advice": [], "exit_code": 0, "command": ["python", "train.py"]}

        def run(round_no, variant, step):
            return {"round": round_no, "variant": variant, "run_dir": f"r{round_no}-{variant}", "report": report(step),
                    "events": [], "exit_code": 0, "failed": False}

        self.runs = [run(1, None, 0.1)] + [run(1, index, 0.05) for index in range(len(chosen))]
        self.variants = chosen
        self.baseline_report = report(0.1)
        self.folder = "/tmp/x"
        self.loader = "train.py:30"
        self.settings = Settings(steps=10, warmup_steps=2, rounds=1)
        self.notes = []
        self.interrupted = None


def test_a_try_stores_each_rows_keep_line_as_worded_when_it_ran(monkeypatch):
    chosen = variants.parse_set(["num_workers=2"]) + [variants.hdf5_cache(1 << 20)]
    record = summarise(FakeExperiment(chosen))
    loader_row, fix_row = record["rows"][1:]
    assert "num_workers=2" in loader_row["keep"] and "train.py:30" in loader_row["keep"]
    fix = fixes.get(fix_row["fix"])
    assert fix_row["keep"] == fix.keep(fix_row["settings"], "train.py:30", None) != ""
    assert "keep" not in record["rows"][0]

    saved = json.loads(json.dumps(copy.deepcopy(record)))
    monkeypatch.setitem(fixes._BY_ID, fix.id, dataclasses.replace(fix, keep=lambda *args: TODAY))
    saved["best"] = fix_row["label"]
    assert f"to keep it, {fix_row['keep']}" in formats.render("try-console", saved, width=1000)


def test_a_variant_measured_slower_reads_as_a_loss_in_the_terminal():
    from gpuprof.present.render.try_console import render_try
    record = {"command": ["python", "t.py"], "settings": {"rounds": 3, "steps": 40, "warmup_steps": 5}, "folder": "f",
              "rows": [{"label": "baseline", "speedup": 1.0, "step_time_s": 0.1, "steps_per_s": 10.0, "rounds": 3},
                       {"label": "amp", "fix": "mixed-precision", "speedup": 0.86, "interval_low": 0.8,
                        "interval_high": 0.9, "conclusion": "slower", "step_time_s": 0.116, "steps_per_s": 8.6,
                        "rounds": 3}]}
    for width in (200, 60):                                    # the table and the stacked form
        text = render_try(record, terminal=True, width=width)
        assert "\x1b[1;31m0.86x" in text, text

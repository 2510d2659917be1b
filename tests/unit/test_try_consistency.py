"""`try` and `run --verify` never contradict themselves: a speed-up and its
interval are one statistic, an interval too wide to mean anything is "not decided", an undecided
input ceiling is a point estimate that corrects no verdict, the table's step times give the speed-up
beside them, rounds are said to be added only where they can be, and --verify's help, its docs and
its behaviour agree."""

import inspect
import math
import os
import re

import pytest

from gpuprof.commands.experiments import variants
from gpuprof.commands.experiments.results import summarise
from gpuprof.commands.experiments.runner import Experiment, Plan, Settings
from gpuprof.present.render.try_text import lines, speedup_cell
from tests.conftest import ROOT


def report(step, wait=0.5, verdict="input.cpu", advice=()):
    return {"steps": {"mean_step_s": step, "data_wait_share": wait}, "verdict": {"bottleneck": verdict},
            "advice": list(advice), "exit_code": 0, "command": ["python", "train.py"],
            "dataloaders": [{"where": "train.py:30", "num_workers": 0, "framework": None}]}


def run(round_no, variant, step, failed=False, baseline=None):
    rep = report(step) if baseline is None else baseline
    return {"round": round_no, "variant": variant, "run_dir": f"r{round_no}-{variant}", "report": rep,
            "events": [], "exit_code": 1 if failed else 0, "failed": failed}


class Done:
    """An experiment that already ran."""

    def __init__(self, runs, chosen, baseline=None):
        self.runs, self.variants = runs, chosen
        self.baseline_report = baseline or runs[0]["report"]
        self.folder, self.loader, self.notes, self.interrupted = "/tmp/x", "train.py:30", [], None
        self.settings = Settings(steps=10, warmup_steps=2, rounds=2, max_rounds=2)


def measured(pairs, chosen=None, baseline=None):
    """The record of rounds given as (baseline step, variant step)."""
    runs = []
    for r, (base, step) in enumerate(pairs, 1):
        runs += [run(r, None, base), run(r, 0, step)]
    return summarise(Done(runs, chosen or variants.parse_set(["num_workers=2"]), baseline))


def test_the_speed_up_is_the_centre_of_its_own_interval():
    row = measured([(0.12, 0.10), (0.24, 0.10), (0.15, 0.10)])["rows"][1]       # ratios 1.2, 2.4, 1.5
    assert row["speedup"] == pytest.approx(math.sqrt(row["interval_low"] * row["interval_high"]))
    assert row["speedup"] == pytest.approx((1.2 * 2.4 * 1.5) ** (1 / 3))         # not the median, 1.5


def test_the_step_times_in_the_table_give_the_speed_up_beside_them():
    """The issue's table: baseline 669.2 ms, ceiling 565.1 ms (medians), reported as 2.14x."""
    record = measured([(0.700, 0.300), (0.640, 0.830)], chosen=[variants.input_ceiling()])
    base, ceiling = record["rows"]
    assert base["step_time_s"] / ceiling["step_time_s"] == pytest.approx(ceiling["speedup"])
    assert not any("their ratio differs" in line for line in lines(record))


def test_a_run_counted_on_one_side_only_is_said_beside_the_table():
    runs = [run(1, None, 0.10), run(1, 0, 0.05), run(2, None, 0.11), run(2, 0, 0.055),
            run(3, None, 0.30), run(3, 0, None, failed=True)]
    record = summarise(Done(runs, variants.parse_set(["num_workers=2"])))
    from gpuprof.present.render.try_text import table_ratio_line
    note = table_ratio_line(*record["rows"])
    assert note.startswith("num_workers=2: 2.00x compares the runs of the 2 rounds in which it and the baseline "
                           "both counted") and note in lines(record)


def test_an_absurd_interval_after_two_rounds_is_not_decided_rather_than_numbers():
    record = measured([(0.095, 0.10), (1.31, 0.10)])                 # ratios 0.95 and 13.1
    row = record["rows"][1]
    assert row["too_wide"] and row["conclusion"] == "inconclusive"
    assert speedup_cell(row) == f"{row['speedup']:.2f}x, not decided"
    assert record["best"] is None and not record["clear"]
    text = "\n".join(lines(record))
    assert "num_workers=2: not decided after 2 rounds: its rounds measured from 0.95x to 13.10x" in text
    assert "0.00" not in text


@pytest.mark.parametrize("ratios, wide", [([0.02, 300.0], True), ([1.0, 1.0001], False), ([1.5, 1.7], False),
                                          ([0.9, 9.5], True)])
def test_an_interval_is_too_wide_when_its_ends_lie_more_than_ten_times_apart(ratios, wide):
    from gpuprof.commands.experiments import speedups
    judged = speedups.judge(ratios)
    assert judged.too_wide is wide
    assert judged.centre == pytest.approx(math.sqrt(judged.low * judged.high))


def test_an_undecided_input_ceiling_is_a_point_estimate_and_corrects_no_verdict():
    """The issue: "input ceiling: inconclusive ... between 0.02x and 334.75x", then "steps were
    3.53x faster: the input costs 72% of each step"."""
    record = measured([(0.10, 0.10), (1.25, 0.10)], chosen=[variants.input_ceiling()],
                      baseline=report(0.10, wait=0.05, verdict="compute"))
    text = "\n".join(lines(record))
    assert not re.search(r"x faster", text) and "verdict corrected" not in text
    assert ("input check: not decided after 2 rounds: with the input made free steps were 3.54x as fast as a point "
            "estimate (its rounds measured from 1.00x to 12.50x") in text
    assert record["input_check"]["corrected"] is None and record["input_check"]["decided"] is False


def test_an_inconclusive_ceiling_gives_its_interval_and_keeps_the_verdict():
    record = measured([(0.10, 0.11), (0.10, 0.098), (0.10, 0.13)], chosen=[variants.input_ceiling()],
                      baseline=report(0.10, wait=0.4, verdict="input.cpu"))
    row, check = record["rows"][1], record["input_check"]
    assert (f"point estimate (90% interval {row['interval_low']:.2f}x-{row['interval_high']:.2f}x)"
            in "\n".join(lines(record)))
    assert check["corrected"] is None and check["decided"] is False


def test_a_decided_ceiling_still_states_the_share_it_measured():
    record = measured([(0.20, 0.10), (0.21, 0.10), (0.195, 0.10)], chosen=[variants.input_ceiling()],
                      baseline=report(0.20, wait=0.05, verdict="compute"))
    assert record["input_check"]["corrected"].startswith("input-bound")
    assert any(line.startswith("input check: with the input made free, steps were 2.02x faster: the input costs 50%")
               for line in lines(record))


class _Command:
    label = "train"


def _said(tmp_path, rounds, max_rounds, budget=None):
    said = []

    def run_one(run_dir, settings):
        return report(0.5 if "baseline" in run_dir else 0.25), []
    experiment = Experiment(_Command(), Plan(variants=variants.parse_set(["num_workers=2"])), Settings(
        steps=10, warmup_steps=1, rounds=rounds, max_rounds=max_rounds, budget_s=budget, out=str(tmp_path),
        min_window_s=0), say=said.append, run_one=run_one)
    experiment.execute()
    return "\n".join(said)


def test_rounds_are_said_to_be_added_only_where_they_can_be(tmp_path):
    fixed = _said(tmp_path, 2, 2, budget=900)
    assert "rounds are added" not in fixed and "900 s" not in fixed and "in exactly 2 rounds" in fixed
    assert ("2 to 4 rounds: after 2, rounds are added until every speed-up is clear, while another fits in 180 s"
            in _said(tmp_path, 2, 4, budget=180))
    from gpuprof.commands.experiments.plan_words import rounds_words
    assert rounds_words(3, 8) == "3 to 8 rounds: after 3, rounds are added until every speed-up is clear"
    assert rounds_words(1, None) == "exactly 1 round"


def test_verify_help_and_docs_state_the_rounds_it_runs():
    from gpuprof.commands.cli.run import run as run_command
    from gpuprof.commands.workflows.verify import VERIFY_BUDGET_S, VERIFY_MAX_ROUNDS, VERIFY_ROUNDS
    help_text = inspect.signature(run_command).parameters["verify"].default.help
    with open(os.path.join(ROOT, "docs", "try.md"), encoding="utf-8") as handle:
        docs = " ".join(handle.read().split("## `gpuprof run --verify`")[1].split())
    for text in (help_text, docs):
        assert f"{VERIFY_ROUNDS} rounds" in text and f"up to {VERIFY_MAX_ROUNDS}" in text
        assert f"{VERIFY_BUDGET_S:.0f} s" in text


def test_verify_names_a_top_fix_that_needs_a_code_change(monkeypatch, tmp_path):
    """Plain `try --top 1` says "needs a code change: not tried"; --verify skipped it silently."""
    from gpuprof.commands.workflows import trying
    from gpuprof.commands.workflows.verify import verify_estimates
    advice = [{"id": "device-preprocessing", "change": None}, {"id": "pin-memory", "change": {"pin_memory": True}}]
    program = dict(report(0.1, advice=advice))
    asked = {}
    from gpuprof.commands.workflows.options import RunRequest
    monkeypatch.setattr(trying, "try_changes", lambda request: asked.update(top=request.top) or 0)
    verify_estimates(str(tmp_path), program, RunRequest(target=["train.py"], gpu=False, quiet=True))
    experiment = Experiment(_Command(), Plan(variants=[variants.input_ceiling()], top=asked["top"]), Settings())
    experiment.resolve(program)
    assert "fix device-preprocessing (rank 1) needs a code change: not tried" in experiment.notes

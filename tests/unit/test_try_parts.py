"""`gpuprof try`'s pure parts: reading --set, and turning runs into the try record."""

import pytest

from gpuprof.commands.experiments import variants
from gpuprof.commands.experiments.results import estimate_for, summarise
from gpuprof.commands.experiments.runner import Settings
from gpuprof.errors import UsageProblem


def test_set_gives_one_variant_per_value():
    found = variants.parse_set(["num_workers=0,2,4", "pin-memory=yes"])
    assert [v.label for v in found] == ["num_workers=0", "num_workers=2", "num_workers=4", "pin_memory=true"]
    assert found[3].settings == {"pin_memory": True}


@pytest.mark.parametrize("item, message", [
    ("num_workers", "write KEY=VALUE"), ("workers=2", "not a setting try can change"),
    ("num_workers=two", "not a whole number"), ("num_workers=-1", "at least 0"), ("pin_memory=maybe", "true or false"),
])
def test_bad_set_values_are_refused(item, message):
    with pytest.raises(UsageProblem, match=message):
        variants.parse_set([item])


def test_batch_size_warns_that_it_changes_the_optimisation():
    assert "changes the optimisation" in variants.parse_set(["batch_size=64"])[0].caution


def test_fixes_that_need_code_are_refused_and_applicable_ones_follow_the_advice():
    with pytest.raises(UsageProblem, match="cannot be tried without editing"):
        variants.from_advice({"id": "device-preprocessing", "change": None})
    v = variants.from_advice({"id": "num-workers", "change": {"num_workers": 2, "persistent_workers": True}})
    assert v.settings == {"num_workers": 2, "persistent_workers": True} and v.fix_id == "num-workers"
    assert variants.from_advice({"id": "batch-echoing", "change": {"echo": 2}}).settings == {"echo": 2}


def report(step, wait=0.5, verdict="input.cpu", advice=()):
    return {"steps": {"mean_step_s": step, "data_wait_share": wait}, "verdict": {"bottleneck": verdict},
            "advice": list(advice), "exit_code": 0, "command": ["python", "train.py"]}


class FakeExperiment:
    def __init__(self, runs, chosen, baseline):
        self.runs = runs
        self.variants = chosen
        self.baseline_report = baseline
        self.folder = "/tmp/x"
        self.loader = "train.py:30"
        self.settings = Settings(steps=10, warmup_steps=2, rounds=3)
        self.notes = []
        self.interrupted = None


def run(round_no, variant, step, failed=False, events=()):
    return {"round": round_no, "variant": variant, "run_dir": f"r{round_no}-{variant}", "report": report(step),
            "events": list(events), "exit_code": 1 if failed else 0, "failed": failed}


def test_speedups_are_per_round_ratios_with_their_spread():
    advice = [{"id": "num-workers", "estimated_speedup": 1.8, "change": {"num_workers": 2, "persistent_workers": True}}]
    chosen = variants.parse_set(["num_workers=2,4"])
    runs = []
    for r, base in ((1, 0.10), (2, 0.12), (3, 0.11)):
        runs += [run(r, None, base), run(r, 0, base / 2.0), run(r, 1, base / 1.5)]
    record = summarise(FakeExperiment(runs, chosen, report(0.10, advice=advice)))
    rows = {row["label"]: row for row in record["rows"]}
    assert rows["num_workers=2"]["speedup"] == pytest.approx(2.0)
    assert rows["num_workers=2"]["speedup_min"] == pytest.approx(2.0) and rows["num_workers=2"]["rounds"] == 3
    assert rows["num_workers=2"]["estimate"] == 1.8 and rows["num_workers=4"]["estimate"] is None
    assert record["best"] == "num_workers=2"
    assert record["sweeps"] == [{"key": "num_workers", "best": 2, "speedup": pytest.approx(2.0), "as_good": [2]}]
    assert record["exit_code"] == 0


def test_a_ceiling_that_disagrees_with_the_verdict_corrects_it():
    chosen = [variants.input_ceiling()]
    runs = [run(1, None, 0.2), run(1, 0, 0.1)]
    record = summarise(FakeExperiment(runs, chosen, report(0.2, wait=0.05, verdict="compute")))
    check = record["input_check"]
    assert check["measured_input_share"] == pytest.approx(0.5)
    assert check["corrected"].startswith("input-bound, not compute")
    assert record["rows"][1]["estimate"] == pytest.approx(1.05, abs=0.01)


def test_a_crashed_variant_is_a_row_and_a_failed_baseline_is_the_exit_status():
    chosen = variants.parse_set(["num_workers=2"])
    record = summarise(FakeExperiment([run(1, None, 0.1), run(1, 0, None, failed=True)], chosen, report(0.1)))
    assert record["rows"][1]["failed"] == [1] and record["rows"][1]["speedup"] is None and record["exit_code"] == 0
    failed = summarise(FakeExperiment([run(1, None, None, failed=True)], [], report(None)))
    assert failed["exit_code"] == 1


def test_estimate_for_ceiling_is_one_over_one_minus_wait():
    assert estimate_for({"settings": {"ceiling": True}}, report(0.1, wait=0.75)) == 4.0


def test_a_ceiling_below_one_reads_no_faster_with_what_its_spread_allows():
    from gpuprof.present.render.try_text import lines
    chosen = [variants.input_ceiling()]
    runs = []
    for r, (base, free) in enumerate(((0.10, 0.11), (0.10, 0.109), (0.10, 0.111)), 1):
        runs += [run(r, None, base), run(r, 0, free)]
    record = summarise(FakeExperiment(runs, chosen, report(0.10, wait=0.4, verdict="input.cpu")))
    text = "\n".join(lines(record))
    assert "x faster" not in text.split("verdict corrected")[0]
    assert "steps were no faster (0.91x; 90% interval over 3 rounds " in text
    assert "the input costs no measurable share of each step" in text
    assert record["input_check"]["corrected"].startswith("not input-bound: with the input made free steps were no "
                                                          "faster (0.91x)")


def test_a_ceiling_above_one_still_reads_faster():
    from gpuprof.present.render.try_text import lines
    record = summarise(FakeExperiment([run(1, None, 0.2), run(1, 0, 0.1)], [variants.input_ceiling()],
                                      report(0.2, wait=0.5, verdict="input.cpu")))
    assert any(line.startswith("input check: with the input made free, steps were 2.00x faster: the input costs 50%")
               for line in lines(record))

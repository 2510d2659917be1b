"""One estimate per fix: a range computed once (advice.rank, from the step model's uncertainty),
which every output words the same way, and whose high end bounds what was measured."""

import os

import pytest

from gpuprof.advise import model
from gpuprof.advise.fix import Fix
from gpuprof.advise.rank import advise, capped
from gpuprof.judge.verdict.classify import classify
from gpuprof.commands.experiments.results import estimate_for, estimate_range_for
from gpuprof.present.render import formats
from tests.golden import outputs
from tests.unit.test_verdict_and_advice import sections

#: Measured by `gpuprof try` on the examples (docs/benchmarks.md, three sessions): each range the
#: saved run of the same example gives now must hold them.
MEASURED = {
    "cpu_starved": {"num-workers": (1.40, 1.13, 1.94, 1.50), "batch-echoing": (2.35, 1.47, 1.80, 1.77)},
    "disk_random_reads": {"num-workers": (1.83, 1.12), "batch-echoing": (2.20, 1.80)},
    "hdf5_tiny_cache": {"hdf5-chunk-cache": (13.31, 14.05, 14.42), "num-workers": (1.39, 1.71),
                        "batch-echoing": (2.03, 1.53)},
    "remote_source": {"num-workers": (10.76, 10.58, 10.38, 10.71), "batch-echoing": (2.04, 2.02, 2.00)},
    "contended_workers": {"batch-echoing": (1.47, 1.23)},
}


NO_RECORD = {"meta": {}, "system": {}, "gpu": {}, "processes": []}


def saved_advice(name: str) -> dict:
    from gpuprof.record.reader import load_run
    from gpuprof.present.reporting.build import build_report
    report = build_report(load_run(os.path.join(outputs.RUNS, name)), run_dir=outputs.RUN_DIR)
    return {item["id"]: item for item in report["advice"]}


@pytest.mark.parametrize("name", sorted(MEASURED))
def test_the_ranges_hold_what_try_measured_on_the_examples(name):
    advice = saved_advice(name)
    for fix_id, measured in MEASURED[name].items():
        estimate = advice[fix_id]["estimate"]
        inside = [m for m in measured if estimate["low"] <= m <= estimate["high"]]
        assert len(inside) == len(measured), (fix_id, estimate, measured)
        assert estimate["low"] <= advice[fix_id]["estimated_speedup"] <= estimate["high"]
        assert advice[fix_id]["estimated_speedup"] == pytest.approx((estimate["low"] + estimate["high"]) / 2, abs=0.006)


def test_a_fix_with_one_number_gets_its_range_from_the_step_model(monkeypatch):
    one = Fix(id="one-number", title="t", effort=1, addresses=("input.cpu",),
              build=lambda ev, s: {"estimated_speedup": 1.5})
    ends = Fix(id="own-ends", title="t", effort=1, addresses=("input.cpu",),
               build=lambda ev, s: {"estimated_speedup": 1.5, "estimate_low": 1.45, "estimate_high": 1.52})
    monkeypatch.setattr("gpuprof.advise.fixes.SPEED", (one, ends))
    monkeypatch.setattr("gpuprof.advise.fixes.get", lambda fix_id: {f.id: f for f in (one, ends)}.get(fix_id))
    narrow = dict(sections(wait=0.5))
    narrow["steps"] = dict(narrow["steps"], p90_step_s=0.0105, median_step_s=0.01)     # 5% spread
    result = classify(narrow)
    items = {a["id"]: a for a in advise(result["evidence"], result["verdict"], result["findings"])}
    derived, own = items["one-number"]["estimate"], items["own-ends"]["estimate"]
    assert derived["low"] < 1.5 < derived["high"] and own["low"] < 1.5 < own["high"]
    # The fix's own ends are narrower than the assumed saving's: the range says so.
    assert derived["low"] < own["low"] and own["high"] < derived["high"]
    # A wider spread of the measured steps widens the range.
    wide = dict(narrow, steps=dict(narrow["steps"], p90_step_s=0.013))
    result = classify(wide)
    wider = {a["id"]: a for a in advise(result["evidence"], result["verdict"], result["findings"])}["one-number"]
    assert wider["estimate"]["low"] < derived["low"] and wider["estimate"]["high"] > derived["high"]


def test_the_optimistic_end_sheds_the_compute_slowdown_only_for_input_fixes():
    ev = classify(sections(wait=0.5))["evidence"]
    plain = model.estimate_range(ev, 1.5)
    relieved = model.estimate_range(ev, 1.5, relieves_compute=True)
    assert plain[0] == relieved[0] and relieved[1] > plain[1]


def test_a_capped_estimate_keeps_its_range_under_the_cap():
    item = {"id": "num-workers", "estimated_speedup": 2.0, "estimate": {"low": 1.5, "high": 2.5}}
    assert capped(item, 3.0) is item
    assert capped(item, 1.8)["estimate"] == {"low": 1.5, "high": 1.8}
    assert capped(item, 1.2)["estimate"] == {"low": 1.2, "high": 1.2}


def test_every_output_words_the_estimate_as_the_same_range_and_never_up_to():
    data = sections()
    result = classify(data)
    advice = advise(result["evidence"], result["verdict"], result["findings"])
    report = {"command": ["python", "train.py"], "outcome": "exited with status 0", "duration_s": 10.0,
              "verdict": result["verdict"], "advice": advice, "steps": {}, "system": {"cpu_count": 2}}
    top = advice[0]
    words = f"{top['estimate']['low']:.2f}–{top['estimate']['high']:.2f}x"
    for fmt in ("console", "markdown", "json", "html"):
        text = formats.render(fmt, report, record=NO_RECORD)
        assert "up to" not in text, fmt
        if fmt != "json":
            assert words in text, fmt
    from gpuprof.present.render.gate_text import markdown
    gate = markdown(type("Result", (), {"passed": False, "checks": [], "summary": "s"})(), report)
    assert words in gate and "up to" not in gate


def test_try_reads_the_estimate_of_the_baseline_report_item():
    baseline = {"advice": [{"id": "num-workers", "estimated_speedup": 1.6, "estimate": {"low": 1.2, "high": 2.0},
                            "change": {"num_workers": 2}}]}
    variant = {"fix": "num-workers", "settings": {"num_workers": 2}}
    assert estimate_for(variant, baseline) == 1.6
    assert estimate_range_for(variant, baseline) == {"low": 1.2, "high": 2.0}
    from gpuprof.present.render.try_text import estimate_cell
    assert estimate_cell({"estimate": 1.6, "estimate_range": {"low": 1.2, "high": 2.0}}) == "1.20–2.00x"
    assert estimate_range_for({"settings": {"ceiling": True}}, baseline) is None


def test_run_verify_keeps_the_estimate_of_the_run_s_own_report():
    from gpuprof.commands.workflows.verify import with_measurements
    report = {"advice": [{"id": "num-workers", "estimated_speedup": 1.6, "estimate": {"low": 1.2, "high": 2.0},
                          "change": {"num_workers": 2}}]}
    record = {"rows": [{"label": "baseline"}, {"label": "num-workers", "fix": "num-workers", "speedup": 1.45,
                                               "interval_low": 1.3, "interval_high": 1.6, "conclusion": "faster",
                                               "estimate": 1.24, "estimate_range": {"low": 1.0, "high": 1.5}}]}
    out = with_measurements(report, record, "/tmp/run")
    row = out["verified"]["rows"][0]
    assert row["estimate"] == 1.6 and row["estimate_range"] == {"low": 1.2, "high": 2.0}
    assert out["advice"][0]["measured"]["speedup"] == 1.45


def test_try_s_table_and_markdown_show_the_report_s_range():
    record = {"command": ["python", "train.py"], "settings": {"rounds": 3, "steps": 20, "warmup_steps": 3},
              "rows": [{"label": "baseline", "speedup": 1.0, "step_time_s": 0.01, "steps_per_s": 100.0,
                        "rounds": 3, "verdicts": []},
                       {"label": "num-workers", "fix": "num-workers", "speedup": 0.86, "interval_low": 0.8,
                        "interval_high": 0.9, "conclusion": "slower", "estimate": 1.6, "rounds": 3,
                        "estimate_range": {"low": 1.2, "high": 2.0}, "step_time_s": 0.0116, "steps_per_s": 86.0,
                        "verdicts": []}]}
    plain = formats.render("try-console", record)
    assert "1.20–2.00x" in plain and "up to" not in plain
    assert "1.20–2.00x" in formats.render("try-markdown", record)

"""Figures a report may not print: parts of one whole past 100%, a CPU share above 100% for one
thread, one value rounded two ways, a ranking note the order shown contradicts, and gpuprof's own
small cost left beside a run slowed by another program without saying which to believe."""

import json
import os

import pytest

from gpuprof.advise.fixes import device_preprocessing
from gpuprof.advise.rank import advise
from gpuprof.advise.situation import Situation
from gpuprof.judge.verdict.bottlenecks import compute
from gpuprof.judge.verdict.evidence import Evidence, gather
from gpuprof.judge.sections.loaders import analyse_loaders
from gpuprof.judge.verdict.rules.inputs import producer_split
from gpuprof.judge.sections.self_cost import self_cost_section
from gpuprof.present.render import formats
from gpuprof.present.render.units import pct
from tests.golden import outputs
from tests.unit.fixes.cases import LOADER, evidence

#: Rounding each part to 4 digits may carry a sum past 1 by this much.
ROUNDING = 1e-3


def _numbers(node, path=()):
    """(path, value) of every number in a JSON document."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _numbers(value, path + (str(key),))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _numbers(value, path + (str(index),))
    elif isinstance(node, (int, float)) and not isinstance(node, bool):
        yield path, node


def _key(path) -> str:
    return next((part for part in reversed(path) if not part.isdigit()), "")


def _part_lists(node, path=()):
    """(path, [shares]) of every list of parts of one whole: `*split*` and `shares` dicts, and
    `parts` lists of items with a share."""
    if isinstance(node, dict):
        for key, value in node.items():
            if isinstance(value, dict) and ("split" in key or key == "shares"):
                yield path + (key,), [v for v in value.values() if isinstance(v, (int, float))]
            if key == "parts" and isinstance(value, list):
                yield path + (key,), [p.get("share") or 0.0 for p in value if isinstance(p, dict)]
            yield from _part_lists(value, path + (key,))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _part_lists(value, path + (str(index),))


def _golden_reports():
    from gpuprof.record.reader import load_run
    from gpuprof.present.reporting.build import build_report
    for name in outputs.run_names():
        yield name, json.loads(json.dumps(build_report(load_run(os.path.join(outputs.RUNS, name)))))


def test_every_share_of_the_golden_reports_lies_in_0_1_and_every_part_list_sums_to_at_most_the_whole():
    wrong = []
    for name, report in _golden_reports():
        for path, value in _numbers(report):
            key = _key(path)
            if key.endswith("_pct") and not 0 <= value <= 100:
                wrong.append((name, ".".join(path), value))
            elif ("share" in key or "fraction" in key) and not key.endswith("_pct") and not 0 <= value <= 1:
                wrong.append((name, ".".join(path), value))
        for path, shares in _part_lists(report):
            if sum(shares) > 1 + ROUNDING or any(not 0 <= s <= 1 for s in shares):
                wrong.append((name, ".".join(path), shares))
    assert not wrong, wrong


def _fetch(wall, cpu, queued=0.0, n=64):
    return {"k": "fetch", "l": 1, "w": None, "t": 1.0, "n": n, "wall": wall, "cpu": cpu, "sys": 0.0,
            "rq": queued, "rb": 0, "rc": 0}


def _loader_sections(fetch):
    loader = {"l": 1, "where": "train.py:42", "num_workers": 0, "batch_size": 32}
    batch = {"k": "batch", "l": 1, "t": 1.0, "n": 64, "w": 0.5}
    loaders = analyse_loaders([loader], [batch], [fetch], [])
    return loaders, {"steps": {"count": 65, "measured": 64, "data_wait_share": 0.4, "data_wait_source": "dataloader",
                               "window_s": 2.0},
                     "dataloaders": loaders,
                     "system": {"cpu_count": 4, "job": {"cores_busy": 1.0}, "cpu": {"idle": 0.7, "iowait": 0.0}}}


def test_one_threads_cpu_over_its_wall_is_at_most_all_of_it_whatever_the_ticks_made_of_short_batches():
    """158 µs batches read in 4 ms ticks: the thread's CPU came out 1.6x its wall time."""
    loaders, sections = _loader_sections(_fetch(wall=0.0101, cpu=0.016))
    producer = loaders[0]["producer"]
    assert producer["cpu_per_wall"] == pytest.approx(1.0) and producer["cpu_s"] <= producer["wall_s"]
    ev = gather(sections)
    why = device_preprocessing.build(ev, Situation(verdict={"bottleneck": "input.cpu", "share": 0.4}))["why"]
    assert "CPU-bound (100% CPU)" in why, why


def test_computing_and_waiting_for_a_core_are_parts_of_one_whole():
    """CPU 26% and the wait for a core 76% of the producer's time: two clocks, 102% together."""
    loaders, sections = _loader_sections(_fetch(wall=10.0, cpu=2.6, queued=7.6))
    split = producer_split(gather(sections))
    assert sum(split.values()) <= 1.0 + 1e-9, split
    assert split["waiting_for_cpu"] == pytest.approx(0.76)       # the fine clock kept, the coarse one trimmed
    producer = loaders[0]["producer"]
    assert producer["cpu_s"] + producer["runqueue_s"] <= producer["wall_s"] + 1e-9


def test_a_process_whose_other_threads_helped_keeps_their_share_when_its_own_cpu_is_trimmed():
    fetch = dict(_fetch(wall=1.0, cpu=1.2), pc=1.7)
    producer = analyse_loaders([{"l": 1, "where": "a.py:1", "num_workers": 0}], [], [fetch], [])[0]["producer"]
    assert producer["cpu_s"] == pytest.approx(1.0) and producer["process_cpu_s"] == pytest.approx(1.5)


@pytest.mark.parametrize("wait", [0.0, 0.0049, 0.005, 0.0051, 0.0055, 0.0149, 0.015, 0.26])
def test_the_compute_verdict_says_the_data_wait_as_the_report_rounds_it_and_never_only_0_percent(wait):
    ev = evidence(wait_share=wait, producer_cpu_ratio=None, producer_user_ratio=None, cores_busy=1.0, cpu_count=2)
    finding = compute.evaluate(ev)
    text = compute.words("Compute-bound", finding)
    assert "only 0%" not in text
    if pct(wait) == "0%":
        assert "under 1% of step time" in text
    else:
        assert f"only {pct(wait)} of each step waits" in text, text


def test_a_note_on_where_a_fix_ranks_is_true_of_the_order_shown():
    """A cached deterministic part (not estimated) above batch echoing (estimated, changes what the
    model trains on): no fix may say it ranks after the estimated fixes with one below it, and
    the one that stands above an estimate says why."""
    augmentation = {"random": ["torch.randn at train.py:20"], "deterministic": ["Resize"], "checked": True}
    ev = evidence(loader=dict(LOADER, augmentation=augmentation), wait_share=0.3, cpu_count=4)
    advice = advise(ev, {"bottleneck": "input.cpu", "share": 0.3, "evidence": {}}, [])
    ids = [a["id"] for a in advice]
    assert ids.index("cache-preprocessed") < ids.index("batch-echoing"), ids
    for index, item in enumerate(advice):
        estimated_below = [b["id"] for b in advice[index + 1:] if b["estimated_speedup"] is not None]
        said = f"{item.get('why')} {item.get('ranked_by')}"
        assert not ("ranked after the estimated fixes" in said and estimated_below), (item["id"], estimated_below)
    cached = advice[ids.index("cache-preprocessed")]
    assert cached["ranked_by"].startswith("ahead of batch-echoing") and "keeps training the same" in cached["ranked_by"]


def _busy_record(cores=2, n=10):
    """Another program keeps the machine full; the job uses one core."""
    return {"cpu_count": cores, "columns": {"t": [float(i + 1) for i in range(n)], "dt": [1.0] * n,
                                             "cpu_idle": [0.0] * n, "cpu_iowait": [0.0] * n,
                                             "job_user_s": [1.0] * n, "job_system_s": [0.0] * n}}


def test_beside_a_busy_machine_every_output_says_the_slowdown_is_the_others_load_not_gpuprofs_cost():
    meta = {"supervisor_cpu_s": 0.05, "samplers_cpu_s": {"system": 0.01}, "duration_s": 10.0}
    overhead = self_cost_section(meta, [[{"k": "process", "pid": 7}]], _busy_record())
    said = overhead["beside_busy_machine"]
    assert "other processes' load slowed it, not gpuprof's own cost" in said
    assert "1.0 of 2 cores busy over the run" in said and "gpuprof 0.01 of a core (0.5% of the job's CPU)" in said
    quiet = dict(_busy_record(), columns=dict(_busy_record()["columns"], cpu_idle=[0.5] * 10))
    assert "beside_busy_machine" not in self_cost_section(meta, [[{"k": "process", "pid": 7}]], quiet)

    from gpuprof.record.reader import load_run
    from gpuprof.present.reporting.build import build_report
    record = load_run(os.path.join(outputs.RUNS, "cpu_starved"))
    report = dict(build_report(record), overhead=overhead)
    for fmt in ("console", "markdown", "html", "json"):
        text = formats.render(fmt, report, record=record, width=400)
        assert "slowed it, not gpuprof" in text, fmt


def test_the_html_table_of_producers_never_puts_one_thread_above_all_of_its_time_on_a_cpu():
    import re
    from gpuprof.record.reader import load_run
    from gpuprof.present.reporting.build import build_report
    record = load_run(os.path.join(outputs.RUNS, "data_parallel"))
    page = formats.render("html", build_report(record), record=record)
    cells = re.findall(r"<tr><td>[^<]*</td><td>\d+</td><td>[^<]*</td><td>(\d+)%</td></tr>", page)
    assert cells and all(int(cell) <= 100 for cell in cells), cells

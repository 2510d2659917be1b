"""The timeline, the trace and the HTML page, from a small run record built by hand."""

import json
import re

from gpuprof.judge.sections.timeline import build_timeline
from gpuprof.record.bounded import BoundedEvents
from gpuprof.present.render.html import render_html
from gpuprof.present.render.svg import Series, line_chart, nice_ticks, thin_points
from gpuprof.present.render.trace import MACHINE_PID, trace_events
from gpuprof.present.reporting.build import build_report
from tests import trace_format

START = 100.0
TRAINING, WORKER_0, WORKER_1 = 10, 11, 12
STEP, FETCH = 0.05, 0.09


def _record(steps=40, gpu=False, hostile=""):
    """A training process (40 optimizer steps, each waiting 30 ms for its batch) fed by two
    DataLoader workers that take 90 ms per batch; the sampler ran every 100 ms."""
    training = [{"k": "process", "pid": TRAINING, "ppid": 1, "argv": ["train.py"], "origin": "exec", "t": START},
                {"k": "loader", "l": "10:1", "t": START + 0.5, "where": f"train.py:12{hostile}", "batch_size": 8,
                 "num_workers": 2, "pin_memory": False, "prefetch_factor": 2, "persistent_workers": False,
                 "context": "fork", "dataset": "Images", "sampler": "RandomSampler", "iterable": False},
                {"k": "epoch", "l": "10:1", "t": START + 0.5, "start_s": 0.01}]
    workers = {WORKER_0: [{"k": "process", "pid": WORKER_0, "ppid": TRAINING, "argv": ["train.py"],
                           "origin": "fork", "t": START + 0.5}],
               WORKER_1: [{"k": "process", "pid": WORKER_1, "ppid": TRAINING, "argv": ["train.py"],
                           "origin": "fork", "t": START + 0.5}]}
    t = START + 1.0
    for i in range(steps):
        worker = WORKER_0 if i % 2 == 0 else WORKER_1
        workers[worker].append({"k": "fetch", "l": "10:1", "w": i % 2, "ds": "Images", "pid": worker,
                                "t": t + 0.03, "wall": FETCH, "cpu": 0.085, "sys": 0.001, "rq": 0.0, "rb": 0, "rc": 0})
        training.append({"k": "batch", "l": "10:1", "pid": TRAINING, "t": t + 0.03, "w": 0.03})
        training.append({"k": "mem", "pid": TRAINING, "t": t + STEP, "rss": 300e6 + i * 1e5})
        training.append({"k": "step", "pid": TRAINING, "t": t + STEP})
        t += STEP
    groups = []
    for events in (training, workers[WORKER_0], workers[WORKER_1]):
        bounded = BoundedEvents()
        for event in events:
            bounded.add(event)
        groups.append(bounded.events())
    ticks = int((t - START) / 0.1) + 2
    times = [START + 0.1 * (i + 1) for i in range(ticks)]
    system = {"interval_s": 0.1, "cpu_count": 2, "ticks": ticks, "stride": 1, "processes": [],
              "columns": {"t": times, "dt": [0.1] * ticks, "cpu_user": [0.8] * ticks, "cpu_system": [0.1] * ticks,
                          "cpu_iowait": [0.0] * ticks, "cpu_steal": [0.0] * ticks, "cpu_idle": [0.1] * ticks,
                          "job_user_s": [0.17] * ticks, "job_system_s": [0.01] * ticks,
                          "job_read_bytes": [1e5] * ticks, "job_read_chars": [2e5] * ticks,
                          "job_rss": [9e8] * ticks, "job_procs": [3] * ticks, "disk_read_bytes": [2e5] * ticks,
                          "disk_write_bytes": [0] * ticks, "disk_busy": [0.01] * ticks,
                          "psi_cpu_some": [0.2] * ticks, "psi_io_some": [0.0] * ticks, "psi_io_full": [0.0] * ticks,
                          "psi_memory_some": [0.0] * ticks, "psi_memory_full": [0.0] * ticks}}
    gpus = {"available": False, "reason": "no GPU here", "gpus": []}
    if gpu:
        gpus = {"available": True, "reason": None, "driver": "1", "unsupported": [], "gpus": [{
            "index": 0, "name": "Fake GPU", "mem_total": 16e9, "clock_events": {}, "job_memory": {},
            "series": {"stride": 1, "ticks": ticks, "columns": {
                "t": times, "util_gpu": [0.3] * ticks, "util_memory": [0.1] * ticks, "mem_used": [4e9] * ticks,
                "pcie_rx_bps": [1e8] * ticks, "pcie_tx_bps": [1e7] * ticks, "sm_clock_mhz": [1500] * ticks}}}]}
    meta = {"format": "gpuprof.run/1", "status": "finished", "command": ["python", "train.py", hostile],
            "kind": "script", "target": "train.py", "start_monotonic": START, "end_monotonic": t + 0.2,
            "duration_s": t + 0.2 - START, "exit_code": 0, "signal": None, "interrupted": False,
            "settings": {"interval_s": 0.1, "probes": True, "warmup_steps": 0}}
    return {"meta": meta, "system": system, "gpu": gpus, "processes": groups}


def _report(record):
    return build_report(record, run_dir="run")


def test_timeline_names_each_process_by_its_role():
    record = _record()
    timeline = build_timeline(record, _report(record))
    roles = {p["pid"]: (p["role"], p["name"]) for p in timeline["processes"]}
    assert roles[TRAINING] == ("training", "training")
    assert roles[WORKER_0] == ("worker", "DataLoader worker 0 of train.py:12")
    assert roles[WORKER_1] == ("worker", "DataLoader worker 1 of train.py:12")


def test_timeline_steps_are_back_to_back_from_the_first_wait():
    record = _record()
    steps = build_timeline(record, _report(record))["steps"]
    assert len(steps) == 40
    assert abs(steps[0]["start"] - 1.0) < 1e-9          # the first step began with its first wait
    assert all(abs(a["end"] - b["start"]) < 1e-9 for a, b in zip(steps, steps[1:]))
    assert all(abs((s["end"] - s["start"]) - STEP) < 1e-9 for s in steps[1:])


def test_trace_is_valid_and_has_a_track_per_process():
    record = _record(gpu=True)
    report = _report(record)
    trace = trace_events(record, report)
    assert trace_format.problems(trace) == []
    names = trace_format.process_names(trace)
    assert names[TRAINING].startswith("training")
    assert names[WORKER_0].startswith("DataLoader worker 0") and names[WORKER_1].startswith("DataLoader worker 1")
    assert len(trace_format.slices_on(trace, TRAINING, "steps")) == report["steps"]["count"] == 40
    assert len(trace_format.slices_on(trace, TRAINING, "waiting for data")) == 40
    assert len(trace_format.slices_on(trace, WORKER_0, "making batches")) == 20
    fetch = trace_format.slices_on(trace, WORKER_1, "making batches")[0]
    assert fetch["dur"] == FETCH * 1e6 and fetch["args"]["cpu_ms"] == 85.0
    counters = trace_format.counter_names(trace)
    assert {"CPU, machine (%)", "CPU, job (cores busy)", "disk read (MB/s)", "job memory (MB)",
            "GPU 0 utilisation (%)", "GPU 0 memory (MB)", "GPU 0 PCIe (MB/s)"} <= counters
    assert names[MACHINE_PID].startswith("machine")


def test_trace_slices_of_blocks_stand_for_many_steps():
    """Past the bounded stream's single items, one slice stands for a block of steps (args.steps)."""
    record = _record(steps=6000)
    report = _report(record)
    trace = trace_events(record, report)
    assert trace_format.problems(trace) == []
    steps = trace_format.slices_on(trace, TRAINING, "steps")
    assert len(steps) < 6000
    assert sum(s["args"].get("steps", 1) for s in steps) == report["steps"]["count"] == 6000
    assert steps[-1]["name"].startswith("steps ") and steps[-1]["name"].endswith("-6000")


def test_trace_times_are_microseconds_since_the_program_started():
    record = _record()
    trace = trace_events(record, _report(record))
    first_step = trace_format.slices_on(trace, TRAINING, "steps")[0]
    assert first_step["ts"] == 1.0e6 and first_step["name"] == "step 1 (start-up)"


def test_html_leads_with_the_verdict_and_fixes_then_plots():
    record = _record(gpu=True)
    report = _report(record)
    page = render_html(record, report)
    assert page.index(report["verdict"]["summary"].split(":")[0]) < page.index("Fixes") < page.index("Over time")
    plots = re.findall(r'<svg class="plot"', page)
    assert len(plots) >= 6             # steps, per-worker, CPU x2, disk, memory, GPU x2
    for title in ("Step time and data wait", "Time to make each batch, per producer", "CPU", "Disk reads",
                  "Memory", "GPU 0 (Fake GPU)"):
        assert f"<h3>{title}</h3>" in page
    assert all(d.strip() for d in re.findall(r'class="series"[^>]* d="([^"]*)"', page))


def test_html_is_self_contained_and_escapes_the_programs_text():
    hostile = "<script>alert(1)</script>"
    record = _record(hostile=hostile)
    page = render_html(record, _report(record))
    assert hostile not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert not re.search(r'\s(src|href)=|@import|url\(', page)         # nothing fetched at view time
    points = re.findall(r'data-points="([^"]*)"', page)
    assert points and all(json.loads(p.replace("&quot;", '"').replace("&amp;", "&").replace("&lt;", "<")
                                     .replace("&gt;", ">").replace("&#x27;", "'")) for p in points)


def test_html_shows_the_measured_fixes_next_to_their_estimates():
    record = _record()
    report = dict(_report(record), verified={"rows": [
        {"label": "num_workers=4", "fix": "num-workers", "speedup": 1.4, "speedup_min": 1.3, "speedup_max": 1.5,
         "estimate": 1.6}]})
    page = render_html(record, report)
    assert "<h3>Fixes measured with gpuprof try</h3>" in page and "1.40x" in page and "estimate 1.60x" in page


def test_nice_ticks_are_round_and_cover_the_range():
    assert nice_ticks(0, 83) == [0, 20, 40, 60, 80, 100]
    assert nice_ticks(0, 1.0) == [0, 0.2, 0.4, 0.6, 0.8, 1.0]
    ticks = nice_ticks(4.4, 6.3, 8)
    assert ticks[0] <= 4.4 and ticks[-1] >= 6.3
    assert nice_ticks(0, 0) == [0, 0.2, 0.4, 0.6, 0.8, 1.0]


def test_thinning_keeps_the_mean_and_the_span():
    xs = list(range(10000))
    points = thin_points(xs, [1.0] * 10000, limit=100)
    assert len(points) == 100 and points[0][0] < 50 and points[-1][0] > 9900
    assert all(y == 1.0 for _, y in points)


def test_a_missing_value_breaks_the_line():
    svg = line_chart([Series("a", [0, 1, 2, 3], [1.0, None, 2.0, 3.0])], "ms")
    path = re.search(r'class="series"[^>]* d="([^"]*)"', svg).group(1)
    assert path.count("M") == 2 and path.count("L") == 1

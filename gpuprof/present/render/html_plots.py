"""The HTML report's plots of the run over time, each an SVG figure drawn from the timeline
(gpuprof.judge.sections.timeline) and the report: steps, ranks, workers, CPU, disk, memory, GPUs, pressure,
and what `gpuprof try` measured."""

import html

from gpuprof.judge.sections.loaders import within_wall
from typing import Optional

from gpuprof.record.report_format import Report
from gpuprof.present.render.svg import PALETTE, Series, bar_chart, line_chart
from gpuprof.present.render.units import pct, scaled, seconds

MS = 1000.0


def _esc(value) -> str:
    return html.escape(str(value if value is not None else ""))


def _figure(title: str, chart: str, caption: str = "") -> str:
    if not chart:
        return ""
    caption = f'<figcaption>{caption}</figcaption>' if caption else ""
    return f'<figure><h3>{_esc(title)}</h3>{chart}{caption}</figure>'


def time_frame(timeline) -> dict:
    """What every chart over time shares: the run's whole span on x, and the measured window shaded."""
    window = timeline.get("window")
    band = None
    if window and window[1] > window[0]:
        band = (window[0], window[1], "measured window (start-up and warm-up steps left out)")
    duration = timeline.get("duration_s")
    return {"band": band, "x_range": (0.0, duration) if duration else None}


def _per_item(intervals, value):
    """(x, y) per interval: its end, and `value(interval)` per item (a block's mean)."""
    return [(i["end"], value(i) / i["n"]) for i in intervals]


def _series(name: str, points) -> Series:
    """A line through (x, y) points."""
    return Series(name, [x for x, _ in points], [y for _, y in points])


def step_plot(timeline, report, frame) -> str:
    steps = timeline["steps"]
    if not steps:
        return ""
    training = (report.get("steps") or {}).get("pid")
    step_points = _per_item(steps[1:] or steps, lambda s: (s["end"] - s["start"]) * MS)
    waits = [w for w in timeline["waits"] if w["pid"] == training]
    series = [_series("step time", step_points)]
    if waits:
        series.append(_series("wait for the batch", _per_item(waits, lambda w: w["wait"] * MS)))
    return _figure("Step time and data wait", line_chart(series, "ms", **frame, label="step time and data wait"),
                   "Each point is one step (the start-up step is left out) or one wait for a batch; the shaded "
                   "part is the measured window. Later points of a long run stand for blocks of steps (their mean).")


def rank_plot(timeline, report, frame) -> str:
    """Each rank's wait for its batches: the straggler's stands out (its step time alone would not)."""
    rows = report.get("ranks") or []
    series = []
    for row in rows:
        waits = [w for w in timeline["waits"] if w["pid"] == row.get("pid")]
        if waits:
            series.append(_series(f"rank {row.get('rank')}", _per_item(waits, lambda w: w["wait"] * MS)))
    if len(series) < 2:
        return ""
    return _figure("Wait for each batch, per rank", line_chart(series, "ms", **frame, label="data wait per rank"),
                   "In a synchronous job every rank's step lasts as long as the slowest one's; the rank that waits "
                   "for its data is the one the others wait for.")


def worker_plot(timeline, frame) -> str:
    by_producer: dict = {}
    names = {p["pid"]: p["name"] for p in timeline["processes"]}
    for fetch in timeline["fetches"]:
        key = fetch["pid"]
        by_producer.setdefault(key, []).append(fetch)
    if not by_producer:
        return ""
    series = []
    for pid, fetches in sorted(by_producer.items(), key=lambda kv: names.get(kv[0], "")):
        label = names.get(pid, f"pid {pid}")
        label = "the training process" if label == "training" else f"{label.split(' of ')[0]} (pid {pid})"
        series.append(_series(label, _per_item(fetches, lambda f: f["wall"] * MS)))
    rows = []
    for s, fetches in zip(series, sorted(by_producer.values(), key=lambda f: names.get(f[0]["pid"], ""))):
        made = sum(f["n"] for f in fetches)
        wall = sum(f["wall"] for f in fetches)
        # The thread's CPU over its wall time as the report gives it: at most all of it (within_wall).
        on_cpu = within_wall({"wall_s": wall, "cpu_s": sum(f["cpu"] for f in fetches),
                              "runqueue_s": sum(f.get("runqueue") or 0.0 for f in fetches)})["cpu_per_wall"]
        rows.append(f"<tr><td>{_esc(s.name)}</td><td>{made}</td><td>{seconds(wall / made if made else None)}</td>"
                    f"<td>{pct(on_cpu)}</td></tr>")
    table = ('<table class="small"><tr><th>producer</th><th>batches</th><th>time per batch</th><th>on a CPU</th></tr>'
             + "".join(rows) + "</table>")
    return _figure("Time to make each batch, per producer",
                   line_chart(series, "ms", **frame, label="time to make each batch") + table,
                   "Wall time a DataLoader worker (or the training process, with num_workers=0) spent making "
                   "each batch; a worker slower than the others, or times that grow, show here.")


def cpu_plot(timeline, frame) -> str:
    system = timeline["system"]
    if not system:
        return ""
    t = system["t"]
    cpu_count = system.get("cpu_count") or 1
    layers = [Series(name, t, scaled(system[f"cpu_{key}"], 100), color)
              for name, key, color in (("user", "user", PALETTE[0]), ("system", "system", PALETTE[1]),
                                       ("iowait", "iowait", PALETTE[3]))]
    chart = line_chart(layers, "% of machine", **frame, stacked=True, y_max=100, label="machine CPU")
    job = line_chart([Series(f"the job (cores busy, of {cpu_count})", t, system["job_cores"], PALETTE[2])],
                     "cores", **frame, y_max=cpu_count, label="job CPU")
    return _figure("CPU", chart + job, "Top: the whole machine's CPU time by kind (iowait: idle while a disk read "
                   "was pending). Bottom: cores the job's processes kept busy.")


def disk_plot(timeline, frame) -> str:
    system = timeline["system"]
    if not system:
        return ""
    t = system["t"]
    series = [Series("all disks", t, system["disk_read_mb_s"]), Series("the job's real reads", t, system["job_read_mb_s"])]
    return _figure("Disk reads", line_chart(series, "MB/s", **frame, label="disk reads"),
                   "Reads that reached a disk (the page cache serves the rest).")


def memory_plot(timeline, frame) -> str:
    system = timeline["system"]
    series = []
    if system:
        series.append(Series("the job's resident memory (all processes)", system["t"],
                             scaled(system["job_rss"], 1e-6)))
    by_pid: dict = {}
    for point in timeline["memory"]:
        by_pid.setdefault(point["pid"], []).append(point)
    for pid, points in by_pid.items():
        if any(p["alloc"] is not None for p in points):
            series.append(Series(f"CUDA allocated (pid {pid})", [p["t"] for p in points],
                                 [p["alloc"] / 1e6 if p["alloc"] is not None else None for p in points]))
    return _figure("Memory", line_chart(series, "MB", **frame, label="memory"), "") if series else ""


def gpu_plots(timeline, frame) -> list:
    out = []
    for gpu in timeline["gpus"]:
        util = [Series("utilisation", gpu["t"], scaled(gpu["util_gpu"], 100)),
                Series("memory bandwidth", gpu["t"], scaled(gpu["util_memory"], 100))]
        total = gpu.get("mem_total")
        memory = [Series("memory used", gpu["t"], [v / total * 100 if v is not None and total else None
                                                  for v in gpu["mem_used"]], PALETTE[2])]
        name = f"GPU {gpu['index']}" + (f" ({gpu['name']})" if gpu.get("name") else "")
        out.append(_figure(name, line_chart(util, "%", **frame, y_max=100, label=f"{name} utilisation")
                           + line_chart(memory, "% of memory", **frame, y_max=100, label=f"{name} memory"),
                           "Utilisation: the share of time a kernel ran. Memory: used of the GPU's total."))
    return out


def pressure_plot(timeline, frame) -> str:
    system = timeline["system"]
    if not system:
        return ""
    series = [Series(name, system["t"], scaled(system[key], 100))
              for name, key in (("CPU", "psi_cpu_some"), ("I/O", "psi_io_some"), ("memory", "psi_memory_some"))]
    if not any(v for s in series for v in s.values()):
        return ""
    return _figure("Pressure (PSI)", line_chart(series, "% stalled", **frame, label="pressure"),
                   "The share of time some task waited for a CPU, for I/O or for memory.")


def try_plot(report: Report, tried: Optional[dict]) -> str:
    """Measured speed-ups of the fixes `gpuprof try` (or `run --verify`) applied, with the estimates."""
    rows = (tried or {}).get("rows") or []
    rows = rows[1:] if rows and rows[0].get("label") == "baseline" else rows
    if not rows:
        rows = ((report.get("verified") or {}).get("rows")) or []
    bars = [(row.get("label") or row.get("fix") or "?", row.get("speedup"), row.get("speedup_min"),
             row.get("speedup_max"), row.get("estimate")) for row in rows]
    chart = bar_chart(bars, "x", reference=1.0, label="measured speed-ups")
    return _figure("Fixes measured with gpuprof try", chart,
                   "Bars: measured speed-up of each change against the unchanged program (the line through a bar: "
                   "its spread over rounds; the tick: gpuprof's estimate; the dashed line: no change).")

"""A run as a Chrome trace-event / Perfetto JSON file (ui.perfetto.dev, chrome://tracing).

One track group per process (training, each DataLoader worker, other Python processes) with slices
for steps, data waits, each batch a producer made and each epoch; counters for the training
process's memory and copies to the device; a "machine" group of counters for CPU, disk, pressure,
job memory and each GPU. Size stays bounded for any run length: the record's streams are bounded
(5000 single items, then blocks of many) and counters are thinned to MAX_COUNTER_POINTS each."""

import json
from typing import Mapping

from gpuprof.judge.sections.timeline import build_timeline
from gpuprof.record.report_format import Report
from gpuprof.present.render.units import scaled

MACHINE_PID = 4194305            # above Linux's largest pid, so it never names a real process
MAX_COUNTER_POINTS = 4000
US = 1e6

STEPS_TID, WAIT_TID, FETCH_TID, COUNTER_TID, EPOCH_TID = 1, 2, 3, 4, 10


class _Trace:
    def __init__(self):
        self.meta = []
        self.tracks = {}            # (pid, tid) -> slices
        self.counters = []
        self.named = set()

    def process(self, pid, name, sort_index):
        self.meta.append({"ph": "M", "pid": pid, "tid": 0, "name": "process_name", "args": {"name": name}})
        self.meta.append({"ph": "M", "pid": pid, "tid": 0, "name": "process_sort_index",
                          "args": {"sort_index": sort_index}})

    def thread(self, pid, tid, name):
        if (pid, tid) in self.named:
            return
        self.named.add((pid, tid))
        self.meta.append({"ph": "M", "pid": pid, "tid": tid, "name": "thread_name", "args": {"name": name}})
        self.meta.append({"ph": "M", "pid": pid, "tid": tid, "name": "thread_sort_index", "args": {"sort_index": tid}})

    def slice(self, pid, tid, name, start, end, category, args):
        self.tracks.setdefault((pid, tid), []).append((start, end, name, category, args))

    def counter(self, pid, name, t, values):
        values = {k: round(v, 4) for k, v in values.items() if v is not None}
        if values:
            self.counters.append({"ph": "C", "pid": pid, "tid": COUNTER_TID, "name": name, "ts": _us(t),
                                  "args": values})

    def events(self) -> list:
        out = list(self.meta)
        for (pid, tid), slices in self.tracks.items():
            last_end = None
            for start, end, name, category, args in sorted(slices, key=lambda s: (s[0], s[1])):
                # Slices on one track never overlap (the format needs them nested or apart).
                if last_end is not None and start < last_end:
                    start = last_end
                end = max(end, start)
                out.append({"ph": "X", "pid": pid, "tid": tid, "name": name, "cat": category, "ts": _us(start),
                            "dur": round((end - start) * US, 1), "args": args})
                last_end = end
        out.extend(sorted(self.counters, key=lambda c: (c["pid"], c["name"], c["ts"])))
        return out


def _us(seconds: float) -> float:
    return round(seconds * US, 1)


def trace_events(record: dict, report: Mapping) -> dict:
    """The trace as a JSON-ready object: {"traceEvents": [...], "displayTimeUnit": "ms", "otherData": {...}}."""
    timeline = build_timeline(record, report)
    trace = _Trace()
    roles = {p["pid"]: p for p in timeline["processes"]}
    for index, proc in enumerate(timeline["processes"]):
        trace.process(proc["pid"], f"{proc['name']} (pid {proc['pid']})", index)
    if timeline["rank_steps"]:
        for pid, steps in timeline["rank_steps"].items():
            _steps(trace, steps, pid)
    else:
        training = next((p["pid"] for p in timeline["processes"] if p["role"] == "training"), None)
        _steps(trace, timeline["steps"], training)
    _waits(trace, timeline)
    _fetches(trace, timeline, roles)
    _epochs(trace, timeline)
    _process_counters(trace, timeline)
    _machine(trace, timeline, len(timeline["processes"]))
    verdict = report.get("verdict") or {}
    return {
        "traceEvents": trace.events(),
        "displayTimeUnit": "ms",
        "otherData": {"gpuprof": report.get("gpuprof_version"), "command": " ".join(map(str, report.get("command") or [])),
                      "verdict": verdict.get("bottleneck"), "summary": verdict.get("summary"),
                      "time_origin": "seconds since the program started"},
    }


def render(report: Report, options) -> str:
    return trace_text(options.record, report)


def trace_text(record: dict, report: Report) -> str:
    return json.dumps(trace_events(record, report), separators=(",", ":"), allow_nan=False)


def _steps(trace, steps, pid):
    if pid is None or not steps:
        return
    trace.thread(pid, STEPS_TID, "steps")
    number = 0
    for step in steps:
        first = number + 1
        number += step["n"]
        seconds = step["end"] - step["start"]
        if step["n"] == 1:
            name = f"step {first}" + (" (start-up)" if first == 1 else "")
            args = {"step": first, "ms": round(seconds * 1000, 3)}
        else:
            name = f"steps {first}-{number}"
            args = {"steps": step["n"], "mean_ms": round(seconds / step["n"] * 1000, 3)}
        trace.slice(pid, STEPS_TID, name, step["start"], step["end"], "step", args)


def _waits(trace, timeline):
    for wait in timeline["waits"]:
        pid = wait["pid"]
        trace.thread(pid, WAIT_TID, "waiting for data")
        if wait["n"] == 1:
            name, args = "wait for batch", {"loader": wait["loader"], "ms": round(wait["wait"] * 1000, 3)}
        else:
            name = f"{wait['n']} batches"
            args = {"batches": wait["n"], "loader": wait["loader"], "waited_ms": round(wait["wait"] * 1000, 3)}
        trace.slice(pid, WAIT_TID, name, wait["start"], wait["end"], "data wait", args)


def _fetches(trace, timeline, roles):
    for fetch in timeline["fetches"]:
        pid = fetch["pid"]
        in_worker = roles.get(pid, {}).get("role") == "worker"
        trace.thread(pid, FETCH_TID, "making batches" if in_worker else "making batches (in this process)")
        args = {"loader": fetch["loader"], "dataset": fetch["dataset"], "cpu_ms": round(fetch["cpu"] * 1000, 3),
                "read_kb": round(fetch["read_bytes"] / 1024, 1)}
        if fetch["n"] == 1:
            name = "batch"
            args["ms"] = round(fetch["wall"] * 1000, 3)
        else:
            name = f"{fetch['n']} batches"
            args.update(batches=fetch["n"], wall_ms=round(fetch["wall"] * 1000, 3))
        trace.slice(pid, FETCH_TID, name, fetch["start"], fetch["end"], "fetch", args)


def _epochs(trace, timeline):
    tids: dict[tuple[int | None, str | None], int] = {}
    for epoch in timeline["epochs"]:
        key = (epoch["pid"], epoch["loader"])
        if key not in tids:
            tids[key] = EPOCH_TID + sum(1 for k in tids if k[0] == epoch["pid"])
            trace.thread(epoch["pid"], tids[key], f"epochs: {epoch['loader']}")
        trace.slice(epoch["pid"], tids[key], f"epoch {epoch['index']}", epoch["start"], epoch["end"], "epoch",
                    {"loader": epoch["loader"], "epoch": epoch["index"]})


def _process_counters(trace, timeline):
    for point in timeline["memory"]:
        trace.counter(point["pid"], "memory (MB)", point["t"],
                      {"rss": _mb(point["rss"]), "cuda_allocated": _mb(point["alloc"]),
                       "cuda_reserved": _mb(point["reserved"])})
    for point in timeline["copies"]:
        trace.counter(point["pid"], "copied to the device (MB, cumulative)", point["t"],
                      {"copied": _mb(point["cumulative_bytes"])})


def _mb(value):
    return value / 1e6 if value is not None else None


def _machine(trace, timeline, sort_index):
    system = timeline["system"]
    gpus = timeline["gpus"]
    if not system and not gpus:
        return
    trace.process(MACHINE_PID, "machine (sampled)", sort_index)
    if system:
        cpu_count = system.get("cpu_count") or 1
        series = {
            "CPU, machine (%)": {name: scaled(system[f"cpu_{name}"], 100) for name in ("user", "system", "iowait", "steal")},
            "CPU, job (cores busy)": {"cores": system["job_cores"]},
            "CPU, job (% of machine)": {"job": scaled(system["job_cores"], 100 / cpu_count)},
            "disk read (MB/s)": {"disk": system["disk_read_mb_s"], "job": system["job_read_mb_s"]},
            "pressure (% of time stalled)": {"cpu": scaled(system["psi_cpu_some"], 100),
                                             "io": scaled(system["psi_io_some"], 100),
                                             "memory": scaled(system["psi_memory_some"], 100)},
            "job memory (MB)": {"rss": scaled(system["job_rss"], 1e-6)},
        }
        _counter_series(trace, system["t"], series)
    for gpu in gpus:
        label = f"GPU {gpu['index']}"
        _counter_series(trace, gpu["t"], {
            f"{label} utilisation (%)": {"gpu": scaled(gpu["util_gpu"], 100), "memory": scaled(gpu["util_memory"], 100)},
            f"{label} memory (MB)": {"used": scaled(gpu["mem_used"], 1e-6)},
            f"{label} PCIe (MB/s)": {"rx": gpu["pcie_rx_mb_s"], "tx": gpu["pcie_tx_mb_s"]},
        })


def _counter_series(trace, times, series):
    for name, columns in series.items():
        if not any(v is not None for values in columns.values() for v in values):
            continue
        for index in thin(len(times), MAX_COUNTER_POINTS):
            trace.counter(MACHINE_PID, name, times[index], {k: values[index] for k, values in columns.items()})


def thin(length: int, limit: int) -> range:
    """Indices of at most `limit` evenly spread points (every point when there are few)."""
    stride = max(1, -(-length // limit))
    return range(0, length, stride)

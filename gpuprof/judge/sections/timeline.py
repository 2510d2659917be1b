"""A run over time: who did what when, for pictures (the trace and the HTML report).

Pure: the run record and its report in, plain data out. Times are seconds since the child started
(the record's monotonic clock less `start_monotonic`). The probes' streams are bounded: the first
5000 items of a stream are single, later ones arrive as blocks of many (gpuprof.record.bounded), so
an interval here stands for `n` items (1 for a single one) and its values are sums over them."""

from typing import Mapping

from gpuprof.judge.sections.loaders import loader_of
from gpuprof.judge.sections.loop import dominant_loader, line_of
from gpuprof.judge.sections.processes import events_of_kind, registered_processes
from gpuprof.stats.series import count
from gpuprof.stats.sizes import BYTES_TO_MB
from gpuprof.record import kinds

STEP_KIND = {"optimizer": "step", "backward": "bstep", "dataloader": "batch"}
COMMAND_CHARS = 60      # of another process's command line, as its name


def _interval(start: float, end: float, n: int = 1, **values) -> dict:
    return {"start": start, "end": max(end, start), "n": n, **values}


def build_timeline(record: dict, report: Mapping) -> dict:
    """{origin, duration_s, window, processes, steps, waits, fetches, epochs, copies, memory, system, gpus}."""
    meta = record.get("meta") or {}
    groups = record.get("processes") or []
    origin = meta.get("start_monotonic")
    if origin is None:
        firsts = [e["t"] for events in groups for e in events[:1] if "t" in e]
        origin = min(firsts) if firsts else 0.0

    def rel(t):
        return float(t) - origin

    steps_section = report.get("steps") or {}
    loaders = events_of_kind(groups, kinds.LOADER)
    line = line_of(loaders)                              # loader id -> the line that built it
    by_id = {loader.get("l"): loader for loader in loaders}
    batches = events_of_kind(groups, kinds.BATCH)
    fetches = events_of_kind(groups, kinds.FETCH)
    training_pid = steps_section.get("pid")
    window = None
    if steps_section.get("window_start") is not None and steps_section.get("window_end") is not None:
        window = (rel(steps_section["window_start"]), rel(steps_section["window_end"]))
    return {
        "origin": origin,
        "duration_s": meta.get("duration_s"),
        "window": window,
        "processes": _processes(groups, fetches, training_pid, by_id, rel, report.get("ranks") or []),
        "steps": _steps(groups, steps_section, batches, line, rel),
        "rank_steps": {row["pid"]: _steps(groups, {"pid": row["pid"], "source": _source_of(groups, row["pid"])},
                                          batches, line, rel)
                       for row in report.get("ranks") or [] if row.get("pid") is not None},
        "waits": _waits(batches, line, rel),
        "fetches": _fetches(fetches, by_id, rel),
        "epochs": _epochs(events_of_kind(groups, kinds.EPOCH), batches, line, rel),
        "copies": _copies(events_of_kind(groups, kinds.COPIES), rel),
        "memory": _memory(events_of_kind(groups, kinds.MEM), rel),
        "system": _system(record.get("system") or {}, rel),
        "gpus": _gpus(record.get("gpu") or {}, rel),
    }


def _source_of(groups, pid) -> str:
    """The step kind a trainer's steps come from: optimizer steps, else backward passes."""
    seen = {e.get("k") for events in groups if events and events[0].get("pid") == pid for e in events}
    return "optimizer" if kinds.STEP in seen else "backward"


def _processes(groups, fetches, training_pid, by_id, rel, ranks=()) -> list:
    """Every registered process with its role: training (each rank of a distributed job), a
    DataLoader worker, or other."""
    rank_of = {row.get("pid"): row for row in ranks}
    worker_of: dict = {}
    for fetch in fetches:
        if fetch.get("w") is not None:
            worker_of.setdefault(fetch.get("pid"), (fetch.get("w"), _loader_where(fetch, by_id)))
    out = []
    for proc in registered_processes(groups):
        pid = proc.get("pid")
        if pid in rank_of:
            row = rank_of[pid]
            role, name = "training", f"rank {row.get('rank')}" + (f" on {row['host']}" if row.get("host") else "")
        elif pid == training_pid:
            role, name = "training", "training"
        elif pid in worker_of:
            worker, where = worker_of[pid]
            role, name = "worker", f"DataLoader worker {worker}" + (f" of {where}" if where else "")
        else:
            argv = [str(a) for a in proc.get("argv") or []]
            role, name = "other", "python " + " ".join(argv)[:COMMAND_CHARS] if argv else "python"
        out.append({"pid": pid, "ppid": proc.get("ppid"), "role": role, "name": name,
                    "worker": worker_of.get(pid, (None,))[0],
                    "start": rel(proc["t"]) if proc.get("t") is not None else None})
    order = {"training": 0, "worker": 1, "other": 2}
    return sorted(out, key=lambda p: (order[p["role"]], rank_of.get(p["pid"], {}).get("rank") or 0,
                                      p["worker"] if p["worker"] is not None else 0, p["start"] or 0.0))


def _loader_where(fetch, by_id):
    loader = loader_of(fetch, by_id)
    return (loader.get("where") or loader.get("l")) if loader is not None else None


def _steps(groups, steps_section, batches, line, rel) -> list:
    """The training steps of the reported process, in the order they ended: [{start, end, n}].
    The first step starts when the process began waiting for its first batch (or registered)."""
    pid, source = steps_section.get("pid"), steps_section.get("source")
    kind = STEP_KIND.get(source)
    if kind is None:
        return []
    marks = [e for e in events_of_kind(groups, kind) if e.get("pid") == pid]
    if source == "dataloader":
        dominant = dominant_loader(marks, line) if marks else None
        marks = [e for e in marks if line(e.get("l")) == dominant]
    marks.sort(key=lambda e: e["t"])
    if not marks:
        return []
    first_end = rel(marks[0]["t"])
    own_batches = [rel(b["t"]) - float(b.get("w") or 0.0) for b in batches
                   if b.get("pid") == pid and "n" not in b and rel(b["t"]) <= first_end]
    registered = [rel(p["t"]) for p in registered_processes(groups) if p.get("pid") == pid and p.get("t") is not None]
    start = min(own_batches) if own_batches else (registered[0] if registered else first_end)
    out = []
    previous = start
    for event in marks:
        end = rel(event["t"])
        out.append(_interval(min(previous, end), end, count(event)))
        previous = end
    return out


def _waits(batches, line, rel) -> list:
    """Time each consuming process was blocked for a batch: [{pid, loader, start, end, n, wait}]."""
    out = []
    for event in sorted(batches, key=lambda e: e["t"]):
        wait = float(event.get("w") or 0.0)
        end = rel(event["t"])
        n = count(event)
        start = rel(event["t0"]) if n > 1 and event.get("t0") is not None else end - wait
        out.append(_interval(start, end, n, pid=event.get("pid"), loader=line(event.get("l")),
                             wait=wait))
    return out


def _fetches(fetches, by_id, rel) -> list:
    """Each batch made by a producer (a worker, or the main process): [{pid, worker, start, end, n,
    wall, cpu, runqueue, read_bytes}]."""
    out = []
    for event in sorted(fetches, key=lambda e: e["t"]):
        wall = float(event.get("wall") or 0.0)
        end = rel(event["t"])
        n = count(event)
        start = rel(event["t0"]) - wall / n if n > 1 and event.get("t0") is not None else end - wall
        out.append(_interval(start, end, n, pid=event.get("pid"), worker=event.get("w"),
                             loader=_loader_where(event, by_id), dataset=event.get("ds"), wall=wall,
                             cpu=float(event.get("cpu") or 0.0), runqueue=float(event.get("rq") or 0.0),
                             read_bytes=int(event.get("rb") or 0)))
    return out


def _epochs(epochs, batches, line, rel) -> list:
    """Each iterator over a loader, from its start to the next one's (or its last batch)."""
    out = []
    by_loader: dict = {}
    for event in epochs:
        by_loader.setdefault(event.get("l"), []).append(event)
    for loader_id, starts in by_loader.items():
        starts.sort(key=lambda e: e["t"])
        last_batch = max((rel(b["t"]) for b in batches if b.get("l") == loader_id), default=None)
        for i, event in enumerate(starts):
            start = rel(event["t"])
            end = rel(starts[i + 1]["t"]) if i + 1 < len(starts) else (last_batch if last_batch is not None else start)
            out.append(_interval(start, max(end, start), 1, pid=event.get("pid"), index=i + 1,
                                 loader=line(loader_id)))
    return sorted(out, key=lambda e: e["start"])


def _copies(copies, rel) -> list:
    """Host-to-device copies as the probe tallies them (every few hundred copies):
    [{pid, t, n, bytes, cumulative_bytes}]."""
    out = []
    totals: dict = {}
    for event in sorted(copies, key=lambda e: e["t"]):
        pid = event.get("pid")
        totals[pid] = totals.get(pid, 0) + int(event.get("bytes") or 0)
        out.append({"pid": pid, "t": rel(event["t"]), "n": int(event.get("n") or 0),
                    "bytes": int(event.get("bytes") or 0), "cumulative_bytes": totals[pid]})
    return out


def _memory(mem, rel) -> list:
    """Per-step memory of each stepping process: [{pid, t, rss, alloc, reserved}] (maxima for blocks)."""
    out = []
    for event in sorted(mem, key=lambda e: e["t"]):
        block = count(event) > 1

        def value(name):
            return event.get(f"{name}_max") if block else event.get(name)

        out.append({"pid": event.get("pid"), "t": rel(event["t"]), "rss": value("rss"), "alloc": value("alloc"),
                    "reserved": value("reserved")})
    return out


def _system(system: dict, rel) -> dict:
    """The sampler's columns as per-second rates and shares: {t, cpu_user, cpu_system, cpu_iowait,
    cpu_steal, job_cores, disk_read_mb_s, job_read_mb_s, job_rss, psi_*, cpu_count}."""
    cols = system.get("columns") or {}
    times = cols.get("t") or []
    if not times:
        return {}
    dts = cols.get("dt") or [None] * len(times)

    def column(name):
        values = cols.get(name) or []
        return values + [None] * (len(times) - len(values))

    def per_second(name, scale=1.0):
        return [v / dt * scale if v is not None and dt else None for v, dt in zip(column(name), dts)]

    user, kernel = column("job_user_s"), column("job_system_s")
    job_cores = [((u or 0.0) + (s or 0.0)) / dt if dt and (u is not None or s is not None) else None
                 for u, s, dt in zip(user, kernel, dts)]
    return {
        "t": [rel(t) for t in times],
        "cpu_count": system.get("cpu_count"),
        "cpu_user": column("cpu_user"), "cpu_system": column("cpu_system"),
        "cpu_iowait": column("cpu_iowait"), "cpu_steal": column("cpu_steal"),
        "job_cores": job_cores,
        "disk_read_mb_s": per_second("disk_read_bytes", BYTES_TO_MB),
        "job_read_mb_s": per_second("job_read_bytes", BYTES_TO_MB),
        "job_rss": column("job_rss"),
        "psi_cpu_some": column("psi_cpu_some"), "psi_io_some": column("psi_io_some"),
        "psi_memory_some": column("psi_memory_some"),
    }


def _gpus(gpu: dict, rel) -> list:
    """Per GPU: {index, name, mem_total, t, util_gpu, util_memory, mem_used, pcie_rx_mb_s, pcie_tx_mb_s}."""
    out = []
    for i, device in enumerate(gpu.get("gpus") or []):
        cols = (device.get("series") or {}).get("columns") or {}
        times = cols.get("t") or []
        if not times:
            continue

        def column(name, scale=1.0):
            values = cols.get(name) or []
            values = values + [None] * (len(times) - len(values))
            return [v * scale if v is not None else None for v in values]

        out.append({"index": device.get("index", i), "name": device.get("name"),
                    "mem_total": device.get("mem_total") or device.get("memory_total"),
                    "t": [rel(t) for t in times], "util_gpu": column("util_gpu"),
                    "util_memory": column("util_memory"), "mem_used": column("mem_used"),
                    "pcie_rx_mb_s": column("pcie_rx_bps", BYTES_TO_MB), "pcie_tx_mb_s": column("pcie_tx_bps", BYTES_TO_MB)})
    return out

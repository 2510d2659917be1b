"""Memory: what the training holds (anatomy), how it moves over the measured steps (growth), the
workers' copy-on-write growth, the machine paging, and how the run ended (out of memory).

Pure: built from the memory probe's events, the step window and the system record."""

import os
from collections.abc import Sequence

from gpuprof.judge.sections.job_gpus import job_gpus, nvml_uuid
from gpuprof.stats.series import count
from gpuprof.stats.sizes import GIB, MIB

GROWTH_MIN_BYTES = 16 << 20      # growth over the window worth a finding ...
GROWTH_MIN_R = 0.8               # ... when it is this steady (correlation of memory with the step; under
                                 # CPU load a real leak of 3 MB a step measured r 0.93-0.98)
# A slower growth is still a leak when it is steady and where it leads is large: judged by the
# rate projected over a long run, not by the total a short run happens to see (40 KB a step is
# 16 MB in 400 steps and 4 GB in 100,000).
STEADY_MIN_R = 0.9               # steadier than a fast leak must be ...
STEADY_MIN_STEPS = 100           # ... over at least this many steps ...
STEADY_MIN_BYTES = 2 << 20       # ... by more than allocator and page granularity (RSS moves in arenas) ...
PROJECTED_STEPS = 100_000        # ... projected over a run this long ...
PROJECTED_MIN_BYTES = 1 << 30    # ... to at least this (10.7 KB a step)
HALVES_MIN_SHARE = 0.5           # each half of the window grows at least this share of the whole's rate
MIN_GROWTH_POINTS = 5            # memory readings needed for a slope
MIN_HALVES_POINTS = 10           # ... and for a slope of each half of the window
TIME_SLACK = 1e-9                # seconds: a reading at the window's end stays inside it
SQUARE_ROOT = 0.5                # as a power, a square root (the correlation's denominator)
WORKER_GROWTH_BYTES = 32 << 20   # a worker's resident growth worth a finding ...
WORKER_GROWTH_SHARE = 0.2        # ... and this share of what it started with

LEAK_CAUSES = [
    "a loss tensor accumulated across steps (`total_loss += loss` keeps every step's graph alive): "
    "accumulate `loss.item()` instead",
    "tensors kept in a list every step (outputs, losses, features): keep `.detach().cpu()` copies or "
    "`.item()` values",
    "`backward(retain_graph=True)` keeping each step's graph alive",
    "a cache that grows without bound (memoised samples or features)",
]


def _points(events, start, end):
    """(t, value per item) of the memory stream inside the window: blocks give their mean."""
    out = []
    for event in sorted(events, key=lambda e: e.get("t") or 0):
        t = event.get("t")
        if t is None or (start is not None and t <= start) or (end is not None and t > end + TIME_SLACK):
            continue
        n = count(event)
        value = event.get("alloc") if event.get("alloc") is not None else event.get("rss")
        if value is not None:
            out.append((t, value / n if n > 1 else value, n))
    return out


def positions(points, seconds_per_step: float = None) -> tuple:
    """(step positions, values) of the memory points: by time over the mean step's duration where it
    is known (the probe reads memory at most every few milliseconds, not at every fast step), else by
    the count of steps each point stands for."""
    values = [value for _, value, _ in points]
    if seconds_per_step:
        return [t / seconds_per_step for t, _, _ in points], values
    xs, step = [], 0
    for _, _, n in points:
        step += n
        xs.append(step)
    return xs, values


def growth(points, seconds_per_step: float = None):
    """Least-squares slope of memory against the step (bytes per step) and its correlation."""
    if len(points) < MIN_GROWTH_POINTS:
        return None
    xs, ys = positions(points, seconds_per_step)
    mean_x, mean_y = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mean_x) ** 2 for x in xs)
    syy = sum((y - mean_y) ** 2 for y in ys)
    sxy = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys))
    if sxx <= 0:
        return None
    slope = sxy / sxx
    r = sxy / (sxx * syy) ** SQUARE_ROOT if syy > 0 else 0.0
    steps = round(xs[-1] - xs[0]) + 1 if seconds_per_step else xs[-1]
    return {"slope_bytes_per_step": slope, "r": r, "steps": steps, "total_bytes": slope * (xs[-1] - xs[0]),
            "first_bytes": ys[0], "last_bytes": ys[-1]}


def seconds_per_step(steps: dict):
    """The measured steps' mean duration (the window over its steps), or None without one."""
    start, end = steps.get("window_start"), steps.get("window_end")
    measured = steps.get("measured") or steps.get("count")
    return (end - start) / measured if start is not None and end is not None and measured and end > start else None


def half_slopes(points, seconds_per_step: float = None) -> list:
    """The growth rate of each half of the window: a steady leak grows in both, warm-up in one."""
    xs, ys = positions(points, seconds_per_step)
    if len(xs) < MIN_HALVES_POINTS:
        return [0.0, 0.0]
    half = len(xs) // 2
    return [_slope(xs[:half], ys[:half]), _slope(xs[half:], ys[half:])]


def _slope(xs, ys):
    mean_x, mean_y = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mean_x) ** 2 for x in xs)
    return sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys)) / sxx if sxx > 0 else 0.0


def leaks(trend, halves=(0.0, 0.0)) -> bool:
    """Growth worth a finding: large and steady over the window, or smaller but steady in both halves
    of a long enough window and large where it leads (a plateau after warm-up is not a leak)."""
    if not trend or trend["slope_bytes_per_step"] <= 0:
        return False
    if trend["r"] >= GROWTH_MIN_R and trend["total_bytes"] >= GROWTH_MIN_BYTES:
        return True
    slope = trend["slope_bytes_per_step"]
    return (trend["r"] >= STEADY_MIN_R and trend["steps"] >= STEADY_MIN_STEPS
            and trend["total_bytes"] >= STEADY_MIN_BYTES and slope * PROJECTED_STEPS >= PROJECTED_MIN_BYTES
            and min(halves) >= HALVES_MIN_SHARE * slope)


def analyse_memory(anatomy_events, mem_events, exceptions, steps: dict, worker_memory, system: dict,
                   meta: dict, cuda_devices=None) -> dict:
    """The memory section. `cuda_devices`: the job's CUDA devices with each one's peak (analysis.devices),
    so each device's peak is held against that device's own memory."""
    pid = steps.get("pid")
    own = [e for e in mem_events if pid is None or e.get("pid") == pid]
    cuda = any(e.get("alloc") is not None for e in own)
    out: dict = {"device": "cuda" if cuda else "cpu",
                 "basis": ("torch.cuda.memory_allocated at each step's end (max_memory_allocated for the peak)" if cuda
                           else "the training process's resident size (RSS) at each step's end")}
    out["anatomy"] = _anatomy([e for e in anatomy_events if pid is None or e.get("pid") == pid])
    values = [e.get("peak") if cuda else (e.get("rss_max") or e.get("rss")) for e in own]
    values = [v for v in values if v is not None]
    out["peak_bytes"] = max(values) if values else None
    anatomy = out["anatomy"]
    if anatomy and out["peak_bytes"]:
        held = anatomy["param_bytes"] + anatomy["grad_bytes"] + anatomy["state_bytes"]
        out["rest_bytes"] = max(out["peak_bytes"] - held, 0)
        out["rest_is"] = ("activations and temporaries (the peak less parameters, gradients and optimizer state)"
                          if cuda else "everything else in the process: the interpreter, libraries, data, "
                          "activations and temporaries")
    devices = device_peaks(system, cuda_devices, pid) if cuda else []
    out["headroom"] = headroom(out, system, steps.get("batch_size"), devices)
    findings = []
    points = _points(own, steps.get("window_start"), steps.get("window_end"))
    per_step = seconds_per_step(steps)
    trend = growth(points, per_step)
    out["growth"] = trend
    if leaks(trend, half_slopes(points, per_step)):
        findings.append(_growth_finding(trend, cuda, system, devices))
    workers = _worker_growth(worker_memory)
    if workers:
        findings.append(workers)
    paging = _paging(system)
    if paging:
        findings.append(paging)
    out["findings"] = findings
    out["oom"] = _oom([e for e in exceptions if e.get("memory")], meta, system, steps)
    out["shm"] = _shm([e for e in exceptions if e.get("shm")], system, steps)
    return out


HEADROOM_TARGET = 0.9        # a batch size should leave this much of the device for the peak


def job_device_totals(system: dict) -> list:
    """Memory of each of the job's GPUs (the `job` flag of each NVML summary; all of them in a report
    that never marked any): another program's GPU says nothing of this job's room."""
    return [g["mem_total_bytes"] for g in job_gpus(system.get("gpus") or []) if g.get("mem_total_bytes")]


def device_peaks(system: dict, cuda_devices, pid=None) -> list:
    """[{label, uuid, peak_bytes, device_bytes, peak_share, training_process}] for each CUDA device of
    the job whose peak was read and whose memory NVML gave, matched by UUID; `training_process`
    marks the devices the training process used. The peak on a device is every process's there,
    added (analysis.devices)."""
    by_uuid = {nvml_uuid(g.get("uuid")): g for g in system.get("gpus") or [] if g.get("uuid")}
    known = [d for d in cuda_devices or [] if d.get("peak_bytes") and nvml_uuid(d.get("uuid")) in by_uuid]
    out = []
    for device in known:
        gpu = by_uuid[nvml_uuid(device["uuid"])]
        total = gpu.get("mem_total_bytes")
        if not total:
            continue
        out.append({"label": gpu.get("label") or f"GPU {gpu.get('index')}", "uuid": nvml_uuid(device["uuid"]),
                    "peak_bytes": device["peak_bytes"], "device_bytes": total,
                    "peak_share": round(device["peak_bytes"] / total, 3),
                    "training_process": pid is not None and pid in (device.get("pids") or [])})
    return out


def headroom(memory: dict, system: dict, batch_size, devices: Sequence[dict] = ()):
    """On a GPU: the share of its memory the peak uses, and the largest batch that would fit,
    assuming activations (the peak less parameters, gradients and optimizer state) grow in
    proportion to the batch while the rest stays. With each device's peak known (`devices`), the
    fullest device decides: its peak against its own memory, its activations the same share of its
    peak as the process's; else the process's peak against the smallest of the job's GPUs."""
    if memory.get("device") != "cuda" or not memory.get("peak_bytes"):
        return None
    if devices:
        fullest = max(devices, key=lambda d: d["peak_share"])
        total, peak = fullest["device_bytes"], fullest["peak_bytes"]
        out = {"device_bytes": total, "peak_share": fullest["peak_share"], "largest_batch": None,
               "device": fullest["label"], "devices": list(devices)}
    else:
        totals = job_device_totals(system)
        if not totals:
            return None
        total, peak = min(totals), memory["peak_bytes"]
        out = {"device_bytes": total, "peak_share": round(peak / total, 3), "largest_batch": None}
    rest = memory.get("rest_bytes")
    if batch_size and rest:
        activations = rest * peak / memory["peak_bytes"]          # this device's share of them
        fixed = peak - activations
        out["largest_batch"] = max(int(batch_size * (HEADROOM_TARGET * total - fixed) / activations), 0)
        on = f" on {out['device']}" if devices else ""
        out["basis"] = (f"activations of {round(activations)} bytes{on} at batch {batch_size} scale with the batch; "
                        f"{round(fixed)} bytes of parameters, gradients and optimizer state do not; "
                        f"{HEADROOM_TARGET:.0%} of the device at most")
    return out


def _anatomy(events):
    if not events:
        return None
    params = sum(e.get("params") or 0 for e in events)
    by_dtype: dict[str, int] = {}
    for event in events:
        for dtype, nbytes in (event.get("param_bytes") or {}).items():
            by_dtype[dtype] = by_dtype.get(dtype, 0) + nbytes
    state = sum(e.get("state_bytes") or 0 for e in events)
    return {"optimizers": [e.get("optimizer") for e in events], "params": params,
            "param_bytes": sum(by_dtype.values()), "param_bytes_by_dtype": by_dtype,
            "grad_bytes": sum(e.get("grad_bytes") or 0 for e in events), "state_bytes": state,
            "state_bytes_per_param": round(state / params, 2) if params else None,
            "state": sorted({name for e in events for name in e.get("state") or ()}),
            "basis": "the optimizers' parameter groups and state after their first step"}


def _growth_finding(trend, cuda, system, devices=()) -> dict:
    slope = trend["slope_bytes_per_step"]
    limit = None
    if cuda:
        # The per-step counters add up every device the training process uses: their memory together
        # bounds them.
        own = [d["device_bytes"] for d in devices if d.get("training_process")]
        totals = job_device_totals(system)
        limit = sum(own) if own else (min(totals) if totals else None)
    else:
        available = (system.get("memory") or {}).get("available_bytes")
        limit = trend["last_bytes"] + available if available else None
    exhaustion = int((limit - trend["last_bytes"]) / slope) if limit and slope > 0 else None
    return {"kind": "growth", "slope_bytes_per_step": round(slope), "over_steps": trend["steps"],
            "total_bytes": round(trend["total_bytes"]), "r": round(trend["r"], 3),
            "steps_until_exhausted": exhaustion, "causes": list(LEAK_CAUSES),
            "projected_bytes": round(slope * PROJECTED_STEPS), "projected_steps": PROJECTED_STEPS,
            "summary": f"memory grows {_rate(slope)} per step, steadily (r={trend['r']:.2f}), "
                       f"{trend['total_bytes'] / MIB:.0f} MiB over {trend['steps']} steps, "
                       f"{slope * PROJECTED_STEPS / GIB:.1f} GiB per {PROJECTED_STEPS:,} steps"
                       + (f"; at this rate it runs out in about {exhaustion} more steps" if exhaustion else "")
                       + ". Likely: " + LEAK_CAUSES[0]}


def _rate(slope) -> str:
    """Bytes per step in the unit that shows them: a slow leak in KiB, a fast one in MiB."""
    return f"{slope / MIB:.2f} MiB" if slope >= MIB else f"{slope / 1024:.0f} KiB"


def _worker_growth(worker_memory):
    """Workers whose private memory grew while they ran (`worker_mem` events: each worker's first and
    later readings of its private memory, with what it held at its first and last reading), and the
    cause the workers' clues show — or that it is not known."""
    by_pid: dict[int | None, dict] = {}
    for event in sorted(worker_memory, key=lambda e: e.get("t") or 0):
        if event.get("private") is None:
            continue
        entry = by_pid.setdefault(event.get("pid"), {"pid": event.get("pid"), "first": event["private"],
                                                     "clues_first": event.get("clues") or {}})
        entry["last"] = event["private"]
        clues = event.get("clues") or {}
        if clues.get("attributes"):
            entry["clues_last"] = dict(entry.get("clues_last") or {}, attributes=clues["attributes"])
        for buffer in clues.get("buffers") or []:      # a buffer seen full at any reading
            entry.setdefault("buffers", []).append(buffer)
    grown = [w for w in by_pid.values()
             if w["last"] - w["first"] >= WORKER_GROWTH_BYTES and w["last"] - w["first"] >= WORKER_GROWTH_SHARE * max(w["first"], 1)]
    if not grown:
        return None
    mean = sum(w["last"] - w["first"] for w in grown) / len(grown)
    cause, fix, known = worker_growth_cause(grown)
    return {"kind": "worker_growth", "cause_known": known,
            "workers": [{k: w[k] for k in ("pid", "first", "last")} for w in grown],
            "summary": f"{len(grown)} DataLoader worker{'s' if len(grown) != 1 else ''} grew {mean / MIB:.0f} MiB of "
                       f"private memory each while they ran: {cause}",
            "fix": fix}


#: A dataset attribute that grew to this many times its length at the start, by this many items at
#: least, is a container that grows; one that did not is a table held from the start.
GREW_FACTOR = 1.5
GREW_MIN_ITEMS = 100


def worker_growth_cause(grown: list):
    """(cause, fix, known) from what the grown workers held: a container of the dataset that grew, a
    long buffer in a live generator of the pipeline, a long table the dataset held from the start (shared
    by fork, copied page by page as reference counts touch it), or nothing that explains it."""
    growing: dict = {}
    buffers: dict = {}
    tables: dict = {}
    for worker in grown:
        first = (worker.get("clues_first") or {}).get("attributes") or {}
        for name, (kind, length) in ((worker.get("clues_last") or {}).get("attributes") or {}).items():
            before = (first.get(name) or [kind, 0])[1]
            target = growing if length > GREW_FACTOR * max(before, 1) and length - before >= GREW_MIN_ITEMS else tables
            target[name] = max(target.get(name, (kind, 0)), (kind, length), key=lambda x: x[1])
        for buffer in worker.get("buffers") or []:
            key = (buffer["function"], buffer["local"])
            buffers[key] = max(buffers.get(key, buffer), buffer, key=lambda b: b["items"])
    if growing:
        name, (kind, length) = max(growing.items(), key=lambda kv: kv[1][1])
        return (f"the dataset's `{name}` ({kind}) grew to {length:,} items in each worker — a cache kept per "
                "worker, each worker filling its own copy",
                "bound the cache, fill it before the workers start (they then share it), or keep it on disk", True)
    if buffers:
        buffer = max(buffers.values(), key=lambda b: b["items"])
        where = f"{os.path.basename(buffer['file'])}:{buffer['line']}"
        held = f", about {buffer['bytes'] / MIB:.0f} MiB," if buffer.get("bytes") else ""
        return (f"`{buffer['local']}` in {buffer['function']} ({where}) holds {buffer['items']:,} items{held} in each "
                "worker — a shuffle buffer or prefetched samples, held once per worker",
                "a smaller buffer (each worker keeps its own: workers x buffer in all), or samples kept in their "
                "compact form in it (encoded bytes, uint8) and decoded after they are drawn", True)
    if tables:
        name, (kind, length) = max(tables.items(), key=lambda kv: kv[1][1])
        return (f"the dataset holds `{name}`, a {kind} of {length:,} Python objects, shared with the forked "
                "workers: reading an item updates its reference count, so every page it touches becomes each "
                "worker's own copy (copy-on-write)",
                "keep the data in numpy arrays or tensors (or one bytes buffer with offsets), not lists or dicts of "
                "Python objects; fewer workers only slow the growth", True)
    return ("the cause is not known from what gpuprof sees in the workers (no long container in the dataset or "
            "its iterator); possible: a cache or buffer in a library the dataset uses, or copy-on-write of "
            "Python objects the dataset reaches",
            "look for what each worker keeps between batches (caches, buffers, growing lists) in the dataset "
            "and the libraries it calls", False)


PAGING_PRESSURE = 0.1       # memory pressure (some) that says the machine paged, without swap-ins


def _paging(system: dict):
    events = (system.get("memory") or {}).get("events") or {}
    swapped = events.get("pswpin") or 0
    pressure = ((system.get("pressure") or {}).get("memory_some")) or 0.0
    if swapped <= 0 and pressure < PAGING_PRESSURE:
        return None
    return {"kind": "paging", "swap_in_pages": swapped, "memory_pressure": round(pressure, 3),
            "summary": f"the machine was short of memory: {swapped} pages swapped in, tasks stalled on memory "
                       f"{pressure:.0%} of the time; each DataLoader worker holds its own copy of what it "
                       "touches and prefetch_factor x num_workers batches wait in memory",
            "fix": "fewer workers or a smaller prefetch_factor, or data held in shared arrays"}


def _oom(exceptions, meta: dict, system: dict, steps: dict):
    events = (system.get("memory") or {}).get("events") or {}
    at_step = steps.get("count") or 0
    if exceptions:
        last = exceptions[-1]
        return {"kind": last.get("type"), "at_step": at_step, "rss": last.get("rss"),
                "how": f"the program raised {last.get('type')} after {at_step} step{'s' if at_step != 1 else ''}"}
    if meta.get("signal") == "SIGKILL" and ((events.get("cgroup_oom_kill") or 0) > 0 or (events.get("oom_kill") or 0) > 0):
        return {"kind": "oom-killer", "at_step": at_step,
                "how": f"the kernel's out-of-memory killer ended the job after {at_step} step{'s' if at_step != 1 else ''}"}
    return None


def _shm(exceptions, system: dict, steps: dict):
    """A DataLoader worker that ran out of shared memory (/dev/shm), or None."""
    if not exceptions:
        return None
    limit = system.get("cpu_limit") or {}
    at_step = steps.get("count") or 0
    size = limit.get("shm_bytes")
    return {"kind": "shared-memory", "at_step": at_step, "shm_bytes": size,
            "shm_free_min_bytes": limit.get("shm_free_min_bytes"),
            "how": (f"a DataLoader worker could not put a batch in shared memory after {at_step} "
                    f"step{'s' if at_step != 1 else ''}" + (f" (/dev/shm holds {size / MIB:.0f} MiB)" if size else ""))}

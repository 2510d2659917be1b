"""Summaries of the supervisor's samples: the machine, the job's process tree, disk, pressure, GPUs."""


def _weighted_mean(values, weights):
    pairs = [(v, w) for v, w in zip(values, weights) if v is not None and w]
    total = sum(w for _, w in pairs)
    return sum(v * w for v, w in pairs) / total if total else None


def _column(columns: dict, name: str):
    return columns.get(name) or []


def summarize_system(system: dict) -> dict:
    columns = system.get("columns", {})
    dt = _column(columns, "dt")
    span = sum(d for d in dt if d) if dt else 0.0
    cpu = {k: _weighted_mean(_column(columns, f"cpu_{k}"), dt) for k in ("user", "system", "iowait", "steal", "idle")}
    user_s = sum(v or 0 for v in _column(columns, "job_user_s"))
    system_s = sum(v or 0 for v in _column(columns, "job_system_s"))
    read_bytes = sum(v or 0 for v in _column(columns, "job_read_bytes"))
    read_chars = sum(v or 0 for v in _column(columns, "job_read_chars"))
    disk_read = sum(v or 0 for v in _column(columns, "disk_read_bytes"))
    disk_write = sum(v or 0 for v in _column(columns, "disk_write_bytes"))
    pressure = None
    if system.get("has_pressure"):
        pressure = {k: _weighted_mean(_column(columns, f"psi_{k}"), dt)
                    for k in ("cpu_some", "io_some", "io_full", "memory_some", "memory_full")}
    processes = system.get("processes", [])
    return {
        "samples": int(system.get("ticks", len(dt))),
        "interval_s": system.get("interval_s"),
        "sampled_s": span,
        "cpu_count": system.get("cpu_count"),
        "cpu_flags": system.get("cpu_flags"),
        "cpu_limit": _cpu_limit(system.get("cpu_limit"), span),
        "cpu": cpu,
        "job": {
            "cpu_user_s": user_s,
            "cpu_system_s": system_s,
            "cores_busy": (user_s + system_s) / span if span else None,
            "read_bytes": read_bytes,
            "read_chars": read_chars,
            "rss_peak_bytes": max((v or 0 for v in _column(columns, "job_rss")), default=0),
            "processes_max": max((v or 0 for v in _column(columns, "job_procs")), default=0),
            "processes_seen": len(processes),
            "process_rss_peak_bytes": max((p.get("rss_peak") or 0 for p in processes), default=0) or None,
        },
        "disk": {
            "read_bytes": disk_read,
            "write_bytes": disk_write,
            "read_mb_s": disk_read / span / 1e6 if span else None,
            "busy": _weighted_mean(_column(columns, "disk_busy"), dt),
        },
        "pressure": pressure,
        "memory": system.get("memory") or {},
        "late_ticks": system.get("late_ticks", 0),
        "sampler_errors": system.get("errors", []),
    }


def cores_busy_between(system: dict, start, end):
    """The job's CPU seconds per second over the samples that fall in [start, end] (the measured
    steps), or None with fewer than two samples there: start-up and imports left out."""
    if start is None or end is None or end <= start:
        return None
    columns = system.get("columns", {})
    times, dts = _column(columns, "t"), _column(columns, "dt")
    users, systems = _column(columns, "job_user_s"), _column(columns, "job_system_s")
    span = cpu = 0.0
    inside = 0
    for i, t in enumerate(times):
        dt = dts[i] if i < len(dts) else None
        if t is None or not dt or t - dt < start or t > end:
            continue
        inside += 1
        span += dt
        cpu += (users[i] if i < len(users) and users[i] else 0.0) + (systems[i] if i < len(systems) and systems[i] else 0.0)
    return cpu / span if inside >= 2 and span > 0 else None


def summarize_gpus(gpu: dict) -> tuple:
    """(per-GPU summaries, status) from the NVML sampler's record."""
    summaries = []
    for device in gpu.get("gpus", []):
        columns = device.get("series", {}).get("columns", {})

        def mean(name):
            values = [v for v in columns.get(name) or [] if v is not None]
            return sum(values) / len(values) if values else None

        used = [v for v in columns.get("mem_used") or [] if v is not None]
        summaries.append({
            "index": device.get("index"),
            "name": device.get("name"),
            "util_gpu": mean("util_gpu"),
            "util_memory": mean("util_memory"),
            "mem_used_max_bytes": max(used) if used else None,
            "mem_total_bytes": device.get("mem_total"),
            "pcie_rx_mb_s": _scale(mean("pcie_rx_bps"), 1e-6),
            "pcie_tx_mb_s": _scale(mean("pcie_tx_bps"), 1e-6),
            "sm_clock_mhz": mean("sm_clock_mhz"),
            "sm_clock_max_mhz": device.get("sm_clock_max_mhz"),
            "clock_events": device.get("clock_events", {}),
            "slowdowns": _slowdowns(device.get("clock_events") or {}, len(columns.get("t") or [])),
            "job_memory_bytes": sum(device.get("job_memory", {}).values()) or None,
            "samples": len(columns.get("t") or []),
        })
    status = {"available": bool(gpu.get("available")) and bool(summaries),
              "reason": gpu.get("reason"), "driver": gpu.get("driver")}
    return summaries, status


#: Clock-event reasons that slow a busy GPU down (idle, application clocks and sync boost do not).
SLOWDOWNS = {"sw_power_cap": "the software power cap", "hw_slowdown": "a hardware slowdown",
             "sw_thermal_slowdown": "software thermal slowdown", "hw_thermal_slowdown": "hardware thermal slowdown",
             "hw_power_brake_slowdown": "the hardware power brake"}


def _slowdowns(events: dict, samples: int) -> dict:
    """{reason: share of the samples it was set in} for the reasons that slow a GPU down."""
    if not samples:
        return {}
    return {name: round(min(events[name] / samples, 1.0), 3) for name in SLOWDOWNS if events.get(name)}


def slowdown_notes(gpus: list) -> list:
    """A GPU that ran measurably below its top SM clock while a slowdown reason held a tenth of the run."""
    notes = []
    for gpu in gpus or []:
        top, mean = gpu.get("sm_clock_max_mhz"), gpu.get("sm_clock_mhz")
        held = {k: v for k, v in (gpu.get("slowdowns") or {}).items() if v >= 0.1}
        if not held or not top or mean is None or mean >= 0.9 * top:
            continue
        reasons = ", ".join(f"{SLOWDOWNS[k]} {v:.0%} of the run" for k, v in sorted(held.items(), key=lambda i: -i[1]))
        notes.append(f"GPU {gpu.get('index')} ran at {mean:.0f} of its {top:.0f} MHz SM clock on average ({reasons}): "
                     "every step is slower for it; check cooling and the power limit (nvidia-smi -q -d PERFORMANCE)")
    return notes


def _scale(value, factor):
    return value * factor if value is not None else None


def job_gpus(gpus: list) -> list:
    """The GPUs the job used (it held memory there), or all of them when that is unknown."""
    used = [g for g in gpus if g.get("job_memory_bytes")]
    return used or gpus


def job_gpu_util(gpus: list):
    """Mean utilisation of the job's GPUs (0..1), None without a figure."""
    values = [g["util_gpu"] for g in job_gpus(gpus) if g.get("util_gpu") is not None]
    return sum(values) / len(values) if values else None


def _cpu_limit(limit, span):
    """The cores the job may use and why, with the share of the run its cgroup was throttled."""
    if not limit:
        return None
    out = dict(limit)
    throttled = limit.get("throttled") or {}
    if throttled.get("seconds") is not None and span:
        out["throttled_share"] = round(min(throttled["seconds"] / span, 1.0), 4)
    return out

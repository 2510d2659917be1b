"""Summaries of the supervisor's samples: the machine, the job's process tree, disk, pressure. The
GPUs' are in gpuprof.judge.sections.gpus (per device) and gpuprof.judge.sections.job_gpus (which are the job's),
named here too for the callers that read every summary from one place."""

from gpuprof.stats.digits import REPORT_DIGITS
from gpuprof.judge.sections.gpus import SLOWDOWNS, slowdown_notes, summarize_gpus  # noqa: F401
from gpuprof.judge.sections.job_gpus import job_gpu_util, job_gpus  # noqa: F401


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


def _cpu_limit(limit, span):
    """The cores the job may use and why, with the share of the run its cgroup was throttled."""
    if not limit:
        return None
    out = dict(limit)
    throttled = limit.get("throttled") or {}
    if throttled.get("seconds") is not None and span:
        out["throttled_share"] = round(min(throttled["seconds"] / span, 1.0), REPORT_DIGITS)
    return out

"""gpuprof's own cost in a run: the supervisor's CPU (its sampler threads included), the samplers'
threads apart, and the probes inside the job (their threads and their hot paths, as each process
measured them at its exit), against the CPU the job used. None for a run that measured none of it
(runs saved before gpuprof measured its probes)."""

from gpuprof.stats.digits import REPORT_DIGITS
from gpuprof.judge.sections.machine_load import busy_words, others_during
from gpuprof.judge.sections.processes import events_of_kind
from gpuprof.record import kinds

#: Above this share of the job's CPU the report says which part cost most and how to lower it.
NOTABLE_SHARE = 0.02


def self_cost_section(meta: dict, groups: list, system_record: dict, others: dict = None):
    """The `overhead` section; `others` is the report's `system.others` where the caller has it."""
    probe_events = events_of_kind(groups, kinds.SELF_COST)
    samplers = meta.get("samplers_cpu_s")
    if not probe_events and not isinstance(samplers, dict):
        return None
    supervisor = _seconds(meta.get("supervisor_cpu_s"))
    samplers_s = sum(_seconds(v) for v in (samplers or {}).values()) if isinstance(samplers, dict) else 0.0
    probe_threads = sum(_seconds(e.get("threads_s")) for e in probe_events)
    probe_hooks = sum(_seconds(e.get("hooks_s")) for e in probe_events)
    probes = probe_threads + probe_hooks
    job = _job_cpu(system_record or {})
    own = supervisor + probes
    parts = {"supervisor": max(supervisor - samplers_s, 0.0), "samplers": samplers_s, "probes": probes}
    return {
        "supervisor_cpu_s": round(supervisor, REPORT_DIGITS),
        "samplers_cpu_s": round(samplers_s, REPORT_DIGITS),
        "probes_cpu_s": round(probes, REPORT_DIGITS),
        "probe_threads_cpu_s": round(probe_threads, REPORT_DIGITS),
        "probe_hooks_cpu_s": round(probe_hooks, REPORT_DIGITS),
        "per_call_us": _per_call(probe_events),
        "own_cpu_s": round(own, REPORT_DIGITS),
        "job_cpu_s": round(job, REPORT_DIGITS) if job else None,
        "share": round(own / job, REPORT_DIGITS) if job else None,
        "largest_part": max(parts, key=lambda name: parts[name]) if own > 0 else None,
        "parts_cpu_s": {name: round(value, REPORT_DIGITS) for name, value in parts.items()},
        **beside_busy_machine(round(own, REPORT_DIGITS), round(own / job, REPORT_DIGITS) if job else None,
                              meta.get("duration_s"),
                              others if others is not None else _others_over_the_run(system_record or {})),
    }


def _others_over_the_run(system_record: dict):
    """Other processes' cores over the whole run: the span gpuprof's own cost covers."""
    found = others_during(system_record, None, None)
    return dict(found, over="run") if found else None


def beside_busy_machine(own_s: float, share, duration_s, others) -> dict:
    """{"beside_busy_machine": what to believe} where other processes held a notable share of the
    machine, else {}. A small own cost beside a run slower than on a quiet machine reads as a
    contradiction; it is none: the slowdown is the others' load, and the line says so with both
    figures."""
    if not others or not others.get("notable"):
        return {}
    cores = f"{own_s / duration_s:.2f} of a core" if duration_s else f"{own_s:.2f} s CPU"
    of_job = f" ({share:.1%} of the job's CPU)" if share is not None else ""
    span = "during the measured steps" if others.get("over") == "steps" else "over the run"
    return {"beside_busy_machine": (
        "where this run was slower than on a quiet machine, the other processes' load slowed it, not "
        f"gpuprof's own cost: {busy_words(others)} {span}, gpuprof {cores}{of_job}")}


def _seconds(value) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else 0.0


def _job_cpu(system_record: dict) -> float:
    """CPU seconds of the job's process tree over the run (the system sampler's sums)."""
    columns = system_record.get("columns") or {}
    return sum(float(v or 0.0) for name in ("job_user_s", "job_system_s") for v in columns.get(name) or [])


def _per_call(events: list) -> dict:
    """Microseconds a hot path's probe took per call, over the timed calls of every process."""
    timed: dict = {}
    for event in events:
        for path, figures in (event.get("hooks") or {}).items():
            if isinstance(figures, dict) and figures.get("timed"):
                count, seconds = timed.get(path, (0, 0.0))
                timed[path] = (count + int(figures["timed"]), seconds + _seconds(figures.get("timed_s")))
    return {path: round(seconds / count * 1e6, 2) for path, (count, seconds) in sorted(timed.items()) if count}

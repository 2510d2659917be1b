"""A run cut short: the program was killed after an interrupt it did not end on (a TERM it ignored,
then KILL), or gpuprof's supervisor was killed (a TERM the program ignored, then KILL; a
scheduler's time limit; the machine going down) before it wrote run.json's header. The run folder
then holds the claim `create_run_dir` wrote (`"status": "running"`, gpuprof's pid) and the event
files the job's processes flushed until they died with it (a second's worth at most is lost): no
system samples, no exit status. What the job recorded is still analysed; the header's facts that
the events also hold (the command, the host, the start, how long events came) are read from them,
and the report says the run was cut short."""

import time

from gpuprof.record import kinds

CLAIM_STATUS = "running"


def is_cut_short(meta: dict) -> bool:
    """Whether run.json is still the claim of a run whose supervisor never finished it."""
    return (meta or {}).get("status") == CLAIM_STATUS


def completed_meta(meta: dict, groups: list) -> dict:
    """The claim completed with what the job's own events say: the program's command line (its
    argv as Python saw it), script and host, when it started and how long events came, and
    `cut_short`. A claim without events stays as it is, with `cut_short` set."""
    heads = [events[0] for events in groups if events and events[0].get("k") == kinds.PROCESS]
    times = [e["t"] for events in groups for e in events if isinstance(e.get("t"), (int, float))]
    out = dict(meta, cut_short=True)
    if not heads or not times:
        return out
    root = next((h for h in heads if h.get("ppid") == meta.get("pid")), None) or min(heads, key=lambda h: h.get("t") or 0)
    argv = [str(a) for a in root.get("argv") or []]
    start, end = min(times), max(times)
    out.update(command=argv, start_monotonic=start, end_monotonic=end, duration_s=end - start)
    if argv and argv[0].endswith(".py"):
        out.update(kind="script", target=argv[0])
    if root.get("host"):
        out["host"] = root["host"]
    if isinstance(root.get("wall"), (int, float)):
        out["started_at"] = time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(root["wall"]))
    return out


def killed_after_interrupt(meta: dict):
    """The interrupt (SIGTERM, SIGINT, ...) a program killed by SIGKILL had been sent first and did
    not end on, or None: a KILL after it is how a user or a scheduler ends a job that ignores TERM,
    not the out-of-memory killer."""
    if meta.get("signal") != "SIGKILL" or not meta.get("interrupted"):
        return None
    sent = [s.get("signal") for s in meta.get("signals") or [] if isinstance(s, dict)]
    return next((name for name in sent if name in INTERRUPTS), "an interrupt")


INTERRUPTS = ("SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT")


def outcome(meta: dict):
    """The report's outcome line for a run cut short, or None for a run that was not."""
    if meta.get("cut_short"):
        return "cut short: gpuprof and the program were killed (no exit status recorded)"
    interrupt = killed_after_interrupt(meta)
    if interrupt:
        return f"cut short: {interrupt} did not end it, signal 9 (SIGKILL) did"
    return None


def note(meta: dict, steps: dict, sampled: bool):
    """What the verdict of a run cut short rests on (None for a run that was not); `sampled`: system
    samples were saved."""
    measured = steps.get("measured") or 0
    rests = f"the verdict rests on the {measured} measured step{'s' if measured != 1 else ''} recorded until then"
    if meta.get("cut_short"):
        return (f"the run was cut short (gpuprof was killed before the program ended): {rests}"
                + ("" if sampled else "; no system samples (CPU, disk, GPU) were saved"))
    interrupt = killed_after_interrupt(meta)
    if interrupt:
        return (f"the run was cut short (killed by SIGKILL after {interrupt}): {rests}; the last second of "
                "events may be missing")
    return None

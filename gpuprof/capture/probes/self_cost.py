"""gpuprof's own CPU inside one process of the job, written once at its exit: the CPU of gpuprof's
threads there (the stack sampler, the event file's flush timer; read from /proc/self/task while
they still run), and the probes' hot paths (a step's end, a batch taken, a batch fetched) timed on
one call in SAMPLE_EVERY (a step's end: one in steps.STEP_SAMPLE_EVERY), their mean times the
calls. Measured, so the report's figure follows the code as it is, not as it was benchmarked."""

import os
import threading
import time

from . import runtime
from ...record import kinds

SAMPLE_EVERY = 16
SAMPLE_MASK = SAMPLE_EVERY - 1      # a call whose running count has these bits clear is timed
THREAD_PREFIX = "gpuprof-"

#: hot path -> [calls, calls timed, seconds in the timed calls]; a path that counts its calls
#: elsewhere (steps, batches) leaves the first at 0 and says so through `counters`.
timed = {"step": [0, 0, 0.0], "batch": [0, 0, 0.0], "fetch": [0, 0, 0.0]}
_counters = {}          # hot path -> function giving its calls so far


def install(counters: dict) -> None:
    """`counters`: hot path -> function returning how many calls it has had (kept by its probe)."""
    _counters.update(counters)
    if not _state["installed"]:
        _state["installed"] = True
        runtime.at_close(emit)
        runtime.at_fork_child(reset_in_child)


_state = {"installed": False}


def note(path: str, seconds: float) -> None:
    """One timed call of a hot path."""
    entry = timed[path]
    entry[1] += 1
    entry[2] += seconds


def threads_cpu() -> float:
    """CPU seconds of gpuprof's threads alive in this process (utime + stime of each)."""
    ticks = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    total = 0
    for thread in threading.enumerate():
        native = getattr(thread, "native_id", None)
        if not thread.name.startswith(THREAD_PREFIX) or native is None:
            continue
        try:
            with open(f"/proc/self/task/{native}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except (OSError, IndexError, ValueError):
            continue
    return total / ticks


def summary() -> dict:
    hooks, estimate = {}, 0.0
    for path, (calls, count, seconds) in timed.items():
        counter = _counters.get(path)
        calls = counter() if counter is not None else calls
        if not calls:
            continue
        hooks[path] = {"calls": calls, "timed": count, "timed_s": seconds}
        if count:
            estimate += seconds / count * calls
    return {"threads_s": threads_cpu(), "hooks": hooks, "hooks_s": estimate}


def emit() -> None:
    try:
        runtime.emit(dict(summary(), k=kinds.SELF_COST, t=time.monotonic()))
    except Exception:
        pass


def reset_in_child() -> None:
    for entry in timed.values():
        entry[:] = [0, 0, 0.0]

"""Where the training thread spends its step, sampled: forward, backward, optimizer, the DataLoader,
or the user's own host code by function. This finds batch construction wherever it sits in a step
(the "make the next batch between forward and backward" idiom of hand-written loops), which no
wait measures.

A thread of its own, started in a process only once it has stepped, reads the training thread's
stack 50 times a second (sys._current_frames: no signal, nothing in the training thread) and
writes, once a second, the time each place stood for (each sample weighted by the time since the
previous one). Classifying a frame is cached per code object."""

import os
import re
import sys
import threading
import time

from . import runtime
from .procfile import ProcFile
from ...record import kinds
from ...record.frames import LIBRARY_PATH, TORCH_MARKERS

INTERVAL = 0.02
MAX_FUNCTIONS = 64          # distinct host functions kept per second; the rest count as "other host code"

_state = {"thread": None, "stop": None}
observers = []              # other probes' functions(frame, weight) that see each sample too
_kind_of_code = {}          # code object -> marker kind, "user", or None (library frame to pass over)

PROBES_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def start(thread_ident: int, native_id: int = None, step_state: dict = None) -> None:
    """Start sampling the thread `thread_ident` (once per process); `native_id` lets each sample
    also note whether that thread was running, waiting for the disk, or sleeping; `step_state` is
    the step probe's count and last end, which tell slow steps apart (capture/probes/slow_steps.py)."""
    if _state["thread"] is not None:
        return
    stop = threading.Event()
    thread = threading.Thread(target=_run, args=(thread_ident, native_id, stop, step_state or {}), name="gpuprof-sampler",
                              daemon=True)
    _state.update(thread=thread, stop=stop)
    thread.start()
    runtime.at_close(_stop)


def _stop() -> None:
    """At exit: stop sampling and let the thread write its last counts before the file closes."""
    thread, stop = _state["thread"], _state["stop"]
    if thread is None:
        return
    stop.set()
    if thread is not threading.current_thread():
        thread.join(timeout=0.2)


def reset_in_child() -> None:
    """A forked child has no sampler thread (threads do not survive fork)."""
    _state.update(thread=None, stop=None)


def _classify(code):
    kind = _kind_of_code.get(code, False)
    if kind is not False:
        return kind
    path = code.co_filename.replace(os.sep, "/")
    kind = None
    library = is_library(path)
    for name, fragment, functions in TORCH_MARKERS:
        if fragment in path and (functions is None or code.co_name in functions):
            kind = name
            break
    if kind is None and not path.startswith("<") and not library and \
            not os.path.abspath(code.co_filename).startswith(PROBES_DIR):
        kind = "user"
    _kind_of_code[code] = kind
    return kind


_LIBRARY = re.compile(LIBRARY_PATH)


def is_library(path: str) -> bool:
    return bool(_LIBRARY.search(path))


USER_FRAMES = 3         # user frames kept per host sample, innermost first


def sample(frame):
    """('collective' | 'forward' | 'backward' | 'optimizer' | 'dataloader' | 'host', for host time
    the innermost user frames as 'name (file:line)' joined by '<' (innermost first, at most
    USER_FRAMES), else None). The callers are kept so the analysis can give a comprehension, a
    lambda or a helper to the data-making function that called it."""
    users = []
    while frame is not None:
        kind = _classify(frame.f_code)
        if kind == "user":
            if len(users) < USER_FRAMES:
                code = frame.f_code
                users.append(f"{code.co_name} ({display_path(code.co_filename)}:{code.co_firstlineno})")
        elif kind is not None:
            return kind, None
        frame = frame.f_back
    return "host", "<".join(users) if users else None


def display_path(filename: str) -> str:
    try:
        rel = os.path.relpath(filename)
    except ValueError:
        return filename
    return filename if rel.startswith("..") else rel


def _is_stat(text: bytes) -> bool:
    return text.count(b")") >= 1 and len(text.rsplit(b")", 1)[1].split()) > 10


def _thread_state(stat):
    """'R' running or runnable, 'D' waiting for the disk, 'S' sleeping (a lock, a socket, a sleep)."""
    text = stat.read() if stat is not None else None
    if not text or not _is_stat(text):
        return "?"
    state = text.rsplit(b")", 1)[1].split()[0]
    return {b"R": "R", b"D": "D"}.get(state, "S")


class ThreadCpu:
    """The training process's threads (its own and torch's intra-op threads): the CPU they ran and
    the time they waited for a CPU (the kernel's schedstat), summed and emitted once a second. When
    DataLoader workers take the cores, compute waits here without any data wait showing."""

    def __init__(self, exclude=None):
        self.exclude = str(exclude)
        self.last = {}            # tid -> (run ns, wait ns)
        self.run_ns = self.wait_ns = 0

    def emit(self, now: float) -> None:
        try:
            tids = os.listdir("/proc/self/task")
        except OSError:
            return
        seen = {}
        for tid in tids:
            if tid == self.exclude:
                continue
            try:
                with open(f"/proc/self/task/{tid}/schedstat", "rb") as handle:
                    run, wait = (int(v) for v in handle.read().split()[:2])
            except (OSError, ValueError):
                continue
            before = self.last.get(tid)
            if before is not None:
                self.run_ns += max(run - before[0], 0)
                self.wait_ns += max(wait - before[1], 0)
            seen[tid] = (run, wait)
        self.last = seen
        runtime.emit({"k": kinds.THREAD_CPU, "t": now, "run": self.run_ns / 1e9, "wait": self.wait_ns / 1e9,
                      "threads": len(seen)})


def _run(ident: int, native_id, stop, step_state: dict) -> None:
    """Each sample is weighted by the time since the previous one (in microseconds): a sample that
    waited for the GIL while the training thread ran Python covers the longer interval it stood
    for, which corrects most of the bias against Python time."""
    counts = {}
    taken = 0
    next_emit = time.monotonic() + 1.0
    current_frames = sys._current_frames
    threads = ThreadCpu(exclude=threading.get_native_id())
    threads.emit(time.monotonic())
    stat = ProcFile(f"/proc/self/task/{native_id}/stat", 512, _is_stat) if native_id is not None else None
    previous = time.monotonic()
    from .slow_steps import SlowSteps
    slow = SlowSteps(step_state, _classify, display_path)
    while not stop.wait(INTERVAL):
        try:
            state = _thread_state(stat)
            frame = current_frames().get(ident)
            if frame is None:
                break               # the training thread is gone
            kind, function = sample(frame)
            now = time.monotonic()
            weight = int((now - previous) * 1e6)
            slow.add(frame, weight)
            for observe in observers:
                observe(frame, weight)
            del frame
            previous = now
            key = kind if kind != "host" else "host:" + (function or "?")
            if key not in counts and len(counts) >= MAX_FUNCTIONS * 3:
                key = "host:other host code"
            key = f"{key}|{state}"
            counts[key] = counts.get(key, 0) + weight
            taken += 1
            if now >= next_emit:
                event = {"k": kinds.STACK_SAMPLES, "t": now, "n": taken, "weights": "us", "counts": counts}
                in_slow_steps = slow.take()
                if in_slow_steps:
                    event["slow_steps"] = in_slow_steps
                runtime.emit(event)
                threads.emit(now)
                counts, taken = {}, 0
                next_emit = now + 1.0
        except Exception:
            break
    in_slow_steps = slow.take()
    if counts or in_slow_steps:
        try:
            event = {"k": kinds.STACK_SAMPLES, "t": time.monotonic(), "n": taken, "weights": "us", "counts": counts}
            if in_slow_steps:
                event["slow_steps"] = in_slow_steps
            runtime.emit(event)
        except Exception:
            pass
    if stat is not None:
        stat.close()           # only while it still names the file gpuprof opened

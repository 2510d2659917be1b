"""The probes' runtime inside one process of the job: its settings, its event file (kept right
across fork, spawn and every way of exiting) and the hooks probes register. Every probe imports
this module and nothing else of gpuprof's probes layer; capture/probes/boot.py, the one entry point,
installs them."""

import _thread
import atexit
import os
import sys
import time

from ...record.events import EventWriter
from ...record.hosts import host_name
from ...record.redact import redact_argv
from ...record import kinds

_state = {"writer": None, "settings": None, "forked": None}
_closers = []          # run before the event file closes: probes write their last aggregates
_fork_resets = []      # run in a forked child: probes drop state that belongs to the parent
_drains = []           # run at each flush of the event file: probes write what they buffered


def at_close(func) -> None:
    _closers.append(func)


def at_fork_child(func) -> None:
    _fork_resets.append(func)


def add_drain(func) -> None:
    """`func` writes a probe's buffered items; called at each flush of the event file (at most a
    flush interval apart, from the probes' own calls to `tick`, and at exit)."""
    _drains.append(func)


def start_flush_timer() -> None:
    """Flush this process's events every flush interval from a thread (so a job killed after a
    long stall loses at most that interval). Only for a process that imported torch: it has
    threads of its own already, so the thread changes nothing Python warns about."""
    current = _current()
    if current is not None:
        current.start_timer()


def tick(now: float) -> None:
    """Called by the probes on their hot paths with the time they already read: flushes the event
    file when a flush interval has passed (in processes that have no flush thread)."""
    current = _state["writer"]
    if current is not None:
        if current.due(now):
            current.flush()
    elif _registration_due(now):
        flush()


def _run_each(funcs) -> None:
    """Call each hook a probe registered; one that fails never stops the others, nor the job."""
    for func in list(funcs):
        try:
            func()
        except Exception:
            pass


def _drain_all() -> None:
    _run_each(_drains)


def writer():
    """The current process's event writer (None before start or after the process's own close)."""
    return _current()


def settings() -> dict:
    return _state["settings"] or {}


def emit(event: dict) -> None:
    current = _current()
    if current is not None:
        current.emit(event)


def emit_line(line: str) -> None:
    current = _current()
    if current is not None:
        current.emit_line(line)


def flush() -> None:
    current = _current()
    if current is not None:
        current.flush()


#: Run by the step probe: once, after the first step (the program's functions exist by then), and
#: after a step at most once a second (reading what a library keeps of itself).
FIRST_STEP_HOOKS = []
SECOND_HOOKS = []


def at_first_step(func) -> None:
    FIRST_STEP_HOOKS.append(func)


def each_second(func) -> None:
    """`func(now)` runs after a step, at most once a second."""
    SECOND_HOOKS.append(func)


_cell_starts = []      # run when a notebook cell's run begins: probes announce what they already know


def at_cell_start(func) -> None:
    _cell_starts.append(func)


def _open_writer(origin: str, registration: dict = None) -> None:
    """Open this process's event file with its registration (a forked child's was noted at the
    fork: its pid, parent and time)."""
    config = _state["settings"]
    current = EventWriter(config["events_dir"], flush_interval=float(config.get("flush_s", 1.0)),
                          before_flush=_drain_all)
    _state["writer"] = current
    _state["forked"] = None
    event = {
        "k": kinds.PROCESS,
        "pid": os.getpid(),
        "ppid": os.getppid(),
        "argv": redact_argv(sys.argv if getattr(sys, "argv", None) else sys.orig_argv),
        "origin": origin,
        "t": time.monotonic(),
        "wall": time.time(),
        "host": host_name(),
    }
    event.update(registration or {})
    event.update(launcher_rank())
    current.emit_now(event)


def _current():
    """This process's event writer; a forked child opens its own at its first use of it."""
    current = _state["writer"]
    if current is None and _state["forked"] is not None:
        current = _open_forked()
    return current


def _open_forked():
    with _state["fork_lock"]:
        registration = _state["forked"]
        if registration is not None:
            try:
                _open_writer("fork", registration)
            except Exception:
                pass
            finally:
                _state["forked"] = None
    return _state["writer"]


def _registration_due(now: float) -> bool:
    """A forked child that has written nothing yet still writes at its first flush interval."""
    registration = _state["forked"]
    return registration is not None and now - registration["t"] >= float(settings().get("flush_s", 1.0))


RANK_ENV = {"rank": "RANK", "local_rank": "LOCAL_RANK", "world_size": "WORLD_SIZE"}


def launcher_rank() -> dict:
    """The rank torchrun (or another elastic launcher) gave this process, from its environment.
    A forked DataLoader worker inherits it too; the analysis tells workers from trainers."""
    out = {}
    for name, variable in RANK_ENV.items():
        value = os.environ.get(variable)
        if value is not None and value.strip().isdigit():
            out[name] = int(value)
    return out


class _AfterForkAnchor:
    """multiprocessing keeps after-fork callbacks in a weak registry keyed by an object: this one."""


_anchor = _AfterForkAnchor()


def _before_fork() -> None:
    current = _state["writer"]
    if current is not None:
        current.flush()
    mp_util = sys.modules.get("multiprocessing.util")
    if mp_util is not None and not _state.get("after_fork_registered"):
        # A multiprocessing child clears the finalizers it inherits, then runs these callbacks;
        # registering our closer from here makes it survive into the child's shutdown path.
        try:
            mp_util.register_after_fork(_anchor, _register_mp_finalizer)
            _state["after_fork_registered"] = True
        except Exception:
            pass


def _register_mp_finalizer(_anchor_obj) -> None:
    """In a forked multiprocessing child (a Pool or DataLoader worker): close the event file on its
    shutdown path, and register the process now, since its pool may terminate it with a signal."""
    mp_util = sys.modules.get("multiprocessing.util")
    if mp_util is not None:
        mp_util.Finalize(None, _close_current, exitpriority=-100)
    _current()


def _note_import_error() -> None:
    """A program that ended on an uncaught ImportError: the module it could not import, so `run`
    can tell an interpreter without the package from a missing package. Read at exit from what
    Python kept of the uncaught exception; no hook is installed for it."""
    value = getattr(sys, "last_value", None)
    if isinstance(value, ImportError) and isinstance(getattr(value, "name", None), str):
        emit({"k": kinds.IMPORT_ERROR, "t": time.monotonic(), "module": value.name, "type": type(value).__name__})


def _close_current() -> None:
    current = _current()
    if current is None or current.closed:
        return
    try:
        _note_import_error()
    except Exception:
        pass
    _run_each(_closers)
    current.close()


def _drop_probe_state() -> None:
    """The probes forget what they kept and buffered (a forked child's parent's, a notebook's earlier
    cells'); each reset registers its streams' drains again."""
    del _drains[:]
    _run_each(_fork_resets)


def _after_fork_in_child() -> None:
    """A forked child gets its own file, opened at its first event, flush or exit: a fork costs
    the job no file-system work, and a child that leaves at once through os._exit leaves no file
    (the supervisor's process samples still see it). The parent's buffer stays the parent's."""
    inherited = _state["writer"]
    if inherited is not None:
        inherited.abandon()
    _state["writer"] = None
    _drop_probe_state()    # the parent's probes and their buffered rows stay the parent's
    if "events_dir" in (_state["settings"] or {}):
        _state["fork_lock"] = _thread.allocate_lock()
        _state["forked"] = {"pid": os.getpid(), "ppid": os.getppid(), "t": time.monotonic(), "wall": time.time()}
    # multiprocessing's forked children leave through os._exit, which skips atexit; their own
    # shutdown path runs multiprocessing's finalizers, where _register_mp_finalizer put our closer.


#: A kernel's settings between profiled cells: the probes stay installed, write nothing (no event
#: file is open) and start no stack sampler.
BETWEEN_CELLS = {"probes": True, "sample_stacks": False}


def _keep_the_file_across_exit_and_fork() -> None:
    """The event file closes at exit, and a forked child opens its own."""
    atexit.register(_close_current)
    os.register_at_fork(before=_before_fork, after_in_child=_after_fork_in_child)


def open_process(config: dict) -> None:
    """This freshly started interpreter's settings and event file, closed at exit and reopened in
    each forked child."""
    _state["settings"] = config
    _open_writer(origin="exec")
    _keep_the_file_across_exit_and_fork()


def in_kernel() -> bool:
    """Whether this process is a notebook kernel with gpuprof loaded (its cells are the runs)."""
    return bool(_state.get("kernel"))


def enter_kernel() -> bool:
    """Make this process a notebook kernel's, between cells; False where it already is one."""
    if in_kernel():
        return False
    _state["kernel"] = True
    _state["settings"] = dict(BETWEEN_CELLS)
    _keep_the_file_across_exit_and_fork()
    return True


def open_cell(config: dict) -> None:
    """A profiled notebook cell is a run of its own in this long-lived process: what the probes
    kept from before is dropped (as a forked child drops its parent's), a fresh event file opens in
    the cell's run folder, and the probes announce what they already know (its DataLoaders)."""
    _state["settings"] = config
    _drop_probe_state()
    _open_writer(origin="cell")
    if "torch" in sys.modules:
        start_flush_timer()
    _run_each(_cell_starts)


def close_cell() -> None:
    """The profiled cell is over: the probes write their last figures and the event file closes;
    until the next profiled cell, nothing is written and no sampler runs."""
    _close_current()
    _state["writer"] = None
    _state["settings"] = dict(BETWEEN_CELLS)

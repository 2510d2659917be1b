"""`gpuprof try --cold` only: note the data files this process opens for reading, so `try` can
evict them from the page cache before the next run.

Python's audit hook sees every `open()` (builtins.open, io.open, os.open, numpy's and PIL's file
reads, memory maps); a hook cannot be removed, so it is installed only in the runs of a cold
experiment. Files that belong to Python and its libraries (under sys.prefix or the standard
library, .py/.pyc/.so) are left out. h5py opens its files in C: the h5py probe notes those."""

import os
import sys

from . import runtime
from ...record import kinds

LIMIT = 10000           # paths kept per process
_SKIPPED_SUFFIXES = (".py", ".pyc", ".so", ".pth", ".pyi")
_state = {"paths": set(), "roots": (), "on": False}


def note(path) -> None:
    """A file opened where the audit hook cannot see it (HDF5's C library), when recording."""
    if _state["on"] and isinstance(path, str) and len(_state["paths"]) < LIMIT:
        _state["paths"].add(path)


def install() -> None:
    _state["on"] = True
    _state["roots"] = tuple({os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)
                             if p})
    sys.addaudithook(_hook)
    runtime.at_close(_flush)
    runtime.at_fork_child(_state["paths"].clear)


def _hook(event, args):
    if event != "open":
        return
    try:
        path, mode = args[0], args[1]
        if not isinstance(path, str) or (isinstance(mode, str) and any(c in mode for c in "wax+")):
            return
        if path.endswith(_SKIPPED_SUFFIXES) or path.startswith(("/proc/", "/sys/", "/dev/")):
            return
        paths = _state["paths"]
        if len(paths) < LIMIT and path not in paths:
            paths.add(path)
    except Exception:
        pass


def _flush() -> None:
    paths = []
    for path in _state["paths"]:
        try:
            full = os.path.realpath(path)
        except (OSError, ValueError):
            continue
        if not full.startswith(_state["roots"]) and os.path.isfile(full):
            paths.append(full)
    if paths:
        runtime.emit({"k": kinds.FILES_READ, "paths": sorted(paths)})

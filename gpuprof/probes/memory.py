"""Memory probe: what the training holds, how it moves step by step, and how it ended.

- Anatomy, once per optimizer after its first step: parameters (count and bytes by dtype),
  gradients and the optimizer's own state, read from the optimizer's parameter groups and state.
- Per step, cheap counters only: the process's resident size (one pread of /proc/self/statm) and,
  when the program itself has initialised CUDA, torch.cuda.memory_allocated / max_memory_allocated /
  memory_reserved (host-side counters: no synchronisation, no snapshot).
- How the process ended: an uncaught exception's type (MemoryError, torch.OutOfMemoryError) is
  noted by a sys.excepthook that hands it on unchanged to the hook that was there before.

Nothing here allocates on the device or changes a tensor."""

import os
import sys
import time

from . import boot
from .procfile import ProcFile
from .stream import Stream
from ..record import kinds

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
_state = {"stream": None, "seen": set(), "cuda": None, "torch": None}


def install(torch) -> None:
    _state["torch"] = torch
    _state["stream"] = Stream(kinds.MEM, kinds.columns(kinds.MEM))
    _watch_exceptions()
    boot.at_close(_flush)
    boot.at_fork_child(_reset_in_child)


def on_step(optimizer, now: float) -> None:
    """At the end of each step (the steps probe calls it): the counters, and the anatomy once."""
    stream = _state["stream"]
    if stream is None:
        return
    alloc = peak = reserved = None
    cuda = _cuda()
    if cuda is not None:
        try:
            alloc, peak, reserved = cuda.memory_allocated(), cuda.max_memory_allocated(), cuda.memory_reserved()
        except Exception:
            alloc = peak = reserved = None
    stream.add(now, _rss(), alloc, peak, reserved)
    if optimizer is not None and id(optimizer) not in _state["seen"]:
        _state["seen"].add(id(optimizer))
        try:
            boot.emit(dict(anatomy(optimizer), k=kinds.MEMORY_ANATOMY, t=now))
        except Exception:
            pass


def _cuda():
    """torch.cuda, once the program initialised CUDA itself (never initialised here)."""
    cuda = _state["cuda"]
    if cuda is None:
        torch = _state["torch"]
        try:
            if torch is not None and getattr(torch.version, "cuda", None) and torch.cuda.is_initialized():
                cuda = _state["cuda"] = torch.cuda
        except Exception:
            return None
    return cuda


def _is_statm(text: bytes) -> bool:
    fields = text.split()
    return len(fields) == 7 and all(f.isdigit() for f in fields)


_statm = ProcFile("/proc/self/statm", 128, _is_statm)


def _rss():
    """Resident bytes of this process, or None."""
    text = _statm.read()
    return int(text.split()[1]) * _PAGE if text and _is_statm(text) else None


def anatomy(optimizer) -> dict:
    """Parameters, gradients and optimizer state of one optimizer, in bytes."""
    params, seen = [], set()
    for group in optimizer.param_groups:
        for p in group.get("params", ()):
            if id(p) not in seen:
                seen.add(id(p))
                params.append(p)
    by_dtype, count, grads = {}, 0, 0
    for p in params:
        nbytes = p.numel() * p.element_size()
        dtype = str(p.dtype).replace("torch.", "")
        by_dtype[dtype] = by_dtype.get(dtype, 0) + nbytes
        count += p.numel()
        if p.grad is not None:
            grads += p.grad.numel() * p.grad.element_size()
    state_bytes, state_names = 0, set()
    for value in optimizer.state.values():
        for name, item in (value.items() if isinstance(value, dict) else ()):
            if hasattr(item, "numel") and hasattr(item, "element_size"):
                state_bytes += item.numel() * item.element_size()
                state_names.add(name)
    return {"optimizer": type(optimizer).__name__, "params": count, "param_bytes": by_dtype,
            "grad_bytes": grads, "state_bytes": state_bytes, "state": sorted(state_names),
            "tensors": len(params)}


def _watch_exceptions() -> None:
    previous = sys.excepthook

    def excepthook(kind, value, traceback):
        try:
            boot.emit({"k": kinds.EXCEPTION, "t": time.monotonic(), "type": getattr(kind, "__name__", str(kind)),
                       "module": getattr(kind, "__module__", None),
                       "memory": _is_out_of_memory(kind), "shm": _is_out_of_shared_memory(value), "rss": _rss()})
            _flush()
            boot.flush()
        except Exception:
            pass
        previous(kind, value, traceback)

    excepthook.__wrapped__ = previous
    sys.excepthook = excepthook


SHARED_MEMORY_SIGNS = ("shared memory", "(shm)", "/dev/shm")


def _is_out_of_shared_memory(value) -> bool:
    """A DataLoader worker that could not put a batch in shared memory: torch says "unable to allocate
    shared memory(shm)", or, for a worker killed by SIGBUS, that workers may be "out of shared memory"."""
    try:
        text = str(value).lower()
    except Exception:
        return False
    return any(sign in text for sign in SHARED_MEMORY_SIGNS)


def _is_out_of_memory(kind) -> bool:
    names = {getattr(k, "__name__", "") for k in getattr(kind, "__mro__", (kind,))}
    return bool(names & {"MemoryError", "OutOfMemoryError"})


def _flush() -> None:
    if _state["stream"] is not None:
        _state["stream"].flush()


def _reset_in_child() -> None:
    _statm.close()
    _state.update(stream=Stream(kinds.MEM, kinds.columns(kinds.MEM)), seen=set())

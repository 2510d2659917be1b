"""Memory probe: what the training holds, how it moves step by step, and how it ended.

- Anatomy, once per optimizer after its first step: parameters (count and bytes by dtype),
  gradients and the optimizer's own state, read from the optimizer's parameter groups and state.
- Per step, cheap counters only: the process's resident size (one pread of /proc/self/statm, at
  most every RSS_EVERY_S; a CPU-only process's faster steps write no row in between) and,
  when the program itself has initialised CUDA, the caching allocator's allocated, peak allocated
  and reserved bytes summed over every device this process uses (probes.cuda_devices: one
  host-side read of the statistics per device, no synchronisation, no snapshot). Each device's own
  peaks go in a `device_memory` event when they grew (at most once a second) and at exit.
- How the process ended: an uncaught exception is noted by a sys.excepthook that hands it on
  unchanged to the hook that was there before; out of memory is recognised by the exception's type
  and by its message (CUDA, cuBLAS, cuDNN, HIP and host allocators each word it their own way).

Nothing here allocates on the device or changes a tensor."""

import os
import sys
import time

from . import runtime, cuda_devices
from .procfile import ProcFile
from .stream import Stream
from ...record import kinds

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
_state = {"stream": None, "seen": set(), "cuda": None, "torch": None, "peaks": {}, "peaks_noted": {},
          "peaks_at": 0.0, "rss": None, "rss_at": -1.0}
PEAKS_EVERY_S = 1.0       # a device_memory event at most this often while peaks grow
#: The resident size is read again at most this often; without CUDA counters to note, a faster
#: loop's steps in between write no row (a /proc read per step would cost more than the step probe).
RSS_EVERY_S = 0.005


def shared_state() -> dict:
    """The probe's live state, for the step probe's hot path (whether a step's end reads memory)."""
    return _state


def install(torch) -> None:
    _state["torch"] = torch
    _state["stream"] = Stream(kinds.MEM, kinds.columns(kinds.MEM))
    _watch_exceptions()
    runtime.at_close(_flush)
    runtime.at_fork_child(_reset_in_child)


def on_step(optimizer, now: float) -> None:
    """At the end of each step (the steps probe calls it): the counters, and the anatomy once."""
    stream = _state["stream"]
    if stream is None:
        return
    alloc = peak = reserved = None
    cuda = _cuda()
    if cuda is None and 0.0 <= now - _state["rss_at"] < RSS_EVERY_S:
        if optimizer is not None and id(optimizer) not in _state["seen"]:
            _note_anatomy(optimizer, now)
        return             # a row per step would repeat the last reading of the resident size
    if cuda is not None:
        try:
            alloc, peak, reserved = _device_totals(cuda)
            if _state["peaks"] != _state["peaks_noted"] and now - _state["peaks_at"] >= PEAKS_EVERY_S:
                _note_device_peaks(now)
        except Exception:
            alloc = peak = reserved = None
    if not 0.0 <= now - _state["rss_at"] < RSS_EVERY_S:
        _state["rss"], _state["rss_at"] = _rss(), now
    stream.add(now, _state["rss"], alloc, peak, reserved)
    if optimizer is not None and id(optimizer) not in _state["seen"]:
        _note_anatomy(optimizer, now)


def _note_anatomy(optimizer, now: float) -> None:
    _state["seen"].add(id(optimizer))
    try:
        runtime.emit(dict(anatomy(optimizer), k=kinds.MEMORY_ANATOMY, t=now))
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


def _device_totals(cuda) -> tuple:
    """(allocated, peak, reserved) summed over the devices this process uses, each device's peaks
    kept for its `device_memory` event."""
    indices = cuda_devices.used() or (cuda.current_device(),)
    alloc = peak = reserved = 0
    peaks = _state["peaks"]
    for index in indices:
        now_alloc, now_peak, now_reserved, reserved_peak = cuda_devices.counters(cuda, index)
        alloc, peak, reserved = alloc + now_alloc, peak + now_peak, reserved + now_reserved
        kept = peaks.get(index)
        if kept is None or now_peak > kept[0] or reserved_peak > kept[1]:
            peaks[index] = (max(now_peak, kept[0] if kept else 0), max(reserved_peak, kept[1] if kept else 0))
    return alloc, peak, reserved


def _note_device_peaks(now: float) -> None:
    peaks = dict(_state["peaks"])
    if not peaks or peaks == _state["peaks_noted"]:
        return
    _state["peaks_noted"], _state["peaks_at"] = peaks, now
    runtime.emit({"k": kinds.DEVICE_MEMORY, "t": now,
                  "devices": [{"cuda_index": index, "peak_bytes": values[0], "reserved_peak_bytes": values[1]}
                              for index, values in sorted(peaks.items())]})


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
            runtime.emit({"k": kinds.EXCEPTION, "t": time.monotonic(), "type": getattr(kind, "__name__", str(kind)),
                          "module": getattr(kind, "__module__", None),
                          "memory": is_out_of_memory(kind, value), "shm": _is_out_of_shared_memory(value),
                          "rss": _rss()})
            _flush()
            runtime.flush()
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


OUT_OF_MEMORY_TYPES = {"MemoryError", "OutOfMemoryError"}
#: How allocators word running out of memory, lower-cased: torch's CUDA caching allocator ("CUDA out
#: of memory"), the CUDA runtime ("CUDA error: out of memory"), cuBLAS, cuDNN, cuFFT and cuSOLVER
#: workspaces, ROCm's HIP allocator, other accelerators, and torch's host allocator.
OUT_OF_MEMORY_SIGNS = ("cuda out of memory", "cuda error: out of memory", "cudaerrormemoryallocation",
                       "cublas_status_alloc_failed", "cudnn_status_alloc_failed", "cufft_alloc_failed",
                       "cusolver_status_alloc_failed", "cusparse_status_alloc_failed", "hip out of memory",
                       "hip error: out of memory", "hiperroroutofmemory", "mps backend out of memory",
                       "xpu out of memory", "defaultcpuallocator: can't allocate memory",
                       "defaultcpuallocator: not enough memory")
MESSAGE_CHARS = 4096      # of an exception's message read for the signs
CHAINED = 4               # exceptions followed along __cause__ / __context__


def is_out_of_memory(kind, value=None) -> bool:
    """Did this exception (or one it was raised from) run out of memory? By its type or its
    message; never raises, whatever the exception's __str__ does."""
    seen = 0
    while seen <= CHAINED:
        try:
            names = {getattr(k, "__name__", "") for k in getattr(kind, "__mro__", (kind,))}
        except Exception:
            names = set()
        if names & OUT_OF_MEMORY_TYPES or _message_says_out_of_memory(value):
            return True
        try:
            value = _raised_from(value)
        except Exception:
            return False
        if value is None:
            return False
        kind, seen = type(value), seen + 1
    return False


def _raised_from(value):
    """The exception this one was raised from, or while handling (unless `from None` hid it)."""
    if value is None:
        return None
    if value.__cause__ is not None:
        return value.__cause__
    return None if value.__suppress_context__ else value.__context__


def _message_says_out_of_memory(value) -> bool:
    if value is None:
        return False
    try:
        text = str(value)[:MESSAGE_CHARS].lower()
    except Exception:
        return False
    return any(sign in text for sign in OUT_OF_MEMORY_SIGNS)


def _flush() -> None:
    cuda = _state["cuda"]
    if cuda is not None:
        try:
            _device_totals(cuda)         # the peaks up to now (an exception that ends the program)
            _note_device_peaks(time.monotonic())
        except Exception:
            pass
    if _state["stream"] is not None:
        _state["stream"].flush()


def _reset_in_child() -> None:
    _statm.close()
    _state.update(stream=Stream(kinds.MEM, kinds.columns(kinds.MEM)), seen=set(), cuda=None, peaks={},
                  peaks_noted={}, peaks_at=0.0, rss=None, rss_at=-1.0)

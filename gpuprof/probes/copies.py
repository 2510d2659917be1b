"""Copy probe: host-to-device copies through `Tensor.to`, `Tensor.cuda` and `Tensor.pin_memory`.

For each copy from CPU towards a CUDA device: bytes, dtype, pinned or pageable source, non_blocking,
the host time of the call and the device time between two CUDA events around it. The events are
read back later with `query()` (never a synchronisation), and only once the program itself has
initialised CUDA: the probe never initialises CUDA and is not installed at all on a CPU-only
torch build. Figures are emitted as aggregates, never one event per copy.

The CUDA side sits behind a small seam (`CudaSeam`) so the logic is tested on machines without a GPU.
"""

import time

from . import boot
from ..record import kinds

EMIT_EVERY = 256          # copies between aggregate events
SMALL_COPY = 1 << 20      # copies under 1 MiB count as small
MAX_PENDING = 4096        # CUDA event pairs waiting to be read back


class CudaSeam:
    """The few CUDA facilities the probe needs, from torch.cuda."""

    def __init__(self, torch):
        self.torch = torch

    def is_initialized(self) -> bool:
        return bool(self.torch.cuda.is_initialized())

    def event(self):
        return self.torch.cuda.Event(enable_timing=True)

    def is_compiling(self) -> bool:
        compiler = getattr(self.torch, "compiler", None)
        return bool(compiler is not None and compiler.is_compiling())


class CopyTally:
    """Aggregates copies, reads finished CUDA events back lazily, emits every EMIT_EVERY copies."""

    def __init__(self, seam, emit=None):
        self.seam = seam
        self.emit = emit or boot.emit
        self.pending = []
        self.reset()

    def reset(self) -> None:
        self.totals = {"n": 0, "bytes": 0, "pageable_bytes": 0, "pinned_bytes": 0, "non_blocking": 0,
                       "small": 0, "host_s": 0.0, "gpu_s": 0.0, "timed": 0, "pin_n": 0, "pin_bytes": 0,
                       "pin_s": 0.0, "dtypes": {}}
        self.since_emit = 0

    def copy(self, nbytes: int, dtype: str, pinned, non_blocking: bool, host_s: float, events) -> None:
        t = self.totals
        t["n"] += 1
        t["bytes"] += nbytes
        if pinned:
            t["pinned_bytes"] += nbytes
        elif pinned is not None:
            t["pageable_bytes"] += nbytes
        t["non_blocking"] += bool(non_blocking)
        t["small"] += nbytes < SMALL_COPY
        t["host_s"] += host_s
        t["dtypes"][dtype] = t["dtypes"].get(dtype, 0) + nbytes
        if events is not None and len(self.pending) < MAX_PENDING:
            self.pending.append(events)
        self.since_emit += 1
        if self.since_emit >= EMIT_EVERY:
            self.publish()

    def pinned(self, nbytes: int, seconds: float) -> None:
        self.totals["pin_n"] += 1
        self.totals["pin_bytes"] += nbytes
        self.totals["pin_s"] += seconds

    def read_back(self) -> None:
        """Collect elapsed times of copies the device has finished; leave the rest pending."""
        still = []
        for start, end in self.pending:
            try:
                if end.query():
                    self.totals["gpu_s"] += start.elapsed_time(end) / 1000.0
                    self.totals["timed"] += 1
                else:
                    still.append((start, end))
            except Exception:
                continue
        self.pending = still

    def publish(self) -> None:
        self.read_back()
        if self.totals["n"] or self.totals["pin_n"]:
            event = {"k": kinds.COPIES, "t": time.monotonic()}
            event.update(self.totals)
            self.emit(event)
        self.reset()


def targets_cuda(args, kwargs) -> bool:
    """Does this `.to(...)` call send the tensor to a CUDA device? Cheap: looks at the arguments only."""
    target = kwargs.get("device")
    if target is None and args:
        target = args[0]
    if target is None:
        return False
    if isinstance(target, str):
        return target.startswith("cuda")
    kind = getattr(target, "type", None)          # torch.device
    if isinstance(kind, str):
        return kind == "cuda"
    device = getattr(target, "device", None)      # .to(other_tensor)
    if device is not None:
        return getattr(device, "type", None) == "cuda"
    return isinstance(target, int) and not isinstance(target, bool)


def _wrap_copy(original, tally: CopyTally, goes_to_cuda, blocking_flag_at: slice):
    """A `Tensor.to`/`Tensor.cuda` that times calls from CPU towards CUDA and passes the rest through."""
    seam = tally.seam

    def copy(self, *args, **kwargs):
        if seam.is_compiling() or self.device.type != "cpu" or not goes_to_cuda(args, kwargs):
            return original(self, *args, **kwargs)  # gpuprof's probe: passes the call through unchanged
        non_blocking = bool(kwargs.get("non_blocking", False) or any(a is True for a in args[blocking_flag_at]))
        return _timed_copy(original, tally, self, args, kwargs, non_blocking)

    copy.__wrapped__ = original
    copy.__name__ = getattr(original, "__name__", "copy")
    return copy


def wrap_to(original, tally: CopyTally):
    # to(device, dtype, non_blocking): a positional True can only be the non_blocking flag.
    return _wrap_copy(original, tally, targets_cuda, slice(1, 3))


def wrap_cuda(original, tally: CopyTally):
    # cuda(device, non_blocking): always towards CUDA.
    return _wrap_copy(original, tally, lambda args, kwargs: True, slice(1, 2))


def wrap_pin_memory(original, tally: CopyTally):
    seam = tally.seam

    def pin_memory(self, *args, **kwargs):
        if seam.is_compiling():
            return original(self, *args, **kwargs)  # gpuprof's probe: passes the call through unchanged
        start = time.perf_counter()
        result = original(self, *args, **kwargs)  # gpuprof's probe: passes the call through unchanged
        try:
            tally.pinned(self.numel() * self.element_size(), time.perf_counter() - start)
        except Exception:
            pass
        return result

    pin_memory.__wrapped__ = original
    return pin_memory


def _timed_copy(original, tally, tensor, args, kwargs, non_blocking):
    seam = tally.seam
    events = None
    if seam.is_initialized():      # never the probe's doing: only after the program initialised CUDA
        start_event, end_event = seam.event(), seam.event()
        start_event.record()
        events = (start_event, end_event)
    start = time.perf_counter()
    result = original(tensor, *args, **kwargs)  # gpuprof's probe: passes the call through unchanged
    host_s = time.perf_counter() - start
    try:
        if events is not None:
            events[1].record()
        pinned = tensor.is_pinned() if seam.is_initialized() else None
        tally.copy(tensor.numel() * tensor.element_size(), str(tensor.dtype).replace("torch.", ""),
                   pinned, non_blocking, host_s, events)
    except Exception:
        pass
    return result


def install(torch, seam=None) -> CopyTally:
    """Patch torch.Tensor's copy methods; returns the tally (tests read it)."""
    tally = CopyTally(seam or CudaSeam(torch))
    torch.Tensor.to = wrap_to(torch.Tensor.to, tally)
    torch.Tensor.cuda = wrap_cuda(torch.Tensor.cuda, tally)
    torch.Tensor.pin_memory = wrap_pin_memory(torch.Tensor.pin_memory, tally)
    boot.at_close(tally.publish)
    boot.at_fork_child(lambda: (tally.pending.clear(), tally.reset()))
    return tally

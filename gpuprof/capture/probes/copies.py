"""Copy probe: host-to-device copies through `Tensor.to`, `Tensor.cuda` and `Tensor.pin_memory`.

For each copy from CPU towards a CUDA device: bytes, dtype, pinned or pageable source, non_blocking,
the host time of the call and the device time between two CUDA events around it, recorded on the
current stream of the copy's target device (where the copy runs). The events are read back later
with `query()` (never a synchronisation), and only once the program itself has initialised CUDA:
the probe never initialises CUDA and is not installed at all on a CPU-only torch build.

A copy that holds the host until it is done (non_blocking=False, or a pageable source: the CUDA
Runtime API's "API synchronization behavior" has the stream synchronised before a pageable copy
starts) also holds it while the device finishes the kernels queued before it. Its host time beyond
its device time is that wait, tallied apart (`wait_s`), never as copying.

Figures are emitted as aggregates ("blocks"), never one event per copy: every EMIT_EVERY copies, at
most once a second at a step's end (so the copies before the first step end up in a block of their
own), and at exit. Each block says when its first and last copy were made (`t0`, `t1`), so the
analysis can keep start-up copies out of the steps' window. A copy's device time is added to the
block in which it is read back; a block holding only such late read-backs takes its span from when
those copies were made.

The CUDA side sits behind a small seam (`CudaSeam`) so the logic is tested on machines without a GPU.
"""

import time

from . import runtime, device_wait
from ...record import kinds

_thread_time = time.thread_time

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

    def stream(self, device):
        """The current stream of `device` (an index; None: the current device)."""
        return self.torch.cuda.current_stream(device)

    def is_compiling(self) -> bool:
        compiler = getattr(self.torch, "compiler", None)
        return bool(compiler is not None and compiler.is_compiling())


#: Float copies at least this large have their values looked at (a sample, `batch_facts`): data of
#: 8-bit values copied as float32 could travel as uint8, 4 times fewer bytes.
UINT8_TEST_BYTES = 1 << 20
#: Copies looked at per process: the first ones of a loop, which repeats the same kind of copy.
UINT8_TESTS = 4


def _empty_totals() -> dict:
    return {"n": 0, "bytes": 0, "pageable_bytes": 0, "pinned_bytes": 0, "non_blocking": 0, "small": 0,
            "host_s": 0.0, "gpu_s": 0.0, "timed": 0, "timed_bytes": 0, "timed_host_s": 0.0, "wait_s": 0.0,
            "pin_n": 0, "pin_bytes": 0, "pin_s": 0.0, "dtypes": {}, "t0": None, "t1": None}


class CopyTally:
    """Aggregates copies, reads finished CUDA events back lazily, emits blocks of copies."""

    def __init__(self, seam, emit=None):
        self.seam = seam
        self.emit = emit or runtime.emit
        self.pending = []         # (start event, end event, bytes, host seconds, holds the host, made at)
        self.uint8_tests = 0      # large float copies whose values were looked at
        self.reset()

    def look_at_values(self, tensor, torch) -> None:
        """For the first few large float copies: could their values travel as uint8? Emitted at once
        (a few events a run), with the line that copied them."""
        if self.uint8_tests >= UINT8_TESTS or not tensor.is_floating_point() \
                or tensor.numel() * tensor.element_size() < UINT8_TEST_BYTES or tensor.layout != torch.strided:
            return
        self.uint8_tests += 1
        from .batch_facts import _uint8_test
        from .where import locate
        with torch.no_grad():
            found = _uint8_test(tensor, torch)
        self.emit({"k": kinds.COPY_VALUES, "t": time.monotonic(), "dtype": str(tensor.dtype).replace("torch.", ""),
                   "shape": list(tensor.shape), "bytes": int(tensor.numel() * tensor.element_size()),
                   "where": locate().get("where"), **found})

    def reset(self) -> None:
        self.totals = _empty_totals()
        self.read_span = {"t0": None, "t1": None}     # when the copies read back in this block were made
        self.since_emit = 0

    def _span(self, at, t=None) -> None:
        t = self.totals if t is None else t
        if at is not None:
            if t["t0"] is None or at < t["t0"]:
                t["t0"] = at
            if t["t1"] is None or at > t["t1"]:
                t["t1"] = at

    def copy(self, nbytes: int, dtype: str, pinned, non_blocking: bool, host_s: float, events, at=None) -> None:
        """One copy made at `at` (time.monotonic()); `events` is its (start, end) CUDA events or None."""
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
        self._span(at)
        if events is not None and len(self.pending) < MAX_PENDING:
            holds_host = not non_blocking or pinned is False
            self.pending.append((events[0], events[1], nbytes, host_s, holds_host, at))
        self.since_emit += 1
        if self.since_emit >= EMIT_EVERY:
            self.publish()

    def pinned(self, nbytes: int, seconds: float) -> None:
        self.totals["pin_n"] += 1
        self.totals["pin_bytes"] += nbytes
        self.totals["pin_s"] += seconds

    def read_back(self) -> None:
        """Collect device times of copies the device has finished; leave the rest pending."""
        still = []
        t = self.totals
        for entry in self.pending:
            start, end, nbytes, host_s, holds_host, at = entry
            try:
                if not end.query():
                    still.append(entry)
                    continue
                device_s = start.elapsed_time(end) / 1000.0
            except Exception:
                continue
            t["gpu_s"] += device_s
            t["timed"] += 1
            t["timed_bytes"] += nbytes
            t["timed_host_s"] += host_s
            if holds_host and host_s > device_s:
                t["wait_s"] += host_s - device_s      # the host waited for earlier kernels
            self._span(at, self.read_span)
        self.pending = still

    def publish(self, now=None) -> None:
        self.read_back()
        t = self.totals
        if t["n"] or t["pin_n"] or t["timed"]:
            event = {"k": kinds.COPIES, "t": time.monotonic()}
            event.update(t)
            if t["t0"] is None:       # only late read-backs: the block stands where their copies were made
                event.update(self.read_span)
            self.emit(event)
        self.reset()


def target_device(target):
    """The device index a `.to(target)`/`.cuda(target)` argument names; None: the current device."""
    if target is None:
        return None
    if isinstance(target, str):
        _, _, index = target.partition(":")
        return int(index) if index.strip().isdigit() else None
    if isinstance(target, int) and not isinstance(target, bool):
        return target
    if isinstance(getattr(target, "type", None), str):      # torch.device (a tensor's `type` is a method)
        index = getattr(target, "index", None)
        return index if isinstance(index, int) else None
    device = getattr(target, "device", None)      # .to(other_tensor)
    if device is not None:
        index = getattr(device, "index", None)
        return index if isinstance(index, int) else None
    return None


def targets_cuda(args, kwargs) -> bool:
    """Does this `.to(...)` call send the tensor to a CUDA device? Cheap: looks at the arguments only."""
    target = _to_target(args, kwargs)
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


def _to_target(args, kwargs):
    target = kwargs.get("device")
    if target is None and args:
        target = args[0]
    return target


def _cuda_target(args, kwargs):
    return kwargs.get("device", args[0] if args else None)


def _wrap_copy(original, tally: CopyTally, goes_to_cuda, blocking_flag_at: slice, target_of):
    """A `Tensor.to`/`Tensor.cuda` that times calls from CPU towards CUDA and passes the rest through."""
    seam = tally.seam

    def copy(self, *args, **kwargs):
        if seam.is_compiling() or self.device.type != "cpu" or not goes_to_cuda(args, kwargs):
            return original(self, *args, **kwargs)  # gpuprof's probe: passes the call through unchanged
        non_blocking = bool(kwargs.get("non_blocking", False) or any(a is True for a in args[blocking_flag_at]))
        return _timed_copy(original, tally, self, args, kwargs, non_blocking, target_of)

    copy.__wrapped__ = original
    copy.__name__ = getattr(original, "__name__", "copy")
    return copy


def wrap_to(original, tally: CopyTally):
    # to(device, dtype, non_blocking): a positional True can only be the non_blocking flag.
    return _wrap_copy(original, tally, targets_cuda, slice(1, 3), _to_target)


def wrap_cuda(original, tally: CopyTally):
    # cuda(device, non_blocking): always towards CUDA.
    return _wrap_copy(original, tally, lambda args, kwargs: True, slice(1, 2), _cuda_target)


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


def _start_events(seam, args, kwargs, target_of):
    """(start, end, stream) with start recorded on the target device's current stream, or None.
    Only once the program has initialised CUDA; a target the program got wrong (an index past the
    last device) leaves the error to the program's own call."""
    if not seam.is_initialized():      # never the probe's doing: only after the program initialised CUDA
        return None
    try:
        stream = seam.stream(target_device(target_of(args, kwargs)))
        start_event, end_event = seam.event(), seam.event()
        start_event.record(stream)
        return start_event, end_event, stream
    except Exception:
        return None


def _timed_copy(original, tally, tensor, args, kwargs, non_blocking, target_of):
    seam = tally.seam
    timing = _start_events(seam, args, kwargs, target_of)
    # A blocking copy holds the host while the device finishes earlier work: the thread's CPU in it
    # (CUDA spins while it waits) is not preparing the batch either. Non-blocking copies hold it
    # little, and skip the two clock reads.
    cpu = _thread_time() if not non_blocking else None
    start = time.monotonic()
    result = original(tensor, *args, **kwargs)  # gpuprof's probe: passes the call through unchanged
    host_s = time.monotonic() - start
    device_wait.held[0] += host_s       # copying or waiting for the device: not preparing the batch
    if cpu is not None:
        device_wait.held_cpu[0] += _thread_time() - cpu
    try:
        events = None
        if timing is not None:
            timing[1].record(timing[2])
            events = timing[:2]
        pinned = tensor.is_pinned() if seam.is_initialized() else None
        tally.copy(tensor.numel() * tensor.element_size(), str(tensor.dtype).replace("torch.", ""),
                   pinned, non_blocking, host_s, events, at=start)
    except Exception:
        pass
    try:
        tally.look_at_values(tensor, seam.torch)
    except Exception:
        pass
    return result


def install(torch, seam=None) -> CopyTally:
    """Patch torch.Tensor's copy methods; returns the tally (tests read it)."""
    tally = CopyTally(seam or CudaSeam(torch))
    torch.Tensor.to = wrap_to(torch.Tensor.to, tally)
    torch.Tensor.cuda = wrap_cuda(torch.Tensor.cuda, tally)
    torch.Tensor.pin_memory = wrap_pin_memory(torch.Tensor.pin_memory, tally)
    runtime.each_second(tally.publish)
    runtime.at_close(tally.publish)
    runtime.at_fork_child(lambda: forget_in_child(tally))
    return tally


def forget_in_child(tally: CopyTally) -> None:
    """A forked child drops the parent's copies, but never destroys the parent's CUDA events: torch's
    ~CUDAEvent runs under a device guard that fails in a child forked after CUDA was initialised, and
    a failure inside a destructor ends the process (std::terminate, SIGABRT; a DataLoader worker
    "killed by signal: Aborted" on an H200, docs/validation.md). The child keeps them, unreachable and
    never freed, even at its interpreter's shutdown: memory it shares with its parent until written."""
    inherited, tally.pending = tally.pending, []
    if inherited:
        keep_forever(inherited)
    tally.reset()


def keep_forever(obj) -> None:
    """One reference that nothing releases, so `obj` outlives the interpreter's own teardown."""
    import ctypes
    ctypes.pythonapi.Py_IncRef(ctypes.py_object(obj))

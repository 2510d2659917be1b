"""Host time spent waiting for the GPU: inside blocking host-to-device copies (CUDA syncs the stream
before a pageable copy, and torch waits for a blocking one to finish) and in the calls that
synchronise with the device (`.item()`, `.tolist()`, `.cpu()` of a CUDA tensor,
`torch.cuda.synchronize()`).

In a loop that makes its batches by hand, the host time before each step's first forward is taken as
preparing the batch; the part of it spent here is waiting for the device instead, and the steps
probe reads it apart. One running total per process, read twice a step: nothing is emitted here.

A host waiting for the device is not idle: CUDA's default schedule (cudaDeviceScheduleAuto: spin
while the process has fewer active contexts than the machine has cores) spins the waiting thread,
so an `.item()` that waits 0.4 s for queued kernels costs 0.4 s of that thread's CPU. On an H200 that
CPU read as batch preparation made a compute loop with pauses "input-bound, CPU-bound"
(docs/validation.md). The thread CPU spent inside these waits is kept too (`held_cpu`), and the steps
probe takes it out of the preparation's CPU."""

import threading
import time

_inside = threading.local()     # this thread is inside a timed call

#: Seconds this process's threads have spent blocked on the device so far.
held = [0.0]
#: The CPU seconds the waiting threads spent meanwhile (spinning), by the same calls.
held_cpu = [0.0]


def _timed(original, method: bool):
    """`original` timed into `held` (and its thread CPU into `held_cpu`); a tensor method only when
    its tensor is on a CUDA device. A timed call made inside another (an `.item()` implemented with
    `.cpu()`, as the simulated GPU's is) counts once, in the outer one."""
    def call(*args, **kwargs):
        if (method and not args[0].is_cuda) or getattr(_inside, "depth", 0):
            return original(*args, **kwargs)  # gpuprof's probe: passes the call through unchanged
        start, cpu = time.monotonic(), time.thread_time()
        _inside.depth = 1
        try:
            return original(*args, **kwargs)  # gpuprof's probe: passes the call through unchanged
        finally:
            _inside.depth = 0
            held[0] += time.monotonic() - start
            held_cpu[0] += time.thread_time() - cpu

    call.__wrapped__ = original
    call.__name__ = getattr(original, "__name__", "call")
    call.__doc__ = getattr(original, "__doc__", None)
    return call


def install(torch) -> None:
    """Time the synchronising calls of a CUDA build's torch (copies add their own host time)."""
    for name in ("item", "tolist", "cpu"):
        setattr(torch.Tensor, name, _timed(getattr(torch.Tensor, name), method=True))
    torch.cuda.synchronize = _timed(torch.cuda.synchronize, method=False)

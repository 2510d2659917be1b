"""Host time spent waiting for the GPU: inside blocking host-to-device copies (CUDA syncs the stream
before a pageable copy, and torch waits for a blocking one to finish) and in the calls that
synchronise with the device (`.item()`, `.tolist()`, `.cpu()` of a CUDA tensor,
`torch.cuda.synchronize()`).

In a loop that makes its batches by hand, the host time before each step's first forward is taken as
preparing the batch; the part of it spent here is waiting for the device instead, and the steps
probe reads it apart. One running total per process, read twice a step: nothing is emitted here."""

import time

#: Seconds this process's threads have spent blocked on the device so far.
held = [0.0]


def _timed(original, method: bool):
    """`original` timed into `held`; a tensor method only when its tensor is on a CUDA device."""
    def call(*args, **kwargs):
        if method and not args[0].is_cuda:
            return original(*args, **kwargs)  # gpuprof's probe: passes the call through unchanged
        start = time.monotonic()
        try:
            return original(*args, **kwargs)  # gpuprof's probe: passes the call through unchanged
        finally:
            held[0] += time.monotonic() - start

    call.__wrapped__ = original
    call.__name__ = getattr(original, "__name__", "call")
    call.__doc__ = getattr(original, "__doc__", None)
    return call


def install(torch) -> None:
    """Time the synchronising calls of a CUDA build's torch (copies add their own host time)."""
    for name in ("item", "tolist", "cpu"):
        setattr(torch.Tensor, name, _timed(getattr(torch.Tensor, name), method=True))
    torch.cuda.synchronize = _timed(torch.cuda.synchronize, method=False)

"""The CUDA devices this process uses, identified inside the job, and their memory counters.

Once the program itself has initialised CUDA (never initialised here), at most once a second at a
step's end (and at exit) the probe notes the devices this process uses: the current device, and
any other device where torch's caching allocator holds memory (`memory_reserved(i) > 0`, a
host-side counter that creates no context on a device the program never touched). For each: the
CUDA index, the UUID in NVML's spelling ("GPU-" or "MIG-" and lower-case hex, as
`nvmlDeviceGetUUID` gives it, so the supervisor can find the same GPU in NVML whatever
CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER made of the indices), and the name; with this process's
CUDA_VISIBLE_DEVICES. One `cuda_devices` event, and another only when the set changes.

The memory probe reads its per-step counters for the devices noted here (`used()`)."""

import os
import time

from . import runtime
from ...record import kinds

_state = {"torch": None, "cuda": None, "used": (), "noted": None}


def install(torch) -> None:
    _state["torch"] = torch
    runtime.each_second(check)
    runtime.at_close(check)
    runtime.at_fork_child(_reset_in_child)


def cuda():
    """torch.cuda once the program itself has initialised CUDA, else None."""
    found = _state["cuda"]
    if found is None:
        torch = _state["torch"]
        try:
            if torch is not None and torch.cuda.is_initialized():
                found = _state["cuda"] = torch.cuda
        except Exception:
            return None
    return found


def used() -> tuple:
    """Indices of the CUDA devices this process used at the last check; () before the first."""
    return _state["used"]


def counters(torch_cuda, index) -> tuple:
    """(allocated, peak allocated, reserved, peak reserved) bytes of one device from torch's caching
    allocator: one host-side read of its statistics, no synchronisation."""
    nested = getattr(torch_cuda, "memory_stats_as_nested_dict", None)
    if nested is not None:
        stats = nested(index)
        allocated, reserved = stats.get("allocated_bytes", {}).get("all", {}), stats.get("reserved_bytes", {}).get("all", {})
        return (allocated.get("current", 0), allocated.get("peak", 0), reserved.get("current", 0),
                reserved.get("peak", 0))
    reserved = torch_cuda.memory_reserved(index)
    return (torch_cuda.memory_allocated(index), torch_cuda.max_memory_allocated(index), reserved,
            torch_cuda.max_memory_reserved(index))


def used_indices(torch_cuda) -> tuple:
    """The current device and every device where the caching allocator holds memory."""
    current = torch_cuda.current_device()
    found = {current}
    for index in range(torch_cuda.device_count()):
        if index != current and counters(torch_cuda, index)[2] > 0:
            found.add(index)
    return tuple(sorted(found))


def check(now=None) -> None:
    """Note the devices in use; emit them when the set changed since the last note."""
    torch_cuda = cuda()
    if torch_cuda is None:
        return
    try:
        indices = used_indices(torch_cuda)
    except Exception:
        return
    _state["used"] = indices
    if indices == _state["noted"]:
        return
    _state["noted"] = indices
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    runtime.emit({"k": kinds.CUDA_DEVICES, "t": time.monotonic(),
                  "devices": [describe(torch_cuda, index, visible) for index in indices],
                  "visible": visible, "order": os.environ.get("CUDA_DEVICE_ORDER")})


def describe(torch_cuda, index: int, visible=None) -> dict:
    """{"cuda_index", "uuid", "name"} of one device; a field that cannot be read is None."""
    out = {"cuda_index": index, "uuid": None, "name": None}
    try:
        props = torch_cuda.get_device_properties(index)
    except Exception:
        return out
    try:
        out["name"] = str(props.name)
    except Exception:
        pass
    try:
        raw = getattr(props, "uuid", None)
        out["uuid"] = nvml_uuid(raw, is_mig(out["name"], raw, visible))
    except Exception:
        pass
    return out


_HEX = set("0123456789abcdef")


def _hex_of(raw):
    """The 32 hex digits of a CUDA UUID: torch's `_CUuuid` prints 8-4-4-4-12 lower-case hex (no
    prefix); its `bytes` are the 16 bytes themselves; a string may carry NVML's prefix already."""
    if raw is None:
        return None
    text = str(raw).strip().lower()
    if text[:4] in ("gpu-", "mig-"):
        text = text[4:]
    digits = text.replace("-", "")
    if len(digits) == 32 and set(digits) <= _HEX:
        return digits
    values = getattr(raw, "bytes", None)
    if values is not None and len(values) == 16:
        return "".join("%02x" % (int(v) & 0xFF) for v in values)
    return None


def nvml_uuid(raw, mig: bool = False):
    """A CUDA device UUID in NVML's spelling: "GPU-" (or "MIG-" for a MIG instance) and lower-case
    hex in 8-4-4-4-12 groups; None when `raw` is no UUID."""
    digits = _hex_of(raw)
    if digits is None:
        return None
    grouped = "-".join((digits[:8], digits[8:12], digits[12:16], digits[16:20], digits[20:]))
    return ("MIG-" if mig else "GPU-") + grouped


def is_mig(name, raw, visible) -> bool:
    """A MIG instance: CUDA names it "<GPU> MIG <profile>", or CUDA_VISIBLE_DEVICES named it by its
    "MIG-" UUID."""
    if name and " MIG " in f" {name} ":
        return True
    digits = _hex_of(raw)
    for entry in (visible or "").split(","):
        entry = entry.strip().lower()
        if entry.startswith("mig-") and digits and _hex_of(entry) == digits:
            return True
    return False


def _reset_in_child() -> None:
    _state.update(cuda=None, used=(), noted=None)

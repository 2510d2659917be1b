"""The devices NVML shows, each sampled on its own: whole GPUs and the MIG instances of GPUs in MIG mode.

NVML lists GPUs by index (PCI bus order). A GPU in MIG mode is split into GPU instances, each a
device of its own with a handle (nvmlDeviceGetMigDeviceHandleByIndex), a "MIG-" UUID and its own
memory; NVML does not give utilisation for them (nvmlDeviceGetUtilizationRates answers Not
Supported on MIG-enabled GPUs), so their activity comes from GPM where the GPU has it. Each device
keeps what it does not support and whether it was lost, so one device never stops the others."""

from gpuprof.capture.samplers.columns import ColumnStore

#: NVML return codes that mean "this device or driver does not offer this", not "this device failed":
#: NOT_SUPPORTED, NO_PERMISSION, NOT_FOUND, FUNCTION_NOT_FOUND (an older driver than the binding).
NOT_OFFERED = {3, 4, 6, 13}
NOT_OFFERED_NAMES = {"NVMLError_NotSupported", "NVMLError_NoPermission", "NVMLError_NotFound",
                     "NVMLError_FunctionNotFound"}


def not_offered(exc: BaseException) -> bool:
    """The call failed because the device or driver does not offer it (the binding may even lack it)."""
    if isinstance(exc, AttributeError):
        return True
    return getattr(exc, "value", None) in NOT_OFFERED or type(exc).__name__ in NOT_OFFERED_NAMES


def describe(exc: BaseException) -> str:
    text = str(exc) or exc.__class__.__name__
    return f"{exc.__class__.__name__}: {text}" if text != exc.__class__.__name__ else text


def text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def nvml_uuid(value):
    """A UUID in NVML's spelling: "GPU-" or "MIG-" prefix, lower-case hex (None stays None)."""
    if not value:
        return None
    value = text(value).strip()
    for prefix in ("GPU-", "MIG-"):
        if value.upper().startswith(prefix):
            return prefix + value[len(prefix):].lower()
    return value.lower()


class Device:
    """One sampled device: a whole GPU (`gpu_instance_id` None) or one MIG GPU instance on GPU `index`."""

    MAX_PROCESSES = 64      # per-process entries kept per device (a shared GPU may list many)

    def __init__(self, index: int, handle, columns: dict, max_rows: int, parent=None, gpu_instance_id=None):
        self.index = index
        self.handle = handle
        self.parent = parent                  # the GPU's handle, for a MIG instance
        self.gpu_instance_id = gpu_instance_id
        self.info = {"index": index}
        self.store = ColumnStore(columns, max_rows=max_rows)
        self.unsupported = set()
        self.lost = None                      # why NVML stopped answering for it
        self.lost_at = None
        self.clock_events = {}                # {reason name: ticks seen}
        self.job_memory = {}                  # {pid: most bytes} for the job's processes NVML listed
        self.processes = {}                   # {pid: most bytes, or None where NVML does not know}
        self.pcie = (None, None)              # the latest (rx, tx) bytes per second
        self.gpm = None                       # a GpmReader while the device's GPM answers
        self.gpm_seen = False                 # GPM gave this device a figure at least once

    @property
    def mig(self) -> bool:
        return self.gpu_instance_id is not None

    def optional(self, metric: str, func, *args):
        """A metric this device does not offer, or that fails, is dropped for this device only."""
        if metric in self.unsupported:
            return None
        try:
            return func(*args)
        except Exception:
            self.unsupported.add(metric)
            return None

    def note_processes(self, procs, job_pids: set) -> None:
        for proc in procs:
            pid = getattr(proc, "pid", None)
            if pid is None:
                continue
            used = getattr(proc, "usedGpuMemory", None)
            used = int(used) if used is not None else None
            if pid in self.processes or len(self.processes) < self.MAX_PROCESSES:
                known = self.processes.get(pid)
                self.processes[pid] = used if known is None else max(known, used or 0)
            if pid in job_pids and used is not None:
                self.job_memory[pid] = max(self.job_memory.get(pid, 0), used)

    def to_dict(self) -> dict:
        entry = dict(self.info)
        entry["series"] = self.store.to_dict()
        entry["clock_events"] = dict(self.clock_events)
        entry["job_memory"] = {str(pid): used for pid, used in self.job_memory.items()}
        entry["processes"] = {str(pid): used for pid, used in self.processes.items()}
        entry["unsupported"] = sorted(self.unsupported)
        entry["gpm"] = self.gpm_seen
        if self.lost:
            entry["lost"], entry["lost_at"] = self.lost, self.lost_at
        return entry


def identity(nvml, device: Device, clock_sm: int) -> None:
    """Name, UUID, PCI bus id, memory and top SM clock of `device` into its info. Memory is required
    (a device that cannot say how much it has is not usable); the rest is optional."""
    handle = device.handle
    memory = nvml.nvmlDeviceGetMemoryInfo(handle)
    info = device.info
    info["name"] = text(device.optional("name", nvml.nvmlDeviceGetName, handle) or "unknown")
    info["uuid"] = nvml_uuid(device.optional("uuid", nvml.nvmlDeviceGetUUID, handle))
    pci = device.optional("pci", nvml.nvmlDeviceGetPciInfo, device.parent or handle)
    info["pci_bus_id"] = text(pci.busId) if pci is not None and getattr(pci, "busId", None) else None
    info["mem_total"] = int(memory.total)
    info["sm_clock_max_mhz"] = device.optional("max_clock", nvml.nvmlDeviceGetMaxClockInfo,
                                               device.parent or handle, clock_sm)
    if device.mig:
        info["mig"] = {"gpu_instance_id": device.gpu_instance_id}


def mig_enabled(nvml, handle) -> bool:
    """The GPU runs in MIG mode now (GPUs before Ampere answer Not Supported: not in MIG mode)."""
    try:
        current = nvml.nvmlDeviceGetMigMode(handle)[0]
    except Exception:
        return False
    return current == getattr(nvml, "NVML_DEVICE_MIG_ENABLE", 1)


def mig_handles(nvml, handle) -> list:
    """[(handle, GPU instance id)] of the MIG devices on a GPU in MIG mode; empty slots are skipped."""
    out = []
    try:
        slots = int(nvml.nvmlDeviceGetMaxMigDeviceCount(handle))
    except Exception:
        return out
    for slot in range(slots):
        try:
            mig = nvml.nvmlDeviceGetMigDeviceHandleByIndex(handle, slot)
            out.append((mig, int(nvml.nvmlDeviceGetGpuInstanceId(mig))))
        except Exception:
            continue                     # NVML_ERROR_NOT_FOUND: no instance in this slot
    return out

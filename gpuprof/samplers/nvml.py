"""The NVML sampler: per-GPU utilisation, memory, PCIe traffic, SM clock and clock-event reasons.

It talks to any object with pynvml's function names (the real `pynvml` module from nvidia-ml-py,
or a fake in tests). It only reads: it never changes persistence, accounting or clocks. No library,
no driver, no GPU or any NVML error turns GPU sampling off with a stated reason; nothing else in the
run changes.
"""

from gpuprof.samplers.columns import LAST, MAX, MEAN, ColumnStore

GPU_COLUMNS = {"t": LAST, "util_gpu": MEAN, "util_memory": MEAN, "mem_used": MAX,
               "pcie_rx_bps": MEAN, "pcie_tx_bps": MEAN, "sm_clock_mhz": MEAN}

# Bits of nvmlClocksEventReasons worth naming in a report.
CLOCK_EVENT_NAMES = {
    0x1: "gpu_idle", 0x2: "applications_clocks_setting", 0x4: "sw_power_cap",
    0x8: "hw_slowdown", 0x10: "sync_boost", 0x20: "sw_thermal_slowdown",
    0x40: "hw_thermal_slowdown", 0x80: "hw_power_brake_slowdown", 0x100: "display_clock_setting",
}
# nvmlPcieUtilCounter_t and nvmlClockType_t values from nvml.h.
PCIE_TX, PCIE_RX, CLOCK_SM = 0, 1, 1
PCIE_EVERY = 5        # PCIe throughput takes ~20 ms a call in the driver: read it every 5th tick
PIDS_EVERY = 10       # per-process GPU memory every 10th tick


def load_nvml():
    """The real pynvml module, or (None, reason) when it cannot be imported."""
    try:
        import pynvml
    except Exception as exc:  # ImportError, or a broken install
        return None, f"nvidia-ml-py is not importable ({exc.__class__.__name__}: {exc})"
    return pynvml, None


def _describe(exc: BaseException) -> str:
    text = str(exc) or exc.__class__.__name__
    return f"{exc.__class__.__name__}: {text}" if text != exc.__class__.__name__ else text


class NvmlSampler:
    def __init__(self, nvml, clock, job_pids=lambda: set(), max_rows: int = 20000):
        self.nvml = nvml
        self.clock = clock
        self.job_pids = job_pids
        self.max_rows = max_rows
        self.available = False
        self.reason = None
        self.driver = None
        self.devices = []          # [{index, name, mem_total, uuid}]
        self.stores = []
        self.clock_events = []     # per device: {reason name: ticks seen}
        self.job_memory = []       # per device: {pid: max bytes}
        self._handles = []
        self._unsupported = set()
        self._ticks = 0
        self._last_pcie = []

    def start(self) -> bool:
        if self.nvml is None:
            self.reason = self.reason or "NVML is not available"
            return False
        try:
            self.nvml.nvmlInit()
        except Exception as exc:
            self.reason = f"NVML could not start ({_describe(exc)}): no NVIDIA driver or GPU here"
            return False
        try:
            count = self.nvml.nvmlDeviceGetCount()
            try:
                self.driver = _text(self.nvml.nvmlSystemGetDriverVersion())
            except Exception:
                self.driver = None
            for index in range(count):
                handle = self.nvml.nvmlDeviceGetHandleByIndex(index)
                memory = self.nvml.nvmlDeviceGetMemoryInfo(handle)
                self._handles.append(handle)
                self.devices.append({"index": index, "name": _text(self.nvml.nvmlDeviceGetName(handle)),
                                     "mem_total": int(memory.total),
                                     "sm_clock_max_mhz": self._optional("max_clock", self.nvml.nvmlDeviceGetMaxClockInfo,
                                                                        handle, CLOCK_SM)})
                self.stores.append(ColumnStore(GPU_COLUMNS, max_rows=self.max_rows))
                self.clock_events.append({})
                self.job_memory.append({})
                self._last_pcie.append((None, None))
        except Exception as exc:
            self.reason = f"NVML failed while listing GPUs ({_describe(exc)})"
            self._shutdown()
            self.devices, self.stores, self._handles = [], [], []
            return False
        if not self.devices:
            self.reason = "NVML found no GPU"
            self._shutdown()
            return False
        self.available = True
        return True

    def tick(self) -> None:
        if not self.available:
            return
        self._ticks += 1
        now = self.clock()
        try:
            for i, handle in enumerate(self._handles):
                self.stores[i].append(self._read_device(i, handle, now))
            if self._ticks % PIDS_EVERY == 1:
                self._read_job_memory()
        except Exception as exc:
            self.available = False
            self.reason = f"NVML failed during the run ({_describe(exc)}); GPU sampling stopped there"
            self._shutdown()

    def _read_device(self, i: int, handle, now) -> dict:
        util = self.nvml.nvmlDeviceGetUtilizationRates(handle)
        memory = self.nvml.nvmlDeviceGetMemoryInfo(handle)
        row = {"t": now, "util_gpu": float(util.gpu) / 100.0, "util_memory": float(util.memory) / 100.0,
               "mem_used": int(memory.used)}
        if self._ticks % PCIE_EVERY == 1:
            rx = self._optional("pcie", self.nvml.nvmlDeviceGetPcieThroughput, handle, PCIE_RX)
            tx = self._optional("pcie", self.nvml.nvmlDeviceGetPcieThroughput, handle, PCIE_TX)
            self._last_pcie[i] = (rx * 1024 if rx is not None else None, tx * 1024 if tx is not None else None)
        row["pcie_rx_bps"], row["pcie_tx_bps"] = self._last_pcie[i]
        row["sm_clock_mhz"] = self._optional("clock", self.nvml.nvmlDeviceGetClockInfo, handle, CLOCK_SM)
        reasons = self._optional("events", self._clock_event_reasons, handle)
        if reasons:
            seen = self.clock_events[i]
            for bit, name in CLOCK_EVENT_NAMES.items():
                if reasons & bit:
                    seen[name] = seen.get(name, 0) + 1
        return row

    def _clock_event_reasons(self, handle):
        getter = getattr(self.nvml, "nvmlDeviceGetCurrentClocksEventReasons", None) or \
            getattr(self.nvml, "nvmlDeviceGetCurrentClocksThrottleReasons")
        return int(getter(handle))

    def _optional(self, metric: str, func, *args):
        """A metric this GPU does not support is dropped after its first failure, not fatal."""
        if metric in self._unsupported:
            return None
        try:
            return func(*args)
        except Exception:
            self._unsupported.add(metric)
            return None

    def _read_job_memory(self) -> None:
        if "pids" in self._unsupported:
            return
        pids = self.job_pids()
        for i, handle in enumerate(self._handles):
            try:
                procs = self.nvml.nvmlDeviceGetComputeRunningProcesses(handle)
            except Exception:
                self._unsupported.add("pids")
                return
            for proc in procs:
                used = getattr(proc, "usedGpuMemory", None)
                if proc.pid in pids and used is not None:
                    self.job_memory[i][proc.pid] = max(self.job_memory[i].get(proc.pid, 0), int(used))

    def stop(self) -> None:
        if self.available:
            self._shutdown()

    def _shutdown(self) -> None:
        try:
            self.nvml.nvmlShutdown()
        except Exception:
            pass

    def to_dict(self) -> dict:
        gpus = []
        for i, device in enumerate(self.devices):
            entry = dict(device)
            entry["series"] = self.stores[i].to_dict()
            entry["clock_events"] = self.clock_events[i]
            entry["job_memory"] = {str(pid): used for pid, used in self.job_memory[i].items()}
            gpus.append(entry)
        return {"available": bool(self.devices), "reason": self.reason, "driver": self.driver,
                "unsupported": sorted(self._unsupported), "gpus": gpus}


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)

"""The NVML sampler: per device utilisation, memory, SM clock and clock-event reasons, SM activity
(GPM), energy, PCIe traffic and the processes NVML lists.

It talks to any object with pynvml's function names (the real `pynvml` module from nvidia-ml-py,
or a fake in tests). It only reads: it never changes persistence, accounting, clocks or GPM
streaming. No library, no driver or no GPU turns GPU sampling off with a stated reason; nothing else
in the run changes. Each device is sampled on its own: a metric a device does not offer is dropped
for that device, and a device that stops answering (GPU lost) is marked lost with the reason while
the others go on.

Two loops drive it: `tick` (the run's interval: the cheap reads) and `tick_pcie` (about once a
second: nvmlDeviceGetPcieThroughput samples the bus for ~20 ms a call in the driver, so on eight
GPUs it would stall the main tick)."""

from gpuprof.capture.samplers.columns import LAST, MAX, MEAN
from gpuprof.capture.samplers.nvml_devices import (Device, describe, identity, mig_enabled, mig_handles, not_offered,
                                           text)
from gpuprof.capture.samplers.nvml_gpm import GpmReader, gpm_supported

GPU_COLUMNS = {"t": LAST, "util_gpu": MEAN, "util_memory": MEAN, "mem_used": MAX,
               "pcie_rx_bps": MEAN, "pcie_tx_bps": MEAN, "sm_clock_mhz": MEAN,
               # One tick's nvmlClocksEventReasons bits (a long run's merged rows keep the later tick's).
               "clock_reasons": LAST,
               # GPM, 0..1 over the time since the previous reading: time any context was active,
               # share of SMs busy, warps resident over the most the SMs hold.
               "gpm_busy": MEAN, "sm_active": MEAN, "sm_occupancy": MEAN,
               # nvmlDeviceGetTotalEnergyConsumption: millijoules since the driver loaded (a counter).
               "energy_mj": LAST}

# Bits of nvmlClocksEventReasons worth naming in a report.
CLOCK_EVENT_NAMES = {
    0x1: "gpu_idle", 0x2: "applications_clocks_setting", 0x4: "sw_power_cap",
    0x8: "hw_slowdown", 0x10: "sync_boost", 0x20: "sw_thermal_slowdown",
    0x40: "hw_thermal_slowdown", 0x80: "hw_power_brake_slowdown", 0x100: "display_clock_setting",
}
# nvmlPcieUtilCounter_t and nvmlClockType_t values from nvml.h.
PCIE_TX, PCIE_RX, CLOCK_SM = 0, 1, 1
PCIE_INTERVAL_S = 1.0     # how often the PCIe loop reads every GPU's throughput
PIDS_EVERY = 10           # the processes NVML lists, every 10th tick


def load_nvml():
    """The real pynvml module, or (None, reason) when it cannot be imported."""
    try:
        import pynvml
    except Exception as exc:  # ImportError, or a broken install
        return None, f"nvidia-ml-py is not importable ({exc.__class__.__name__}: {exc})"
    return pynvml, None


class DeviceLost(Exception):
    """NVML failed on a device for a reason other than "not offered": the device is lost."""


class NvmlSampler:
    def __init__(self, nvml, clock, job_pids=lambda: set(), max_rows: int = 20000):
        self.nvml = nvml
        self.clock = clock
        self.job_pids = job_pids
        self.max_rows = max_rows
        self.available = False
        self.reason = None
        self.driver = None
        self.units = []            # [Device]: whole GPUs in NVML's order, each followed by its MIG instances
        self._ticks = 0

    # -- the devices ----------------------------------------------------------------------------
    @property
    def devices(self) -> list:
        return [unit.info for unit in self.units]

    @property
    def stores(self) -> list:
        """The series of the devices whose last tick gave a utilisation figure (the live status line)."""
        return [u.store for u in self.units if not u.lost and (u.store.columns["util_gpu"] or [None])[-1] is not None]

    def start(self) -> bool:
        if self.nvml is None:
            self.reason = self.reason or "NVML is not available"
            return False
        try:
            self.nvml.nvmlInit()
        except Exception as exc:
            self.reason = f"NVML could not start ({describe(exc)}): no NVIDIA driver or GPU here"
            return False
        try:
            count = self.nvml.nvmlDeviceGetCount()
            try:
                self.driver = text(self.nvml.nvmlSystemGetDriverVersion())
            except Exception:
                self.driver = None
            for index in range(count):
                self._add_gpu(index)
        except Exception as exc:
            self.reason = f"NVML failed while listing GPUs ({describe(exc)})"
            self._shutdown()
            self.units = []
            return False
        if not self.units:
            self.reason = "NVML found no GPU"
            self._shutdown()
            return False
        if all(unit.lost for unit in self.units):
            self.reason = f"NVML could not read any GPU ({self.units[0].lost})"
            self._shutdown()
            return False
        self.available = True
        return True

    def _add_gpu(self, index: int) -> None:
        unit = Device(index, None, GPU_COLUMNS, self.max_rows)
        self.units.append(unit)
        try:
            unit.handle = self.nvml.nvmlDeviceGetHandleByIndex(index)
            identity(self.nvml, unit, CLOCK_SM)
        except Exception as exc:
            self._lose(unit, f"NVML could not open it ({describe(exc)})")
            return
        has_gpm = gpm_supported(self.nvml, unit.handle)
        mig_mode = mig_enabled(self.nvml, unit.handle)
        unit.info["mig_mode"] = mig_mode
        if has_gpm:
            unit.gpm = unit.optional("gpm", GpmReader, self.nvml, unit.handle)
        if not mig_mode:
            return
        for handle, gpu_instance_id in mig_handles(self.nvml, unit.handle):
            instance = Device(index, handle, GPU_COLUMNS, self.max_rows, parent=unit.handle,
                              gpu_instance_id=gpu_instance_id)
            try:
                identity(self.nvml, instance, CLOCK_SM)
            except Exception as exc:
                self._lose(instance, f"NVML could not open it ({describe(exc)})")
            else:
                instance.info["parent_uuid"] = unit.info.get("uuid")
                if has_gpm:
                    instance.gpm = instance.optional("gpm", GpmReader, self.nvml, unit.handle, gpu_instance_id)
            self.units.append(instance)

    # -- the main tick --------------------------------------------------------------------------
    def tick(self) -> None:
        if not self.available:
            return
        self._ticks += 1
        now = self.clock()
        read_pids = self._ticks % PIDS_EVERY == 1
        pids = self.job_pids() if read_pids else set()
        for unit in self.units:
            if unit.lost:
                continue
            try:
                unit.store.append(self._read(unit, now))
                if read_pids:
                    self._read_processes(unit, pids)
            except DeviceLost as lost:
                self._lose(unit, str(lost), now)
        if all(unit.lost for unit in self.units):
            self.available = False
            self.reason = (f"NVML failed during the run ({self.units[-1].lost}); GPU sampling stopped there")
            self._shutdown()

    def _read(self, unit: Device, now) -> dict:
        nvml, handle = self.nvml, unit.handle
        row = {"t": now}
        util = self._required(unit, "util", nvml.nvmlDeviceGetUtilizationRates, handle)
        if util is not None:
            row["util_gpu"], row["util_memory"] = float(util.gpu) / 100.0, float(util.memory) / 100.0
        memory = self._required(unit, "memory", nvml.nvmlDeviceGetMemoryInfo, handle)
        if memory is not None:
            row["mem_used"] = int(memory.used)
        row["pcie_rx_bps"], row["pcie_tx_bps"] = unit.pcie
        row["sm_clock_mhz"] = unit.optional("clock", nvml.nvmlDeviceGetClockInfo, unit.parent or handle, CLOCK_SM)
        reasons = unit.optional("events", self._clock_event_reasons, unit.parent or handle)
        if reasons is not None:
            row["clock_reasons"] = reasons
            for bit, name in CLOCK_EVENT_NAMES.items():
                if reasons & bit:
                    unit.clock_events[name] = unit.clock_events.get(name, 0) + 1
        energy = unit.optional("energy", nvml.nvmlDeviceGetTotalEnergyConsumption, handle)
        if energy is not None:
            row["energy_mj"] = int(energy)
        if unit.gpm is not None:
            values = unit.gpm.read(now)
            if values is None:
                unit.unsupported.add("gpm")
                unit.gpm.free()
                unit.gpm = None
            else:
                row.update(values)
                unit.gpm_seen = unit.gpm_seen or bool(values)
        return row

    def _required(self, unit: Device, metric: str, func, *args):
        """A core metric: not offered on this device -> dropped for it; any other failure -> lost."""
        if metric in unit.unsupported:
            return None
        try:
            return func(*args)
        except Exception as exc:
            if not_offered(exc):
                unit.unsupported.add(metric)
                return None
            raise DeviceLost(describe(exc)) from exc

    def _clock_event_reasons(self, handle):
        getter = getattr(self.nvml, "nvmlDeviceGetCurrentClocksEventReasons", None) or \
            getattr(self.nvml, "nvmlDeviceGetCurrentClocksThrottleReasons")
        return int(getter(handle))

    def _read_processes(self, unit: Device, job_pids: set) -> None:
        """Every process NVML lists on the device, with its memory where NVML knows it (None in a
        container, under MPS or on Windows WDDM): the analysis decides which are the job's."""
        procs = unit.optional("pids", self.nvml.nvmlDeviceGetComputeRunningProcesses, unit.handle)
        if procs is not None:
            unit.note_processes(procs, job_pids)

    def _lose(self, unit: Device, reason: str, now=None) -> None:
        unit.lost = reason
        unit.lost_at = now
        if unit.gpm is not None:
            unit.gpm.free()
            unit.gpm = None

    # -- the PCIe loop --------------------------------------------------------------------------
    def tick_pcie(self) -> None:
        """Every GPU's PCIe throughput (KB/s from NVML, kept as bytes/s); the main tick copies the
        latest into its rows."""
        if not self.available:
            return
        for unit in self.units:
            if unit.lost or unit.mig or "pcie" in unit.unsupported:
                continue
            rx = unit.optional("pcie", self.nvml.nvmlDeviceGetPcieThroughput, unit.handle, PCIE_RX)
            tx = unit.optional("pcie", self.nvml.nvmlDeviceGetPcieThroughput, unit.handle, PCIE_TX)
            unit.pcie = (rx * 1024 if rx is not None else None, tx * 1024 if tx is not None else None)

    # -- the end --------------------------------------------------------------------------------
    def stop(self) -> None:
        for unit in self.units:
            if unit.gpm is not None:
                unit.gpm.free()
        if self.available:
            self._shutdown()

    def _shutdown(self) -> None:
        try:
            self.nvml.nvmlShutdown()
        except Exception:
            pass

    @property
    def unsupported(self) -> list:
        """Every metric some device did not offer."""
        return sorted(set().union(*(unit.unsupported for unit in self.units)) if self.units else set())

    def to_dict(self) -> dict:
        sampled = any(not unit.lost or unit.store.ticks for unit in self.units)
        return {"available": sampled, "reason": self.reason, "driver": self.driver,
                "unsupported": self.unsupported, "gpus": [unit.to_dict() for unit in self.units]}

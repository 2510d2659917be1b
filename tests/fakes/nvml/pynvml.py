"""A fake of nvidia-ml-py's `pynvml`, with the same function names, for machines without a GPU.

Put this folder first on PYTHONPATH of a `gpuprof run` (integration tests) or build a `FakeNvml`
(unit tests). The mode comes from FAKE_NVML_MODE: ok (default), missing (import fails), init_fail,
midrun_fail (calls start failing after FAKE_NVML_FAIL_AFTER utilisation reads), not_supported
(PCIe and per-process memory unsupported).

A `FakeNvml` built in a test can also describe: a value per GPU or one that changes over time (any
figure may be a function of the GPU index, read when NVML is asked), GPUs that are lost after some
reads, GPUs in MIG mode with their GPU instances, GPM (SM activity and occupancy), per-process
entries whose memory NVML does not know (None), and energy counters. It follows the real library's
shapes: error classes named after NVML's return codes, `c_nvmlGpmMetricsGet_t` with its metrics
array, MIG handles that refuse utilisation (Not Supported)."""

import os
from types import SimpleNamespace

NVML_PCIE_UTIL_TX_BYTES = 0
NVML_PCIE_UTIL_RX_BYTES = 1
NVML_CLOCK_SM = 1
NVML_DEVICE_MIG_ENABLE = 1
NVML_GPM_METRIC_GRAPHICS_UTIL = 1
NVML_GPM_METRIC_SM_UTIL = 2
NVML_GPM_METRIC_SM_OCCUPANCY = 3
NVML_GPM_METRICS_GET_VERSION = 1
NVML_ERROR_NOT_SUPPORTED = 3
NVML_ERROR_NOT_FOUND = 6
NVML_ERROR_GPU_IS_LOST = 15

if os.environ.get("FAKE_NVML_MODE") == "missing":
    raise ImportError("fake: nvidia-ml-py not installed")


class NVMLError(Exception):
    value = 999


class NVMLError_NotSupported(NVMLError):
    value = NVML_ERROR_NOT_SUPPORTED


class NVMLError_NotFound(NVMLError):
    value = NVML_ERROR_NOT_FOUND


class NVMLError_GpuIsLost(NVMLError):
    value = NVML_ERROR_GPU_IS_LOST


class c_nvmlGpmMetricsGet_t:
    """pynvml's ctypes structure, as plain attributes (the real one holds NVML_GPM_METRIC_MAX metrics)."""

    def __init__(self):
        self.version = 0
        self.numMetrics = 0
        self.sample1 = None
        self.sample2 = None
        self.metrics = [SimpleNamespace(metricId=0, nvmlReturn=0, value=0.0) for _ in range(16)]


def _value(value, index):
    return value(index) if callable(value) else value


class FakeNvml:
    NVML_DEVICE_MIG_ENABLE = NVML_DEVICE_MIG_ENABLE
    NVML_GPM_METRIC_GRAPHICS_UTIL = NVML_GPM_METRIC_GRAPHICS_UTIL
    NVML_GPM_METRIC_SM_UTIL = NVML_GPM_METRIC_SM_UTIL
    NVML_GPM_METRIC_SM_OCCUPANCY = NVML_GPM_METRIC_SM_OCCUPANCY
    NVML_GPM_METRICS_GET_VERSION = NVML_GPM_METRICS_GET_VERSION
    c_nvmlGpmMetricsGet_t = c_nvmlGpmMetricsGet_t

    def __init__(self, mode="ok", gpus=1, util=0.5, fail_after=3, job_pid=None, sm_clock=1980, reasons=0x4,
                 lost=None, mig=None, gpm=False, sm_active=0.5, occupancy=0.3, processes=None, energy=True):
        self.mode = mode
        self.sm_clock = sm_clock      # a thermally throttled GPU runs below its 1980 MHz top clock
        self.reasons = reasons        # nvmlClocksEventReasons bits (0x4 the software power cap, 0x40 hw thermal)
        self.gpus = gpus
        self.util = util              # 0..1, or a function of the GPU index
        self.fail_after = fail_after
        self.job_pid = job_pid
        self.lost = dict(lost or {})  # {GPU index: utilisation reads of that GPU after which it is lost}
        self.mig = dict(mig or {})    # {GPU index: [GPU instance ids]}: those GPUs are in MIG mode
        self.gpm = gpm                # GPM supported (Hopper and later)
        self.sm_active = sm_active    # GPM SM activity 0..1, or a function of the GPU index
        self.occupancy = occupancy
        self.processes = processes    # {GPU index or (index, gi): [(pid, bytes or None)]}
        self.energy = energy
        self.reads = 0
        self.reads_of = {}
        self.calls = []
        self.pcie_calls = 0
        self.energy_mj = {}
        self.initialised = False

    # -- library --------------------------------------------------------------------------------
    def nvmlInit(self):
        self.calls.append("nvmlInit")
        if self.mode == "init_fail":
            raise NVMLError("Driver/library version mismatch")
        self.initialised = True

    def nvmlShutdown(self):
        self.calls.append("nvmlShutdown")
        self.initialised = False

    def nvmlSystemGetDriverVersion(self):
        return "555.42"

    def nvmlDeviceGetCount(self):
        return self.gpus

    # -- handles ----------------------------------------------------------------------------------
    def nvmlDeviceGetHandleByIndex(self, index):
        return SimpleNamespace(index=index, gi=None)

    def _check(self, handle):
        after = self.lost.get(handle.index)
        if after is not None and self.reads_of.get(handle.index, 0) > after:
            raise NVMLError_GpuIsLost("GPU is lost")

    def nvmlDeviceGetMigMode(self, handle):
        if self.mode == "not_supported":
            raise NVMLError_NotSupported("Not Supported")
        return [1, 1] if handle.index in self.mig else [0, 0]

    def nvmlDeviceGetMaxMigDeviceCount(self, handle):
        return 7 if handle.index in self.mig else 0

    def nvmlDeviceGetMigDeviceHandleByIndex(self, handle, slot):
        instances = self.mig.get(handle.index) or []
        if slot >= len(instances):
            raise NVMLError_NotFound("Not Found")
        return SimpleNamespace(index=handle.index, gi=instances[slot])

    def nvmlDeviceGetGpuInstanceId(self, handle):
        if handle.gi is None:
            raise NVMLError("Invalid Argument")
        return handle.gi

    # -- identity ---------------------------------------------------------------------------------
    def nvmlDeviceGetName(self, handle):
        return b"Fake GPU" if handle.gi is None else b"Fake GPU MIG 1g.10gb"

    def nvmlDeviceGetUUID(self, handle):
        if handle.gi is None:
            return f"GPU-{handle.index:08x}-aaaa-4bbb-8ccc-{handle.index:012x}"
        return f"MIG-{handle.index:08x}-{handle.gi:04x}-4bbb-8ccc-{handle.gi:012x}"

    def nvmlDeviceGetPciInfo(self, handle):
        return SimpleNamespace(busId=f"00000000:{0x18 + 0x10 * handle.index:02X}:00.0".encode())

    def nvmlDeviceGetMemoryInfo(self, handle):
        self._check(handle)
        if handle.gi is not None:
            return SimpleNamespace(total=10 * 2**30, used=2 * 2**30, free=8 * 2**30)
        return SimpleNamespace(total=80 * 2**30, used=10 * 2**30, free=70 * 2**30)

    # -- figures ----------------------------------------------------------------------------------
    def nvmlDeviceGetUtilizationRates(self, handle):
        self.reads += 1
        self.reads_of[handle.index] = self.reads_of.get(handle.index, 0) + 1
        if self.mode == "midrun_fail" and self.reads > self.fail_after:
            raise NVMLError("GPU is lost")
        self._check(handle)
        if handle.gi is not None or handle.index in self.mig:
            raise NVMLError_NotSupported("Not Supported")     # NVML: not supported on MIG-enabled GPUs
        util = _value(self.util, handle.index)
        return SimpleNamespace(gpu=int(round(util * 100)), memory=int(round(util * 50)))

    def nvmlDeviceGetPcieThroughput(self, handle, counter):
        self.pcie_calls += 1
        if self.mode == "not_supported":
            raise NVMLError_NotSupported("Not Supported")
        self._check(handle)
        return 1000 if counter == NVML_PCIE_UTIL_RX_BYTES else 10

    def nvmlDeviceGetClockInfo(self, handle, clock):
        self._check(handle)
        return _value(self.sm_clock, handle.index)

    def nvmlDeviceGetMaxClockInfo(self, handle, clock):
        return 1980

    def nvmlDeviceGetCurrentClocksEventReasons(self, handle):
        self._check(handle)
        return _value(self.reasons, handle.index)

    def nvmlDeviceGetTotalEnergyConsumption(self, handle):
        if not self.energy or handle.gi is not None:
            raise NVMLError_NotSupported("Not Supported")
        self._check(handle)
        self.energy_mj[handle.index] = self.energy_mj.get(handle.index, 0) + 50_000
        return self.energy_mj[handle.index]

    def nvmlDeviceGetComputeRunningProcesses(self, handle):
        if self.mode == "not_supported":
            raise NVMLError_NotSupported("Not Supported")
        self._check(handle)
        if self.processes is not None:
            key = handle.index if handle.gi is None else (handle.index, handle.gi)
            return [SimpleNamespace(pid=pid, usedGpuMemory=used) for pid, used in self.processes.get(key, [])]
        pid = self.job_pid if self.job_pid is not None else int(os.environ.get("FAKE_NVML_PID", "0"))
        return [SimpleNamespace(pid=pid, usedGpuMemory=2 * 2**30)]

    # -- GPM --------------------------------------------------------------------------------------
    def nvmlGpmQueryDeviceSupport(self, handle):
        if not self.gpm:
            raise NVMLError_NotSupported("Not Supported")
        return SimpleNamespace(version=1, isSupportedDevice=1)

    def nvmlGpmSampleAlloc(self):
        return SimpleNamespace(handle=None)

    def nvmlGpmSampleFree(self, sample):
        self.calls.append("nvmlGpmSampleFree")

    def nvmlGpmSampleGet(self, handle, sample):
        self._check(handle)
        sample.handle = handle
        return sample

    def nvmlGpmMigSampleGet(self, handle, gpu_instance_id, sample):
        self._check(handle)
        sample.handle = SimpleNamespace(index=handle.index, gi=gpu_instance_id)
        return sample

    def nvmlGpmMetricsGet(self, metrics_get):
        if metrics_get.sample1 is None or metrics_get.sample2 is None or metrics_get.sample2.handle is None:
            raise NVMLError("Invalid Argument")
        handle = metrics_get.sample2.handle
        index = handle.index
        values = {NVML_GPM_METRIC_GRAPHICS_UTIL: _value(self.util, index),
                  NVML_GPM_METRIC_SM_UTIL: _value(self.sm_active, index),
                  NVML_GPM_METRIC_SM_OCCUPANCY: _value(self.occupancy, index)}
        for metric in metrics_get.metrics[:metrics_get.numMetrics]:
            metric.value = 100.0 * values.get(metric.metricId, 0.0)
            metric.nvmlReturn = 0 if metric.metricId in values else NVML_ERROR_NOT_SUPPORTED
        return metrics_get

    # Anything that changes device state must never be called by gpuprof.
    def nvmlDeviceSetPersistenceMode(self, *args):
        raise AssertionError("gpuprof must never change device settings")

    def nvmlDeviceSetAccountingMode(self, *args):
        raise AssertionError("gpuprof must never change device settings")

    def nvmlGpmSetStreamingEnabled(self, *args):
        raise AssertionError("gpuprof must never change device settings")


_default = FakeNvml(mode=os.environ.get("FAKE_NVML_MODE", "ok"),
                    fail_after=int(os.environ.get("FAKE_NVML_FAIL_AFTER", "3")))


def __getattr__(name):
    if name.startswith("nvml"):
        return getattr(_default, name)
    raise AttributeError(name)

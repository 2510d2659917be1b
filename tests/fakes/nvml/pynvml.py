"""A fake of nvidia-ml-py's `pynvml`, with the same function names, for machines without a GPU.

Put this folder first on PYTHONPATH of a `gpuprof run` (integration tests) or build a `FakeNvml`
(unit tests). The mode comes from FAKE_NVML_MODE: ok (default), missing (import fails), init_fail,
midrun_fail (calls start failing after FAKE_NVML_FAIL_AFTER utilisation reads), not_supported
(PCIe and per-process memory unsupported)."""

import os
from types import SimpleNamespace

NVML_PCIE_UTIL_TX_BYTES = 0
NVML_PCIE_UTIL_RX_BYTES = 1
NVML_CLOCK_SM = 1

if os.environ.get("FAKE_NVML_MODE") == "missing":
    raise ImportError("fake: nvidia-ml-py not installed")


class NVMLError(Exception):
    pass


class NVMLError_NotSupported(NVMLError):
    pass


class FakeNvml:
    def __init__(self, mode="ok", gpus=1, util=0.5, fail_after=3, job_pid=None, sm_clock=1980, reasons=0x4):
        self.mode = mode
        self.sm_clock = sm_clock      # a thermally throttled GPU runs below its 1980 MHz top clock
        self.reasons = reasons        # nvmlClocksEventReasons bits (0x4 the software power cap, 0x40 hw thermal)
        self.gpus = gpus
        self.util = util
        self.fail_after = fail_after
        self.job_pid = job_pid
        self.reads = 0
        self.calls = []
        self.initialised = False

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

    def nvmlDeviceGetHandleByIndex(self, index):
        return SimpleNamespace(index=index)

    def nvmlDeviceGetName(self, handle):
        return b"Fake GPU"

    def nvmlDeviceGetMemoryInfo(self, handle):
        return SimpleNamespace(total=80 * 2**30, used=10 * 2**30, free=70 * 2**30)

    def nvmlDeviceGetUtilizationRates(self, handle):
        self.reads += 1
        if self.mode == "midrun_fail" and self.reads > self.fail_after:
            raise NVMLError("GPU is lost")
        return SimpleNamespace(gpu=int(self.util * 100), memory=int(self.util * 50))

    def nvmlDeviceGetPcieThroughput(self, handle, counter):
        if self.mode == "not_supported":
            raise NVMLError_NotSupported("Not Supported")
        return 1000 if counter == NVML_PCIE_UTIL_RX_BYTES else 10

    def nvmlDeviceGetClockInfo(self, handle, clock):
        return self.sm_clock

    def nvmlDeviceGetMaxClockInfo(self, handle, clock):
        return 1980

    def nvmlDeviceGetCurrentClocksEventReasons(self, handle):
        return self.reasons

    def nvmlDeviceGetComputeRunningProcesses(self, handle):
        if self.mode == "not_supported":
            raise NVMLError_NotSupported("Not Supported")
        pid = self.job_pid if self.job_pid is not None else int(os.environ.get("FAKE_NVML_PID", "0"))
        return [SimpleNamespace(pid=pid, usedGpuMemory=2 * 2**30)]

    # Anything that changes device state must never be called by gpuprof.
    def nvmlDeviceSetPersistenceMode(self, *args):
        raise AssertionError("gpuprof must never change device settings")

    def nvmlDeviceSetAccountingMode(self, *args):
        raise AssertionError("gpuprof must never change device settings")


_default = FakeNvml(mode=os.environ.get("FAKE_NVML_MODE", "ok"),
                    fail_after=int(os.environ.get("FAKE_NVML_FAIL_AFTER", "3")))


def __getattr__(name):
    if name.startswith("nvml"):
        return getattr(_default, name)
    raise AttributeError(name)

"""The samplers that watch a job's process tree from outside it: the system sampler (CPU, disk,
pressure, the tree's processes, the job's limits) and NVML, each on a thread of its own (NVML on
two: its cheap reads at the run's interval, and PCIe throughput, which takes the driver ~20 ms a GPU,
about once a second so it never holds up the main tick). `gpuprof run` starts them on the child it
launched, `gpuprof attach` on a job that was already running; both save them into the run folder
the same way."""

import os

from gpuprof.record.atomic import write_json_atomic
from gpuprof.record.schema import GPU_FILE, SYSTEM_FILE


def thread_cpu_s(loop):
    """CPU seconds (user + system) of a sampler's thread so far, from /proc/self/task; None where
    it cannot be read."""
    native = getattr(getattr(loop, "_thread", None), "native_id", None)
    if native is None:
        return None
    try:
        with open(f"/proc/self/task/{native}/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


class JobSamplers:
    def __init__(self, interval: float, gpu: bool, nvml_loader, clock):
        self.interval = interval
        self.gpu = gpu
        self.nvml_loader = nvml_loader
        self.clock = clock
        self.system = None
        self.nvml = None
        self._threads = []
        self._loops = {}           # name -> Periodic, for the late ticks and errors each saves
        self.cpu_s = {}            # name -> CPU seconds its thread used, read as the samplers stop

    def start(self, pid: int) -> None:
        # Imported once the job runs: a launched program starts without waiting for them.
        from gpuprof.capture.samplers.cgroups import JobLimits
        from gpuprof.capture.samplers.nvml import PCIE_INTERVAL_S, NvmlSampler
        from gpuprof.capture.samplers.periodic import Periodic
        from gpuprof.capture.samplers.procfs import default_source
        from gpuprof.capture.samplers.system import SystemSampler

        self.system = SystemSampler(default_source(pid), self.clock, limits=JobLimits(pid))
        self._add("system", Periodic(self.system.tick, self.interval, "gpuprof-system", self.clock))
        nvml, reason = (self.nvml_loader() if self.gpu else (None, "GPU sampling turned off (--no-gpu)"))
        self.nvml = NvmlSampler(nvml, self.clock, job_pids=self.job_pids)
        if reason:
            self.nvml.reason = reason
        if self.nvml.start():
            self._add("nvml", Periodic(self.nvml.tick, self.interval, "gpuprof-nvml", self.clock))
            self._add("pcie", Periodic(self.nvml.tick_pcie, max(PCIE_INTERVAL_S, self.interval), "gpuprof-nvml-pcie",
                                       self.clock))
        for loop in self._threads:
            loop.start()

    def _add(self, name: str, loop) -> None:
        self._loops[name] = loop
        self._threads.append(loop)

    def job_pids(self) -> set:
        return {p["pid"] for p in list(self.system.processes.values())} if self.system else set()

    def stop(self) -> None:
        self.cpu_s = {name: thread_cpu_s(loop) for name, loop in self._loops.items()}   # while they still run
        for loop in self._threads:
            loop.stop()
        if self.system is not None:
            self.system.source.close()
        if self.nvml is not None:
            self.nvml.stop()

    def save(self, run_dir: str) -> None:
        """system.json and gpu.json, with how often each sampler fell behind or failed."""
        system = self.system.to_dict(self.interval) if self.system else {"columns": {}}
        system_loop = self._loops.get("system")
        system["late_ticks"] = system_loop.late_ticks if system_loop else 0
        system["errors"] = system_loop.errors if system_loop else []
        gpu = self.nvml.to_dict() if self.nvml else {"available": False, "reason": "not started", "gpus": []}
        for name in ("nvml", "pcie"):
            loop = self._loops.get(name)
            if loop is not None:
                key = "late_ticks" if name == "nvml" else "pcie_late_ticks"
                gpu[key] = loop.late_ticks
                if loop.errors:
                    gpu.setdefault("errors", []).extend(loop.errors)
        write_json_atomic(os.path.join(run_dir, SYSTEM_FILE), system)
        write_json_atomic(os.path.join(run_dir, GPU_FILE), gpu)

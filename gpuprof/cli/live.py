"""The one-line live status shown while the job runs, only when stderr is a terminal."""

import sys
import time


class LiveStatus:
    def __init__(self, stream=None, clock=time.monotonic):
        self.stream = stream or sys.stderr
        self.clock = clock
        self.start = clock()
        self.shown = False

    def __call__(self, system, nvml) -> None:
        columns = system.store.columns
        if not columns["t"]:
            return
        dt = columns["dt"][-1] or 1.0
        cores = ((columns["job_user_s"][-1] or 0) + (columns["job_system_s"][-1] or 0)) / dt
        disk = (columns["disk_read_bytes"][-1] or 0) / dt / 1e6
        parts = [f"gpuprof {self.clock() - self.start:6.1f}s", f"CPU {cores:4.1f} cores", f"disk {disk:6.1f} MB/s"]
        if nvml is not None and nvml.available and nvml.stores:
            utils = [s.columns["util_gpu"][-1] for s in nvml.stores if s.columns["util_gpu"]]
            if utils:
                parts.append(f"GPU {100 * sum(utils) / len(utils):3.0f}%")
        self.stream.write("\r\x1b[2K" + "  ".join(parts))
        self.stream.flush()
        self.shown = True

    def clear(self) -> None:
        if self.shown:
            self.stream.write("\r\x1b[2K")
            self.stream.flush()

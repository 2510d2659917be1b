"""The system sampler: machine CPU shares, the job's process tree, disk and pressure, every tick.

`tick()` is pure bookkeeping over a source's readings and an injected clock, so tests drive it with
a fake source and a fake clock; the supervisor runs it on a `Periodic` thread.
"""

import os

from gpuprof.capture.samplers.columns import LAST, MAX, MEAN, SUM, ColumnStore
from gpuprof.capture.samplers.memory_events import difference, read_counters

SYSTEM_COLUMNS = {
    "t": LAST,                  # monotonic time at the end of the interval
    "dt": SUM,                  # interval length, seconds
    "cpu_user": MEAN, "cpu_system": MEAN, "cpu_iowait": MEAN, "cpu_steal": MEAN, "cpu_idle": MEAN,
    "job_user_s": SUM, "job_system_s": SUM,         # CPU seconds the job's tree used in the interval
    "job_read_bytes": SUM, "job_read_chars": SUM,   # real disk reads vs. all reads (page cache too)
    "job_rss": MAX, "job_procs": MAX,
    "disk_read_bytes": SUM, "disk_write_bytes": SUM, "disk_busy": MEAN,
    "psi_cpu_some": MEAN, "psi_io_some": MEAN, "psi_io_full": MEAN,
    "psi_memory_some": MEAN, "psi_memory_full": MEAN,
}


class SystemSampler:
    #: Ticks at which the job's CPU and memory limits are read (a launcher such as taskset sets the
    #: affinity just after the start); read again when the run is saved.
    LIMIT_TICKS = (1, 10)
    #: Ticks between readings of the job's cgroup throttling and /dev/shm's free space (about a second).
    LIMIT_SAMPLE_EVERY = 10

    def __init__(self, source, clock, max_rows: int = 20000, limits=None):
        self.source = source
        self.clock = clock
        self.limits = limits         # gpuprof.capture.samplers.cgroups.JobLimits, or None (the host's CPU count)
        self._ticks = 0
        self.store = ColumnStore(SYSTEM_COLUMNS, max_rows=max_rows)
        self.processes = {}          # (pid, start) -> summary of each process ever seen in the tree
        self._last_proc = {}         # (pid, start) -> last ProcReading
        self._last_machine = None
        self._last_t = None
        self._memory_counters = read_counters()

    def tick(self) -> None:
        self._ticks += 1
        if self.limits is not None:
            if self._ticks in self.LIMIT_TICKS:
                self.limits.observe()
            elif self._ticks % self.LIMIT_SAMPLE_EVERY == 0:
                self.limits.sample()
        now = self.clock()
        machine = self.source.machine()
        tree = self.source.tree()
        if self._last_t is None:
            self._remember(now, machine, tree)
            return
        dt = max(now - self._last_t, 1e-9)
        row = {"t": now, "dt": dt}
        row.update(self._cpu_shares(machine.cpu))
        row.update(self._job(tree, now))
        row.update(self._disk(machine.disk, dt))
        row.update(self._pressure(machine.pressure, dt))
        self.store.append(row)
        self._remember(now, machine, tree)

    def _remember(self, now, machine, tree) -> None:
        self._last_t = now
        self._last_machine = machine
        current = {}
        for reading in tree:
            key = (reading.pid, reading.start_ticks)
            current[key] = reading
            summary = self.processes.get(key)
            if summary is None:
                self.processes[key] = summary = {
                    "pid": reading.pid, "ppid": reading.ppid, "name": reading.name,
                    "first_seen": now, "user_s": 0.0, "system_s": 0.0, "read_bytes": 0,
                    "read_chars": 0, "rss_peak": 0, "rss_first": reading.rss,
                    # What it had used when first seen: an attached job's figures count from there.
                    "user_s_first": reading.user_s, "system_s_first": reading.system_s,
                    "read_bytes_first": reading.read_bytes, "read_chars_first": reading.read_chars,
                }
            summary["last_seen"] = now
            summary["user_s"] = reading.user_s
            summary["system_s"] = reading.system_s
            summary["read_bytes"] = reading.read_bytes
            summary["read_chars"] = reading.read_chars
            summary["rss_peak"] = max(summary["rss_peak"], reading.rss)
            summary["rss_last"] = reading.rss
        self._last_proc = current

    def _cpu_shares(self, cpu: dict) -> dict:
        before = self._last_machine.cpu
        delta = {k: max(cpu.get(k, 0.0) - before.get(k, 0.0), 0.0) for k in cpu}
        total = sum(delta.values()) or 1.0
        return {f"cpu_{k}": delta.get(k, 0.0) / total for k in ("user", "system", "iowait", "steal", "idle")}

    def _job(self, tree, now) -> dict:
        user = system = rb = rc = 0.0
        rss = 0
        for reading in tree:
            previous = self._last_proc.get((reading.pid, reading.start_ticks))
            if previous is None:  # new since the last tick: all it used, it used in this interval
                user += reading.user_s
                system += reading.system_s
                rb += reading.read_bytes
                rc += reading.read_chars
            else:
                user += max(reading.user_s - previous.user_s, 0.0)
                system += max(reading.system_s - previous.system_s, 0.0)
                rb += max(reading.read_bytes - previous.read_bytes, 0)
                rc += max(reading.read_chars - previous.read_chars, 0)
            rss += reading.rss
        return {"job_user_s": user, "job_system_s": system, "job_read_bytes": rb,
                "job_read_chars": rc, "job_rss": rss, "job_procs": len(tree)}

    def _disk(self, disk, dt) -> dict:
        read_bytes, write_bytes, busy = disk
        before_r, before_w, before_busy = self._last_machine.disk
        busiest = 0.0
        for name, ms in busy.items():
            busiest = max(busiest, (ms - before_busy.get(name, ms)) / 1000.0 / dt)
        return {"disk_read_bytes": max(read_bytes - before_r, 0),
                "disk_write_bytes": max(write_bytes - before_w, 0),
                "disk_busy": min(busiest, 1.0)}

    def _pressure(self, pressure, dt) -> dict:
        before = self._last_machine.pressure
        out = {}
        for key, total in pressure.items():
            if key in before:
                out[f"psi_{key}"] = min(max(total - before[key], 0) / 1e6 / dt, 1.0)
        return out

    def to_dict(self, interval: float) -> dict:
        data = self.store.to_dict()
        data["interval_s"] = interval
        data["cpu_count"] = os.cpu_count() or 1
        if self.limits is not None:
            self.limits.observe()
            limit = self.limits.to_dict()
            data["cpu_limit"] = limit
            # Cores the job may use: the affinity mask or the cgroup's quota where smaller than the host.
            data["cpu_count"] = max(1, int(limit["cpus"] + 0.5))
        data["cpu_flags"] = cpu_flags()
        data["has_pressure"] = any(v is not None for v in data["columns"].get("psi_io_some", []))
        data["processes"] = sorted(self.processes.values(), key=lambda p: p["first_seen"])
        data["memory"] = machine_memory()
        data["memory"]["events"] = difference(self._memory_counters, read_counters())
        return data


#: CPU instructions the model-side advice asks about (bf16 autocast pays on a CPU that has them).
CPU_FLAGS = ("avx512_bf16", "amx_bf16", "amx_tile", "avx512_fp16", "avx512f")


def cpu_flags() -> list:
    """Which of CPU_FLAGS the machine's CPUs have (Linux's /proc/cpuinfo; [] where unreadable)."""
    try:
        with open("/proc/cpuinfo", "rb") as f:
            for line in f:
                name, _, rest = line.partition(b":")
                if name.strip() == b"flags":
                    have = set(rest.decode("ascii", "replace").split())
                    return [flag for flag in CPU_FLAGS if flag in have]
    except OSError:
        pass
    return []


def machine_memory() -> dict:
    """Total and available memory and the open-file limit, read once when the run is saved: they
    bound how many DataLoader workers the machine can hold."""
    out = {"total_bytes": None, "available_bytes": None, "open_files_limit": None}
    try:
        with open("/proc/meminfo", "rb") as f:
            for line in f:
                name, _, rest = line.partition(b":")
                if name in (b"MemTotal", b"MemAvailable"):
                    key = "total_bytes" if name == b"MemTotal" else "available_bytes"
                    out[key] = int(rest.split()[0]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        import resource
        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        out["open_files_limit"] = None if soft == resource.RLIM_INFINITY else int(soft)
    except (ImportError, OSError, ValueError):
        pass
    return out

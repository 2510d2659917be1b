"""Raw readings of the machine and of one process tree, straight from Linux's /proc and /sys.

Reading /proc directly costs a fraction of going through psutil objects, which matters at ten
ticks a second. `PsutilSource` gives the same readings where /proc is absent (macOS and others).
"""

import os
from dataclasses import dataclass

_CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


@dataclass
class ProcReading:
    """Cumulative counters of one live process."""
    pid: int
    ppid: int
    name: str
    user_s: float
    system_s: float
    rss: int
    read_bytes: int = 0
    read_chars: int = 0
    start_ticks: int = 0


@dataclass
class MachineReading:
    cpu: dict            # cumulative seconds: user, system, iowait, steal, idle (and others summed in 'other')
    disk: tuple          # cumulative (read_bytes, write_bytes, max busy ms over disks as a dict)
    pressure: dict       # cumulative microseconds stalled: cpu_some, io_some, io_full, memory_some, memory_full


def _read(path: str) -> str:
    with open(path, "rb") as handle:
        return handle.read().decode("ascii", "replace")


class OpenFiles:
    """/proc and /sys files kept open and read again with pread: a path lookup and an open per
    file per tick cost more than the read. A kept /proc/PID file stays bound to the process it was
    opened for, so a reused pid is never read through a dead process's descriptor: a failed read
    closes it and the file is opened afresh once."""

    limit = 512            # descriptors kept at most; beyond, files are opened for each read

    def __init__(self):
        self._fds = {}

    def read(self, path: str) -> str:
        fd = self._fds.get(path)
        if fd is not None:
            try:
                data = self._pread_all(fd)
                if data:
                    return data.decode("ascii", "replace")
            except OSError:
                pass
            self._close(path)
        fd = os.open(path, os.O_RDONLY)
        try:
            data = self._pread_all(fd)
        except OSError:
            os.close(fd)
            raise
        if len(self._fds) < self.limit:
            self._fds[path] = fd
        else:
            os.close(fd)
        return data.decode("ascii", "replace")

    @staticmethod
    def _pread_all(fd: int, size: int = 65536) -> bytes:
        data = os.pread(fd, size, 0)
        if len(data) < size:        # the whole file in one read: /proc files are generated whole
            return data
        chunks, offset = [data], len(data)
        while True:
            chunk = os.pread(fd, size, offset)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
            offset += len(chunk)

    def forget(self, proc: str, keep_pids) -> None:
        """Close the files of processes no longer in the tree (paths under PROC/PID/)."""
        keep = {str(pid) for pid in keep_pids}
        start = len(proc) + 1
        for path in list(self._fds):
            if path.startswith(proc):
                head = path[start:].split("/", 1)[0]
                if head.isdigit() and head not in keep:
                    self._close(path)

    def _close(self, path: str) -> None:
        fd = self._fds.pop(path, None)
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass

    def close(self) -> None:
        for path in list(self._fds):
            self._close(path)


class ProcfsSource:
    """Readings for the tree rooted at `root_pid`, found afresh on every call."""

    full_scan_every = 20   # ticks between whole-/proc scans that catch children of other threads

    def __init__(self, root_pid: int, proc: str = "/proc", sys_block: str = "/sys/block"):
        self.root_pid = root_pid
        self.proc = proc
        self._ticks = 0
        self._known = {root_pid}
        self._disks = self._whole_disks(sys_block)
        self._has_pressure = os.path.exists(os.path.join(proc, "pressure", "io"))
        self._files = OpenFiles()

    # -- the process tree -------------------------------------------------------------------
    def tree(self):
        """Every live process of the tree with its counters."""
        self._ticks += 1
        if self._ticks % self.full_scan_every == 1:
            pids = self._scan_all()
        else:
            pids = self._walk_children()
        readings = []
        for pid in pids:
            reading = self._read_process(pid)
            if reading is not None:
                readings.append(reading)
        self._known = {r.pid for r in readings} or {self.root_pid}
        self._files.forget(self.proc, self._known)
        return readings

    def close(self) -> None:
        self._files.close()

    def _walk_children(self):
        seen, stack = set(), [self.root_pid] + sorted(self._known - {self.root_pid})
        while stack:
            pid = stack.pop()
            if pid in seen:
                continue
            seen.add(pid)
            try:
                children = self._files.read(f"{self.proc}/{pid}/task/{pid}/children").split()
            except OSError:
                continue
            stack.extend(int(c) for c in children)
        return seen

    def _scan_all(self):
        parents = {}
        for entry in os.listdir(self.proc):
            if entry.isdigit():
                try:
                    stat = _read(f"{self.proc}/{entry}/stat")
                except OSError:
                    continue
                parents.setdefault(int(stat[stat.rfind(")") + 2:].split(" ", 3)[1]), []).append(int(entry))
        tree, stack = set(), [self.root_pid]
        while stack:
            pid = stack.pop()
            if pid in tree:
                continue
            tree.add(pid)
            stack.extend(parents.get(pid, ()))
        return tree

    def _read_process(self, pid: int):
        try:
            stat = self._files.read(f"{self.proc}/{pid}/stat")
        except OSError:
            return None
        name = stat[stat.find("(") + 1:stat.rfind(")")]
        fields = stat[stat.rfind(")") + 2:].split()
        # fields[0] is state (field 3 of the man page); utime is field 14 -> index 11
        reading = ProcReading(
            pid=pid, ppid=int(fields[1]), name=name,
            user_s=int(fields[11]) / _CLK_TCK, system_s=int(fields[12]) / _CLK_TCK,
            rss=int(fields[21]) * _PAGE, start_ticks=int(fields[19]),
        )
        if fields[0] == "Z":
            return None
        try:
            for line in self._files.read(f"{self.proc}/{pid}/io").splitlines():
                key, _, value = line.partition(":")
                if key == "rchar":
                    reading.read_chars = int(value)
                elif key == "read_bytes":
                    reading.read_bytes = int(value)
        except (OSError, ValueError):
            pass
        return reading

    # -- the machine -------------------------------------------------------------------------
    def machine(self) -> MachineReading:
        return MachineReading(cpu=self._cpu(), disk=self._disk(), pressure=self._pressure())

    def _cpu(self) -> dict:
        values = [int(v) / _CLK_TCK for v in self._files.read(f"{self.proc}/stat").split("\n", 1)[0].split()[1:]]
        values += [0.0] * (10 - len(values))
        user, nice, system, idle, iowait, irq, softirq, steal = values[:8]
        return {"user": user + nice, "system": system + irq + softirq, "iowait": iowait,
                "steal": steal, "idle": idle}

    @staticmethod
    def _whole_disks(sys_block: str):
        try:
            names = os.listdir(sys_block)
        except OSError:
            return None
        return {n for n in names if not n.startswith(("loop", "ram", "zram", "dm-", "md", "sr"))}

    def _disk(self):
        read_bytes = write_bytes = 0
        busy = {}
        try:
            text = self._files.read(f"{self.proc}/diskstats")
        except OSError:
            return (0, 0, {})
        for line in text.splitlines():
            parts = line.split()
            if len(parts) < 14:
                continue
            name = parts[2]
            if self._disks is not None and name not in self._disks:
                continue
            read_bytes += int(parts[5]) * 512
            write_bytes += int(parts[9]) * 512
            busy[name] = int(parts[12])
        return (read_bytes, write_bytes, busy)

    def _pressure(self):
        if not self._has_pressure:
            return {}
        out = {}
        for resource in ("cpu", "io", "memory"):
            try:
                text = self._files.read(f"{self.proc}/pressure/{resource}")
            except OSError:
                continue
            for line in text.splitlines():
                kind, _, rest = line.partition(" ")
                total = rest.rsplit("total=", 1)[-1]
                if total.isdigit():
                    out[f"{resource}_{kind}"] = int(total)
        return out


class PsutilSource:
    """The same readings through psutil, for systems without Linux's /proc."""

    def __init__(self, root_pid: int):
        import psutil   # only where /proc is missing: keeps the supervisor's start-up light

        self.psutil = psutil
        self.root_pid = root_pid

    def close(self) -> None:
        pass

    def tree(self):
        psutil = self.psutil
        try:
            root = psutil.Process(self.root_pid)
            processes = [root] + root.children(recursive=True)
        except psutil.Error:
            return []
        readings = []
        for proc in processes:
            try:
                with proc.oneshot():
                    times = proc.cpu_times()
                    reading = ProcReading(pid=proc.pid, ppid=proc.ppid(), name=proc.name(),
                                          user_s=times.user, system_s=times.system,
                                          rss=proc.memory_info().rss,
                                          start_ticks=int(proc.create_time() * 100))
                    try:
                        io = proc.io_counters()
                        reading.read_bytes = getattr(io, "read_bytes", 0)
                        reading.read_chars = getattr(io, "read_chars", 0)
                    except (psutil.Error, AttributeError, NotImplementedError):
                        pass
                readings.append(reading)
            except psutil.Error:
                continue
        return readings

    def machine(self) -> MachineReading:
        psutil = self.psutil
        times = psutil.cpu_times()
        cpu = {"user": times.user + getattr(times, "nice", 0.0), "system": times.system,
               "iowait": getattr(times, "iowait", 0.0), "steal": getattr(times, "steal", 0.0),
               "idle": times.idle}
        try:
            disk = psutil.disk_io_counters()
            disk_reading = (disk.read_bytes, disk.write_bytes, {"all": getattr(disk, "busy_time", 0)})
        except (RuntimeError, AttributeError):
            disk_reading = (0, 0, {})
        return MachineReading(cpu=cpu, disk=disk_reading, pressure={})


def default_source(root_pid: int):
    if os.path.exists(f"/proc/{os.getpid()}/stat"):
        return ProcfsSource(root_pid)
    return PsutilSource(root_pid)

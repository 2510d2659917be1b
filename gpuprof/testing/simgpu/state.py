"""The device activity every process of a simulated run shares: written by the job's processes (the
CUDA face), read by the supervisor's NVML face, through plain files as a real driver shares its state.

Per GPU (NVML index) and per process that used it, in the GPU's folder:
- `proc-<pid>.log`: one fixed-size record per stretch of device work, in the order they end:
  (start, end) in CLOCK_MONOTONIC seconds (the same clock in every process), the share of the SMs
  the work kept active, its kind (KERNEL, H2D, D2H), and the bytes a copy moved. A writer may extend
  its last record in place while the work continues back to back; readers take what is there.
- `proc-<pid>.mem`: two int64: the device memory the process holds now (its context included)
  and the most it held.
Files of processes that ended stay: their work is history (energy, utilisation of the past).
Records whose end lies in the future are work queued on the device: it will run then."""

import os
import struct

RECORD = struct.Struct("<ddfB3xq")      # start, end, sm_active, kind, bytes: 32 bytes
MEMORY = struct.Struct("<qq")           # bytes held now, most bytes held
KERNEL, H2D, D2H = 0, 1, 2


def log_path(device_folder: str, pid: int) -> str:
    return os.path.join(device_folder, f"proc-{pid}.log")


def memory_path(device_folder: str, pid: int) -> str:
    return os.path.join(device_folder, f"proc-{pid}.mem")


class ActivityWriter:
    """One process's activity on one GPU. Back-to-back work of the same kind and SM share extends the
    last record (a compute-bound stream is one long record, not millions)."""

    def __init__(self, device_folder: str, pid: int = None):
        pid = pid or os.getpid()
        self.fd = os.open(log_path(device_folder, pid), os.O_RDWR | os.O_CREAT, 0o644)
        self.mem_fd = os.open(memory_path(device_folder, pid), os.O_RDWR | os.O_CREAT, 0o644)
        self.last = None            # (start, end, sm, kind, bytes) of the record at `last_offset`
        self.last_offset = None
        self.size = os.fstat(self.fd).st_size

    def add(self, start: float, end: float, sm_active: float, kind: int, nbytes: int = 0) -> None:
        self.add_many([(start, end, sm_active, kind, nbytes)])

    def add_many(self, records) -> None:
        """Records (start, end, sm_active, kind, bytes) in the order they end, in one write: the last
        record extended in place where the first continues it, the rest appended."""
        at = None                   # where the bytes to write begin: the last record's offset, or the end
        chunk = []
        for start, end, sm_active, kind, nbytes in records:
            last = self.last
            if last is not None and kind == last[3] and abs(sm_active - last[2]) < 1e-6 and start <= last[1] + 1e-6:
                self.last = (last[0], max(end, last[1]), last[2], kind, last[4] + nbytes)
                if chunk:
                    chunk[-1] = self.last
                else:
                    at = self.last_offset
                    chunk.append(self.last)
                continue
            if at is None:
                at = self.size
            self.last = (start, end, sm_active, kind, nbytes)
            self.last_offset = self.size
            self.size += RECORD.size
            chunk.append(self.last)
        if chunk:
            # Positioned writes only: with O_APPEND, Linux would append even a write meant to
            # extend the last record in place (pwrite(2), BUGS).
            os.pwrite(self.fd, b"".join(RECORD.pack(*record) for record in chunk), at)

    def memory(self, now_bytes: int, peak_bytes: int) -> None:
        os.pwrite(self.mem_fd, MEMORY.pack(int(now_bytes), int(peak_bytes)), 0)

    def close(self) -> None:
        for fd in (self.fd, self.mem_fd):
            try:
                os.close(fd)
            except OSError:
                pass


def read_records(device_folder: str):
    """{pid: [(start, end, sm_active, kind, bytes), ...]} for every process that used the GPU."""
    out = {}
    for name in _names(device_folder):
        if name.startswith("proc-") and name.endswith(".log"):
            try:
                with open(os.path.join(device_folder, name), "rb") as source:
                    data = source.read()
            except OSError:
                continue
            usable = len(data) - len(data) % RECORD.size
            out[int(name[5:-4])] = [RECORD.unpack_from(data, o) for o in range(0, usable, RECORD.size)]
    return out


def read_memory(device_folder: str):
    """{pid: (bytes held now, most held)} for every process that used the GPU."""
    out = {}
    for name in _names(device_folder):
        if name.startswith("proc-") and name.endswith(".mem"):
            try:
                with open(os.path.join(device_folder, name), "rb") as source:
                    data = source.read(MEMORY.size)
            except OSError:
                continue
            if len(data) == MEMORY.size:
                out[int(name[5:-4])] = MEMORY.unpack(data)
    return out


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _names(folder: str):
    try:
        return os.listdir(folder)
    except OSError:
        return []

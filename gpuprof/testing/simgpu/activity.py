"""A process's device work and memory on one simulated GPU, written where the NVML face reads them
(`state.ActivityWriter`), cheaply enough to sit under every kernel launch.

Work of one kind that runs back to back (kernel after kernel, copy after copy) is kept as one
stretch whose SM share is the time-weighted mean of its parts, so a busy stream costs one record per
few milliseconds, not one per kernel; the utilisation and SM activity over any window stay the same.
Records reach the file in the order they end, as readers expect, in one write per `interval`:
finished stretches and the stretch being built reach the file at least every `interval` seconds,
and at once when the host is about to wait for the device (a reader then sees what the device is
doing). A host-bound loop, whose kernels never run back to back, would otherwise cost a system call
per kernel. Memory reaches the file when the peak grows, when it moved by `MEMORY_STEP`, or after
`interval`."""

import time

MEMORY_STEP = 64 << 20
MAX_STRETCH = 0.05          # device seconds one record covers at most


class Recorder:
    def __init__(self, writer, interval: float = 0.01, now=time.monotonic):
        self.writer = writer
        self.interval = interval
        self.now = now
        self.open = {}              # kind -> [start, end, sm-seconds, bytes]
        self.done = []              # finished stretches (start, end, sm_active, kind, bytes) not yet written
        self.written_at = now()
        self.memory_written = None  # (bytes now, peak) last written
        self.memory_wanted = None
        self.memory_at = 0.0

    def add(self, start: float, end: float, sm_active: float, kind: int, nbytes: int = 0) -> None:
        stretch = self.open.get(kind)
        if stretch is not None and start <= stretch[1] + 1e-7 and end - stretch[0] <= MAX_STRETCH:
            if end > stretch[1]:
                stretch[1] = end
            stretch[2] += sm_active * (end - start)
            stretch[3] += nbytes
        else:
            if stretch is not None:
                self._finish_until(stretch[1])
            self.open[kind] = [start, end, sm_active * (end - start), nbytes]
        now = self.now()
        if now - self.written_at >= self.interval:
            self.flush(now)

    def _finish_until(self, end: float) -> None:
        """Finish every open stretch ending by `end`, in the order they end: the file stays in end
        order (the stretches left open end later, and only grow)."""
        if len(self.open) == 1:
            ending = [next(iter(self.open))] if next(iter(self.open.values()))[1] <= end else []
        else:
            ending = [kind for _, kind in sorted((s[1], kind) for kind, s in self.open.items() if s[1] <= end)]
        for kind in ending:
            start, stop, sm_seconds, nbytes = self.open.pop(kind)
            span = stop - start
            self.done.append((start, stop, sm_seconds / span if span > 0 else 0.0, kind, nbytes))

    def flush(self, now: float = None) -> None:
        """Write the finished stretches and those being built (later work continues them in a record
        of its own)."""
        self._finish_until(float("inf"))
        if self.done:
            done, self.done = self.done, []
            self.writer.add_many(done)
        self.written_at = self.now() if now is None else now
        if self.memory_wanted is not None and self.memory_wanted != self.memory_written:
            self._write_memory(*self.memory_wanted)

    def memory(self, now_bytes: int, peak_bytes: int) -> None:
        self.memory_wanted = (now_bytes, peak_bytes)
        last = self.memory_written
        if last is None or peak_bytes > last[1] or abs(now_bytes - last[0]) >= MEMORY_STEP \
                or self.now() - self.memory_at >= self.interval:
            self._write_memory(now_bytes, peak_bytes)

    def _write_memory(self, now_bytes: int, peak_bytes: int) -> None:
        self.writer.memory(now_bytes, peak_bytes)
        self.memory_written = (now_bytes, peak_bytes)
        self.memory_at = self.now()

    def close(self) -> None:
        self.flush()
        self.writer.close()

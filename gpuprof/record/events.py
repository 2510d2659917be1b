"""Per-process event files, written from inside the user's processes.

Each process of the job appends JSON lines to a file of its own (host, pid and a random part in the
name, so pid reuse and many ranks never collide). Events are buffered and written with one
`os.write` per flush: when the probes find a flush interval has passed, when the buffer is full,
and when the process ends. Nothing here draws from `random`, installs a signal handler or
touches a tensor.
"""

import _thread
import json
import os
import time

from .fds import open_private
from .hosts import host_name


def event_file_name(pid: int) -> str:
    return f"{host_name()}-{pid}-{os.urandom(4).hex()}.jsonl"


class EventWriter:
    """Buffered, append-only JSON-lines file for one process.

    The file is opened by its path for each write and closed again, so no descriptor of gpuprof's
    stays in the program's table: a program that closes every descriptor and reuses the numbers
    can never receive gpuprof's events in its own files. The buffer is written when it is full,
    when `due()` says a flush interval has passed (the probes ask on their hot paths), on an
    explicit flush, when the process ends, and every flush interval from a timer thread once
    `start_timer()` is called (the probes call it only in a process that imported torch, which is
    multi-threaded already: a thread in any other process would make Python 3.12+ warn on os.fork)."""

    def __init__(self, directory: str, flush_interval: float = 1.0, max_buffer: int = 256, before_flush=None):
        self.before_flush = before_flush     # called on each explicit flush: buffered probes write
        self.path = os.path.join(directory, event_file_name(os.getpid()))
        self.flush_interval = flush_interval
        self.max_buffer = max_buffer
        self._buffer = []
        # _thread, not threading: importing threading registers its own after-fork handler, a cost
        # every fork of a process that never starts a thread would pay (plain python does not).
        self._lock = _thread.allocate_lock()
        self._last_flush = time.monotonic()
        self.closed = False
        self._thread = None
        self._stop = None       # the timer's stop event, made with the timer
        self.lost = 0           # writes that failed (the run folder went away, the disk is full)
        self._append(b"")       # create the file now: a process that registers is seen even if killed

    def emit(self, event: dict) -> None:
        """Queue one event; write when the buffer is full."""
        self.emit_line(json.dumps(event, separators=(",", ":"), default=str))

    def emit_line(self, line: str) -> None:
        """Queue one already-encoded JSON object (the probes' hot path encodes with f-strings)."""
        with self._lock:
            if self.closed:
                return
            self._buffer.append(line)
            full = len(self._buffer) >= self.max_buffer
        if full:
            self._write()

    def emit_now(self, event: dict) -> None:
        self.emit(event)
        self._write()

    def due(self, now: float) -> bool:
        """True when the last flush is at least a flush interval old."""
        return now - self._last_flush >= self.flush_interval

    def flush(self) -> None:
        if self.before_flush is not None and not self.closed:
            try:
                self.before_flush()
            except Exception:
                pass
        self._write()

    def _write(self) -> None:
        with self._lock:
            self._last_flush = time.monotonic()
            if not self._buffer or self.closed:
                return
            data = ("\n".join(self._buffer) + "\n").encode("utf-8")
            self._buffer = []
            self._append(data)

    def _append(self, data: bytes) -> None:
        try:
            fd = open_private(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        except OSError:
            self.lost += 1
            return
        try:
            if data:
                os.write(fd, data)
        except OSError:
            self.lost += 1
        finally:
            os.close(fd)

    def close(self) -> None:
        if self.closed:
            return
        self.flush()
        with self._lock:
            self.closed = True
            self._stop_timer()

    def _stop_timer(self) -> None:
        if self._stop is not None:
            self._stop.set()

    def start_timer(self) -> None:
        import threading

        with self._lock:
            if self._thread is not None or self.closed:
                return
            self._stop = threading.Event()
            self._thread = threading.Thread(target=self._timer, name="gpuprof-flush", daemon=True)
        self._thread.start()

    def _timer(self) -> None:
        while not self._stop.wait(self.flush_interval):
            self.flush()

    def abandon(self) -> None:
        """In a forked child: drop the parent's buffer without writing it."""
        self._buffer = []
        self.closed = True
        self._stop_timer()

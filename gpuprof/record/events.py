"""Per-process event files, written from inside the user's processes.

Each process of the job appends JSON lines to a file of its own (host, pid and a random part in the
name, so pid reuse and many ranks never collide). Events are buffered and written with one
`os.write` per flush: at most every `flush_interval` seconds by a daemon thread, when the buffer is
full, and when the process ends. Nothing here draws from `random`, installs a signal handler or
touches a tensor.
"""

import json
import os
import threading
import time

_HOST = os.uname().nodename.split(".")[0] or "host"


def event_file_name(pid: int) -> str:
    return f"{_HOST}-{pid}-{os.urandom(4).hex()}.jsonl"


class EventWriter:
    """Buffered, append-only JSON-lines file for one process."""

    def __init__(self, directory: str, flush_interval: float = 1.0, max_buffer: int = 256, before_flush=None):
        self.before_flush = before_flush     # called on each timed or explicit flush: buffered probes write
        self.path = os.path.join(directory, event_file_name(os.getpid()))
        self.flush_interval = flush_interval
        self.max_buffer = max_buffer
        self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self._buffer = []
        self._lock = threading.Lock()
        self._last_flush = time.monotonic()
        self._thread = None
        self._stop = threading.Event()
        self.closed = False

    def emit(self, event: dict) -> None:
        """Queue one event; flush when the buffer is full or the last flush is a second old."""
        self.emit_line(json.dumps(event, separators=(",", ":"), default=str))

    def emit_line(self, line: str) -> None:
        """Queue one already-encoded JSON object (the probes' hot path encodes with f-strings)."""
        with self._lock:
            if self.closed:
                return
            self._buffer.append(line)
            due = len(self._buffer) >= self.max_buffer or (
                time.monotonic() - self._last_flush >= self.flush_interval
            )
        if due:
            self._write()
        elif self._thread is None:
            self.start_timer()

    def emit_now(self, event: dict) -> None:
        self.emit(event)
        self.flush()

    def flush(self) -> None:
        if self.before_flush is not None and not self.closed:
            try:
                self.before_flush()
            except Exception:
                pass
        self._write()

    def _write(self) -> None:
        with self._lock:
            if not self._buffer or self.closed:
                self._last_flush = time.monotonic()
                return
            data = ("\n".join(self._buffer) + "\n").encode("utf-8")
            self._buffer = []
            self._last_flush = time.monotonic()
            try:
                os.write(self._fd, data)
            except OSError:
                pass

    def close(self) -> None:
        if self.closed:
            return
        self.flush()
        with self._lock:
            self.closed = True
            self._stop.set()
            try:
                os.close(self._fd)
            except OSError:
                pass

    def abandon(self) -> None:
        """In a forked child: drop the parent's buffer and descriptor without writing them."""
        self._buffer = []
        self.closed = True
        try:
            os.close(self._fd)
        except OSError:
            pass

    def start_timer(self) -> None:
        with self._lock:
            if self._thread is not None or self.closed:
                return
            self._thread = threading.Thread(target=self._timer, name="gpuprof-flush", daemon=True)
        self._thread.start()

    def _timer(self) -> None:
        while not self._stop.wait(self.flush_interval):
            self.flush()

"""The live status line shown while the job runs, only when stderr is a terminal.

It lives on the terminal's bottom row, below a scroll region that holds everything else (as apt
draws its progress bar): the program's own output (prints, tqdm bars, warnings, a traceback after
Ctrl-C) scrolls above it and never shares its row. It is taken down before the job stops (Ctrl-Z)
and when the job ends, so the terminal is left as it was. It shows what matters while training:
steps per second and the share of time spent waiting for data (read from the probes' event files
as they are flushed), then CPU (never more cores than the machine has) and GPU."""

import glob
import json
import os
import sys
import time
from collections import deque

WINDOW_S = 5.0          # figures over the last seconds of events


class JobFigures:
    """Steps per second and data-wait share of the busiest process, from the event files as they
    grow (each file is read from where the last poll stopped)."""

    def __init__(self, events_dir: str):
        self.events_dir = events_dir
        self.offsets = {}
        self.partial = {}
        self.steps = {}      # path -> deque of (t, n)
        self.waits = {}      # path -> deque of (t, n, w)

    def poll(self) -> None:
        for path in glob.glob(os.path.join(self.events_dir, "*.jsonl")):
            try:
                with open(path, "rb") as handle:
                    handle.seek(self.offsets.get(path, 0))
                    data = handle.read(4 << 20)
            except OSError:
                continue
            self.offsets[path] = self.offsets.get(path, 0) + len(data)
            text = self.partial.pop(path, b"") + data
            lines = text.split(b"\n")
            if lines and lines[-1]:
                self.partial[path] = lines[-1]
            for line in lines[:-1]:
                head = line[:24]
                if b'"step"' in head or b'"batch"' in head:
                    self._take(path, line)

    def _take(self, path: str, line: bytes) -> None:
        try:
            event = json.loads(line)
        except ValueError:
            return
        kind = event.get("k")
        target = (self.steps if kind == "step" else self.waits).setdefault(path, deque(maxlen=20000))
        if "rows" in event:
            names = event.get("cols") or []
            w_at = names.index("w") if "w" in names else None
            for row in event["rows"]:
                target.append((row[0], 1, (row[w_at] or 0.0) if w_at is not None else 0.0))
        elif "t" in event:
            target.append((event["t"], int(event.get("n", 1)), event.get("w") or 0.0))

    def figures(self):
        """(steps per second, data-wait share) over the last WINDOW_S seconds of the busiest
        process's events; None where not known yet."""
        source = self.steps if self.steps else self.waits
        if not source:
            return None, None
        path = max(source, key=lambda p: len(source[p]))
        marks = source[path]
        last = marks[-1][0]
        recent = [m for m in marks if m[0] >= last - WINDOW_S]
        if len(recent) < 2 or recent[-1][0] <= recent[0][0]:
            return None, None
        span = recent[-1][0] - recent[0][0]
        rate = sum(n for _, n, _ in recent[1:]) / span
        waits = self.waits.get(path)
        share = None
        if waits:
            share = min(1.0, sum(w for t, _, w in waits if recent[0][0] < t <= recent[-1][0]) / span)
        return rate, share


class LiveStatus:
    def __init__(self, stream=None, events_dir: str = None, cpu_count: int = None, clock=time.monotonic):
        self.stream = stream or sys.stderr
        self.clock = clock
        self.start = clock()
        self.cpu_count = cpu_count or os.cpu_count() or 1
        self.job = JobFigures(events_dir) if events_dir else None
        self.rows = None          # the terminal's height while the region is set; None: not set

    # -- the bottom row ------------------------------------------------------------------------
    def _size(self):
        try:
            size = os.get_terminal_size(self.stream.fileno())
            return size.lines, size.columns
        except (OSError, ValueError, AttributeError):
            return None, None

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):
            pass

    def _set_region(self, rows: int) -> None:
        # Make room with a newline, keep the cursor where the program writes, fence off the last row.
        self._write(f"\n\x1b7\x1b[1;{rows - 1}r\x1b8\x1b[1A")
        self.rows = rows

    def _take_down(self) -> None:
        if self.rows is not None:
            self._write(f"\x1b7\x1b[{self.rows};1H\x1b[2K\x1b[r\x1b8")
            self.rows = None

    def __call__(self, system, nvml) -> None:
        rows, columns = self._size()
        if rows is None or rows < 4 or columns < 20:
            return
        if self.rows != rows:
            self._take_down()
            self._set_region(rows)
        text = self.line(system, nvml)[:columns - 1]
        self._write(f"\x1b7\x1b[{rows};1H\x1b[2K{text}\x1b8")

    def suspend(self) -> None:
        """Before the job stops (Ctrl-Z): give the shell the whole terminal back."""
        self._take_down()

    def clear(self) -> None:
        self._take_down()

    # -- what it says -----------------------------------------------------------------------------
    def line(self, system, nvml) -> str:
        parts = [f"gpuprof {self.clock() - self.start:.0f}s"]
        if self.job is not None:
            self.job.poll()
            rate, share = self.job.figures()
            parts.append(f"{rate:.1f} steps/s" if rate is not None else "steps/s n/a")
            parts.append(f"data wait {share:.0%}" if share is not None else "data wait n/a")
        columns = system.store.columns if system is not None else {}
        if columns.get("t"):
            dt = columns["dt"][-1] or 1.0
            cores = ((columns["job_user_s"][-1] or 0) + (columns["job_system_s"][-1] or 0)) / dt
            parts.append(f"CPU {min(cores, self.cpu_count):.1f}/{self.cpu_count} cores")
        if nvml is not None and nvml.available and nvml.stores:
            utils = [s.columns["util_gpu"][-1] for s in nvml.stores if s.columns["util_gpu"]]
            if utils:
                parts.append(f"GPU {100 * sum(utils) / len(utils):.0f}%")
        return " · ".join(parts)

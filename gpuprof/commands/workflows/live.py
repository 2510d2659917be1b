"""The live status line shown while the job runs, only when stderr is a terminal.

It lives on the terminal's bottom row, below a scroll region that holds everything else (as apt
draws its progress bar): the program's own output (prints, tqdm bars, warnings, a traceback after
Ctrl-C) scrolls above it and never shares its row. It is taken down before the job stops (Ctrl-Z)
and when the job ends, so the terminal is left as it was. It shows what matters while training:
steps per second and the share of time spent waiting for data (read from the probes' event files
as they are flushed), then CPU (never more cores than the machine has) and GPU: the job's own
devices where its processes named them (`cuda_devices` events, by UUID), else every device NVML
answers for; a MIG instance by GPM's activity (NVML gives it no utilisation), with GPM's SM
activity beside where the GPU has it; a lost device is left out, and said when it was the job's."""

import glob
import json
import os
import sys
import time
from collections import deque

from gpuprof.record.packed import rows_of
from gpuprof.capture.samplers.nvml_devices import nvml_uuid

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
        self.uuids = set()   # the CUDA devices the job's processes noted, in NVML's spelling

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
                elif b'"cuda_devices"' in head:
                    self._take_devices(line)

    def _take_devices(self, line: bytes) -> None:
        try:
            devices = json.loads(line).get("devices") or []
        except (ValueError, AttributeError):
            return
        self.uuids.update(nvml_uuid(d.get("uuid")) for d in devices if isinstance(d, dict) and d.get("uuid"))

    def _take(self, path: str, line: bytes) -> None:
        try:
            event = json.loads(line)
        except ValueError:
            return
        kind = event.get("k")
        target = (self.steps if kind == "step" else self.waits).setdefault(path, deque(maxlen=20000))
        if "cols" in event:
            names = event.get("cols") or []
            w_at = names.index("w") if "w" in names else None
            try:
                rows = rows_of(event)
            except ValueError:
                return
            for row in rows:
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
        if nvml is not None and nvml.available:
            gpu = gpu_figure(nvml, self.job.uuids if self.job is not None else ())
            if gpu:
                parts.append(gpu)
        return " · ".join(parts)


def _last(store, column: str, rows: int = 3):
    """The latest figure of a column within its last few rows (GPM skips a tick now and then)."""
    for value in reversed((store.columns.get(column) or [])[-rows:]):
        if value is not None:
            return value
    return None


def gpu_figure(nvml, uuids=()) -> str:
    """"GPU 87% (SM 40%)": the latest share of time a kernel ran on the job's devices (their UUIDs,
    else every device), averaged; a MIG instance's from GPM. None when no device has a figure."""
    units = getattr(nvml, "units", None)
    if units is None:        # a sampler without per-device units: the stores it offers
        utils = [_last(s, "util_gpu") for s in nvml.stores]
        utils = [u for u in utils if u is not None]
        return f"GPU {100 * sum(utils) / len(utils):.0f}%" if utils else None
    wanted = {u for u in uuids if u}
    job = [u for u in units if wanted and nvml_uuid(u.info.get("uuid")) in wanted]
    chosen = [u for u in (job or units) if not u.lost]
    if job and not chosen:
        return "GPU lost"
    utils, active = [], []
    for unit in chosen:
        util = _last(unit.store, "util_gpu")
        if util is None:
            util = _last(unit.store, "gpm_busy")        # a MIG instance: GPM's activity
        if util is not None:
            utils.append(util)
            sm = _last(unit.store, "sm_active")
            if sm is not None:
                active.append(sm)
    if not utils:
        return None
    sm = f" (SM {100 * sum(active) / len(active):.0f}%)" if active else ""
    return f"GPU {100 * sum(utils) / len(utils):.0f}%{sm}"

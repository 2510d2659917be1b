"""Per-item measurements with a hot path of one list append, and bounded volume on disk.

`add` only appends a tuple; the rows are turned into events when the process's event file is
flushed (every second from the writer's thread, when a probe flushes, at exit). The first `full`
items are written as rows of a columnar event ({"cols": [...], "packed": "..."}: float64 in
base64, gpuprof.record.packed; read back as one item each); after that every `block` items become one summed event (count, first and last
time, sums and maxima), so a run of a million steps keeps its event files and analysis bounded
while totals stay exact."""

import json
import math
import threading

from . import runtime
from ...record.packed import PACKED, pack

PENDING_LIMIT = 1024     # rows held before the hot path drains them itself


class Stream:
    def __init__(self, kind: str, fields, static: dict = None, full: int = 5000, block: int = 50, sink=None):
        """`sink` takes the events (`emit(dict)`, `emit_line(str)`): this process's event file
        through the probes' runtime by default, which also drains the stream at each flush;
        an EventWriter or any such object elsewhere (tests, benchmarks), drained by `flush`."""
        self.kind = kind
        self.fields = tuple(fields)
        self.static = dict(static or {})
        self.full = full
        self.block = block
        self.count = 0            # rows taken from the hot path so far
        self._rows = []           # appended by the hot path, taken by drain
        self.pending = self._rows     # for a hot path that appends itself (then drains at PENDING_LIMIT)
        self._tail = []           # rows past `full` waiting to fill a block
        self._drain_lock = threading.Lock()
        self._sink = sink or runtime
        if sink is None:
            runtime.add_drain(self.drain)

    def add(self, t: float, *values) -> None:
        """One item: its time, then one value per field (None where not measured)."""
        rows = self._rows
        rows.append((t,) + values)
        if len(rows) >= PENDING_LIMIT:
            self.drain()

    def drain(self, final: bool = False) -> None:
        """Write what the hot path left; `final` also writes a last partial block."""
        with self._drain_lock:
            rows = self._rows
            taken = rows[:]          # a slice and a slice deletion are each atomic: an append
            del rows[:len(taken)]    # racing with them stays in the list for the next drain
            singles = max(0, min(len(taken), self.full - self.count))
            self.count += len(taken)
            if singles:
                self._emit_rows(taken[:singles])
            self._tail.extend(taken[singles:])
            while len(self._tail) >= self.block:
                chunk, self._tail = self._tail[:self.block], self._tail[self.block:]
                self._sink.emit(self._summed(chunk))
            if final and self._tail:
                chunk, self._tail = self._tail, []
                self._sink.emit(self._summed(chunk))

    def flush(self) -> None:
        self.drain(final=True)

    def _emit_rows(self, rows) -> None:
        event = {"k": self.kind}
        event.update(self.static)
        event["cols"] = ("t",) + self.fields
        try:
            event[PACKED] = pack(rows, len(event["cols"]))
            self._sink.emit_line(json.dumps(event, separators=(",", ":")))
            return
        except (TypeError, ValueError, OverflowError):
            event.pop(PACKED, None)          # a value that is not a number: written as JSON text
        event["rows"] = rows
        line = json.dumps(event, separators=(",", ":"))
        if "NaN" in line or "Infinity" in line:     # JSON has neither: such a value becomes null
            event["rows"] = [tuple(None if v is not None and not math.isfinite(v) else v for v in row) for row in rows]
            line = json.dumps(event, separators=(",", ":"))
        self._sink.emit_line(line)

    def _summed(self, chunk) -> dict:
        event = {"k": self.kind}
        event.update(self.static)
        event.update({"n": len(chunk), "t0": chunk[0][0], "t": chunk[-1][0]})
        maxes = {}
        for name, column in zip(self.fields, list(zip(*chunk))[1:]):
            numbers = [v for v in column if v is not None and not isinstance(v, bool)]
            if numbers:
                event[name] = sum(numbers)
                maxes[f"{name}_max"] = max(numbers)
        event.update(maxes)
        return event

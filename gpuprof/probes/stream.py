"""Per-item events with bounded volume: every item at first, then one summed event per block.

A run of a million steps writes the first `full` items one by one and the rest as blocks of
`block` items (count, first and last time, sums and maxima), so the event files and the analysis
stay bounded while totals stay exact."""

import json
import math

from gpuprof.probes import boot


class Stream:
    def __init__(self, kind: str, static: dict = None, full: int = 5000, block: int = 50, emit=None):
        self.kind = kind
        self.static = dict(static or {})
        self.full = full
        self.block = block
        self.count = 0
        self._emit = emit or boot.emit
        self._emit_line = (lambda line: self._emit(json.loads(line))) if emit else boot.emit_line
        # The hot path formats numbers straight into a JSON object: a third of json.dumps's cost.
        self._prefix = json.dumps(dict({"k": kind}, **self.static), separators=(",", ":"))[:-1]
        self._block = None

    def add(self, t: float, **values) -> None:
        self.count += 1
        if self.count <= self.full:
            parts = [self._prefix, ',"t":', repr(t)]
            for key, value in values.items():
                parts.append(f',"{key}":{_number(value)}')
            parts.append("}")
            self._emit_line("".join(parts))
            return
        if self._block is None:
            self._block = {"n": 0, "t0": t, "sums": {}, "maxes": {}}
        block = self._block
        block["n"] += 1
        block["t"] = t
        for key, value in values.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                block["sums"][key] = block["sums"].get(key, 0) + value
                if value > block["maxes"].get(key, float("-inf")):
                    block["maxes"][key] = value
        if block["n"] >= self.block:
            self.flush()

    def flush(self) -> None:
        block, self._block = self._block, None
        if not block:
            return
        event = {"k": self.kind}
        event.update(self.static)
        event.update({"n": block["n"], "t0": block["t0"], "t": block["t"]})
        event.update(block["sums"])
        event.update({f"{k}_max": v for k, v in block["maxes"].items()})
        self._emit(event)


def _number(value) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "null"
    return repr(value)

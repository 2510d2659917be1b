"""Read one process's events into bounded memory, whatever the size of its event file.

The same shape the probes' streams write (gpuprof.capture.probes.stream): per stream (a kind and its static
fields) the first FULL items stay single, later ones are summed into blocks (count, first and last
time, sums and maxima), and when blocks pile up, neighbours are merged, so totals stay exact and
the step-time distribution keeps its resolution where it has items. Other kinds keep their first
OTHER_LIMIT events; cumulative HDF5 tallies keep the latest per data set; copy tallies past the
limit are summed into one block that spans from the first copy to the last.
"""

from gpuprof.record.kinds import STREAMS

FULL = 5000             # single items kept per stream
BLOCK = 50              # items per block when folding singles
MAX_BLOCKS = 2000       # blocks kept per stream before neighbours are merged
OTHER_LIMIT = 20000     # events kept per other kind
# Each stream kind's static fields (as the probes' streams write them); every other number is a value.
STATIC_OF = {name: kind.static for name, kind in STREAMS.items()}
STREAM_KINDS = tuple(STATIC_OF)


def _key(event):
    return tuple(event.get(name) for name in STATIC_OF[event["k"]])


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def merge_blocks(a: dict, b: dict) -> dict:
    """One block standing for the items of blocks a then b (of one stream)."""
    static = STATIC_OF[a["k"]]
    out = {name: a[name] for name in static if name in a}
    out["n"] = int(a.get("n", 1)) + int(b.get("n", 1))
    out["t0"] = a.get("t0", a.get("t"))
    out["t"] = b.get("t")
    for name in set(a) | set(b):
        if name in out or name in static:
            continue
        x, y = a.get(name), b.get(name)
        if name.endswith("_max"):
            values = [v for v in (x, y) if _is_number(v)]
            if values:
                out[name] = max(values)
        elif _is_number(x) or _is_number(y):
            out[name] = (x if _is_number(x) else 0) + (y if _is_number(y) else 0)
    return out


def as_block(event: dict) -> dict:
    """A single item written as a block of one (its values are its own sums and maxima)."""
    block = {name: event[name] for name in STATIC_OF[event["k"]] if name in event}
    block.update({"n": 1, "t0": event["t"], "t": event["t"]})
    for name, value in event.items():
        if name not in block and name != "t" and _is_number(value):
            block[name] = value
            block[f"{name}_max"] = value
    return block


class _StreamStore:
    def __init__(self):
        self.singles = []
        self.blocks = []
        self.folding = None      # the block singles are folded into, once FULL are kept

    def add(self, event: dict) -> None:
        if "n" in event:
            self._add_block(event)
        elif len(self.singles) < FULL and not self.blocks and self.folding is None:
            self.singles.append(event)
        else:
            self._fold(event)
            if self.folding["n"] >= BLOCK:
                self._add_block(self.folding)
                self.folding = None

    def _fold(self, event: dict) -> None:
        """Add one single item to the block being filled, in place (the hot path of a big file)."""
        block = self.folding
        if block is None:
            self.folding = as_block(event)
            return
        static = STATIC_OF[event["k"]]
        block["n"] += 1
        block["t"] = event["t"]
        for name, value in event.items():
            if name == "t" or name in static or not _is_number(value):
                continue
            block[name] = block.get(name, 0) + value
            most = name + "_max"
            if most not in block or value > block[most]:
                block[most] = value

    def _add_block(self, block: dict) -> None:
        self.blocks.append(block)
        if len(self.blocks) > MAX_BLOCKS:
            pairs = zip(self.blocks[0::2], self.blocks[1::2])
            merged = [merge_blocks(a, b) for a, b in pairs]
            if len(self.blocks) % 2:
                merged.append(self.blocks[-1])
            self.blocks = merged

    def events(self) -> list:
        return self.singles + self.blocks + ([self.folding] if self.folding else [])


class BoundedEvents:
    """The events of one process, in bounded memory; `dropped` counts what was left out per kind."""

    def __init__(self):
        self.order = []          # events of other kinds, in file order
        self.streams = {}
        self.counts = {}
        self.h5_latest = {}
        self.copies = None
        self.dropped = {}

    def add(self, event: dict) -> None:
        kind = event.get("k")
        if kind in STREAM_KINDS:
            key = _key(event)
            store = self.streams.get(key)
            if store is None:
                store = self.streams[key] = _StreamStore()
            store.add(event)
            return
        if kind == "h5read":
            key = (event.get("file"), event.get("name"))
            kept = self.h5_latest.get(key)
            if kept is None or (event.get("calls") or 0) >= (kept.get("calls") or 0):
                self.h5_latest[key] = event
            return
        seen = self.counts.get(kind, 0)
        self.counts[kind] = seen + 1
        if seen < OTHER_LIMIT:
            self.order.append(event)
        elif kind == "copies":
            self.copies = event if self.copies is None else _sum_copies(self.copies, event)
        else:
            self.dropped[kind] = self.dropped.get(kind, 0) + 1

    def events(self) -> list:
        out = list(self.order)
        for store in self.streams.values():
            out.extend(store.events())
        out.extend(self.h5_latest.values())
        if self.copies is not None:
            out.append(self.copies)
        return out


#: A copy block's span: when its first and last copy were made. Blocks merged past OTHER_LIMIT keep
#: the earliest start and the latest end (a sum of times would place them nowhere).
SPAN_FIRST, SPAN_LAST = "t0", "t1"


def _span(a, b, pick):
    values = [v for v in (a, b) if _is_number(v)]
    return pick(values) if values else None


def _sum_copies(a: dict, b: dict) -> dict:
    """One copy block standing for blocks a then b: counts and seconds summed, bytes per dtype
    summed, the span from a's first copy to b's last."""
    out = dict(a)
    for name, value in b.items():
        if name in (SPAN_FIRST, SPAN_LAST):
            continue
        if name == "dtypes" and isinstance(value, dict):
            merged = dict(out.get("dtypes") or {})
            for dtype, nbytes in value.items():
                if _is_number(nbytes):
                    merged[dtype] = merged.get(dtype, 0) + nbytes
            out["dtypes"] = merged
        elif name not in ("k", "t", "pid") and _is_number(value):
            out[name] = (out.get(name) if _is_number(out.get(name)) else 0) + value
    if SPAN_FIRST in a or SPAN_FIRST in b or SPAN_LAST in a or SPAN_LAST in b:
        out[SPAN_FIRST] = _span(a.get(SPAN_FIRST), b.get(SPAN_FIRST), min)
        out[SPAN_LAST] = _span(a.get(SPAN_LAST), b.get(SPAN_LAST), max)
    out["t"] = b.get("t", a.get("t"))
    return out

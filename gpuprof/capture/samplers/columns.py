"""A bounded, columnar time series: long runs are downsampled, never silently truncated.

When the store is full, each pair of neighbouring rows is merged into one (rates and shares are
averaged, counters summed, gauges keep the maximum) and the stride doubles, so a 24-hour run keeps
the same number of rows as a short one at a coarser step, and the totals stay exact.
"""

SUM = "sum"      # per-interval amounts: seconds of CPU, bytes read
MEAN = "mean"    # shares and rates
MAX = "max"      # gauges: memory in use
LAST = "last"    # timestamps


class ColumnStore:
    def __init__(self, kinds: dict, max_rows: int = 20000):
        if max_rows < 2:
            raise ValueError("max_rows must be at least 2")
        self.kinds = dict(kinds)
        self.max_rows = max_rows
        self.columns = {name: [] for name in self.kinds}
        self.stride = 1          # raw ticks per stored row
        self.ticks = 0           # raw ticks appended
        self._pending = None     # a partial row while stride > 1
        self._pending_count = 0

    def __len__(self) -> int:
        return len(next(iter(self.columns.values()), []))

    def append(self, row: dict) -> None:
        self.ticks += 1
        if self.stride == 1:
            self._store(row)
            return
        if self._pending is None:
            self._pending, self._pending_count = dict(row), 1
        else:
            self._pending = self._merge(self._pending, self._pending_count, row, 1)
            self._pending_count += 1
        if self._pending_count == self.stride:
            self._store(self._pending)
            self._pending, self._pending_count = None, 0

    def _store(self, row: dict) -> None:
        for name in self.kinds:
            self.columns[name].append(row.get(name))
        if len(self) >= self.max_rows:
            self._halve()

    def _halve(self) -> None:
        for name, kind in self.kinds.items():
            values = self.columns[name]
            merged = []
            for i in range(0, len(values) - 1, 2):
                merged.append(_combine(kind, values[i], 1, values[i + 1], 1))
            if len(values) % 2:
                merged.append(values[-1])
            self.columns[name] = merged
        self.stride *= 2

    def _merge(self, a: dict, a_count: int, b: dict, b_count: int) -> dict:
        return {name: _combine(kind, a.get(name), a_count, b.get(name), b_count)
                for name, kind in self.kinds.items()}

    def to_dict(self) -> dict:
        columns = {name: list(values) for name, values in self.columns.items()}
        if self._pending is not None:
            for name in self.kinds:
                columns[name].append(self._pending.get(name))
        return {"stride": self.stride, "ticks": self.ticks, "columns": columns}


def _combine(kind: str, a, a_count: int, b, b_count: int):
    if a is None:
        return b
    if b is None:
        return a
    if kind == SUM:
        return a + b
    if kind == MAX:
        return max(a, b)
    if kind == LAST:
        return b
    return (a * a_count + b * b_count) / (a_count + b_count)

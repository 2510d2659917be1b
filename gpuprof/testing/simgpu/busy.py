"""How busy a simulated GPU was over a window of time, from its activity records.

Pure functions over (start, end, weight) stretches, so the NVML face's readings (utilisation, SM
activity, energy, PCIe bytes) are each one line over the same arithmetic and test without files.
Windows are closed on the left and open on the right; stretches ending after `hi` count up to `hi`
(work queued on the device has not run yet)."""


def clipped(start: float, end: float, lo: float, hi: float) -> float:
    """How long [start, end) lies within [lo, hi)."""
    return max(0.0, min(end, hi) - max(start, lo))


def union_time(stretches, lo: float, hi: float) -> float:
    """Seconds of [lo, hi) during which at least one stretch (start, end, ...) was running."""
    spans = sorted((max(s[0], lo), min(s[1], hi)) for s in stretches if s[1] > lo and s[0] < hi)
    total, reach = 0.0, lo
    for start, end in spans:
        if end <= reach:
            continue
        total += end - max(start, reach)
        reach = end
    return total


def weighted_time(stretches, lo: float, hi: float) -> float:
    """The integral over [lo, hi) of min(1, sum of the weights of the stretches running then), for
    stretches (start, end, weight): seconds of the device fully used, where several partial users
    add up but never past the whole device."""
    edges = []
    for start, end, weight in stretches:
        start, end = max(start, lo), min(end, hi)
        if end > start and weight > 0:
            edges.append((start, weight))
            edges.append((end, -weight))
    edges.sort()
    total, level, last = 0.0, 0.0, lo
    for at, change in edges:
        total += min(1.0, max(0.0, level)) * (at - last)
        level += change
        last = at
    return total


def running_at(stretches, at: float) -> bool:
    """Whether a stretch (start, end, ...) covers the instant `at`."""
    return any(s[0] <= at < s[1] for s in stretches)


def ran_within(stretches, lo: float, at: float) -> bool:
    """Whether a stretch (start, end, ...) had started by `at` and was still running after `lo`:
    some work ran during (lo, at], or runs at `at` (with lo == at: running_at)."""
    return any(s[0] <= at and s[1] > lo for s in stretches)


def bytes_within(transfers, lo: float, hi: float) -> float:
    """Bytes of copies (start, end, nbytes) moved within [lo, hi), each at an even rate over its
    stretch (a copy of no duration counts whole at its instant)."""
    total = 0.0
    for start, end, nbytes in transfers:
        if end > start:
            total += nbytes * clipped(start, end, lo, hi) / (end - start)
        elif lo <= start < hi:
            total += nbytes
    return total

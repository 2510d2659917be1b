"""Helpers for the probes' bounded streams: an event is either one item (no "n") or a block of n
items whose numeric values are sums."""

#: Quantiles by name.
P25 = 0.25
MEDIAN = 0.5
P75 = 0.75
P90 = 0.90
P99 = 0.99


def count(event) -> int:
    return int(event.get("n", 1))


def total(events, key: str) -> float:
    return sum(float(e.get(key) or 0.0) for e in events)


def median(values):
    values = sorted(v for v in values if v is not None)
    if not values:
        return None
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


def quantile(values, q: float):
    values = sorted(v for v in values if v is not None)
    if not values:
        return None
    index = min(len(values) - 1, max(0, int(round(q * (len(values) - 1)))))
    return values[index]


def durations(events):
    """Per-item durations between successive end times; a block of n items spreads its span evenly.
    Returns [(end_time, duration, weight)] for every item after the first."""
    out = []
    previous = None
    for event in sorted(events, key=lambda e: e["t"]):
        n = count(event)
        if previous is not None:
            out.append((event["t"], (event["t"] - previous) / n, n))
        previous = event["t"]
    return out


def weighted_median(pairs):
    """Median of (value, weight) pairs."""
    return weighted_quantile(pairs, MEDIAN)


def weighted_quantile(pairs, q: float):
    """The q-quantile (0..1) of (value, weight) pairs."""
    pairs = sorted((v, w) for v, w in pairs if v is not None and w)
    total_weight = sum(w for _, w in pairs)
    if not total_weight:
        return None
    running = 0.0
    for value, weight in pairs:
        running += weight
        if running >= total_weight * q:
            return value
    return pairs[-1][0]

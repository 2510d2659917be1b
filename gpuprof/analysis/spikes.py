"""Steps that vary: slow steps that come back at a steady interval (evaluation, checkpointing or
logging inside the loop every N steps), and a start that is slower than the rest (compilation,
allocator and cache warm-up). A median and a mean alone hide both: nanoGPT's median step is 37 ms
and its mean 50 ms because of periodic evaluation.

Pure: from the measured steps' durations in order, one per step (blocks of steps summed by the
probes' streams count as their mean and are never a spike)."""

import statistics

SPIKE = 3.0            # a step this many times the median ...
SPIKE_MIN_S = 0.02     # ... and at least this much longer than it is a slow step
MIN_SPIKES = 3         # slow steps needed to speak of a period
ON_PERIOD = 0.7        # share of the gaps between slow steps within one step of the period
SLOW_START = 1.5       # the first tenth of the steps this much slower than the rest is a slow start


def periodic_spikes(durations: list):
    """{every, count, extra_s, share, typical_s, median_s} for slow steps at a steady interval, or None.
    `durations`: the measured steps' durations, in order."""
    if len(durations) < 4 * MIN_SPIKES:
        return None
    median = statistics.median(durations)
    slow = [i for i, d in enumerate(durations) if d >= SPIKE * median and d - median >= SPIKE_MIN_S]
    if len(slow) < MIN_SPIKES:
        return None
    gaps = [b - a for a, b in zip(slow, slow[1:])]
    every = int(statistics.median(gaps))
    if every < 2 or sum(1 for g in gaps if abs(g - every) <= 1) < ON_PERIOD * len(gaps):
        return None
    extra = sum(durations[i] - median for i in slow)
    total = sum(durations)
    return {"every": every, "count": len(slow), "extra_s": round(extra, 4),
            "share": round(extra / total, 4) if total else None,
            "typical_s": round(statistics.median(durations[i] for i in slow), 4), "median_s": round(median, 4)}


def slow_start(durations: list):
    """{steps, times} when the first tenth of the measured steps ran SLOW_START times slower than the
    rest, or None."""
    if len(durations) < 20:
        return None
    first = max(len(durations) // 10, 2)
    early, rest = statistics.median(durations[:first]), statistics.median(durations[first:])
    if rest <= 0 or early < SLOW_START * rest:
        return None
    return {"steps": first, "times": round(early / rest, 2)}


def describe(spikes: dict) -> str:
    return (f"every {spikes['every']} steps a step takes {spikes['typical_s'] * 1e3:.0f} ms instead of "
            f"{spikes['median_s'] * 1e3:.0f} ms ({spikes['count']} such steps, {spikes['share']:.0%} of the measured "
            "time): work inside the loop every N steps (evaluation, checkpoint saving, logging) that the median hides")

"""Steps that vary: slow steps that come back at a steady interval (evaluation, checkpointing or
logging inside the loop every N steps), and a start that is slower than the rest (compilation,
allocator and cache warm-up). A median and a mean alone hide both: nanoGPT's median step is 37 ms
and its mean 50 ms because of periodic evaluation.

Pure: from the measured steps' durations in order, one per step (blocks of steps summed by the
probes' streams count as their mean and are never a spike)."""

import math
import statistics

from gpuprof.stats.digits import REPORT_DIGITS

SPIKE = 3.0            # a step this many times the median ...
SPIKE_MIN_S = 0.02     # ... and at least this much longer than it is a slow step
MIN_SPIKES = 3         # slow steps needed to speak of a period
MIN_STEPS = 4 * MIN_SPIKES      # measured steps needed to look for slow ones: four per slow step a period needs
#: Candidate periods: the gaps from each of the first PERIOD_FROM slow steps to the next PERIOD_TO.
PERIOD_FROM = 200
PERIOD_TO = 40
ON_PERIOD = 0.7        # share of the gaps between slow steps within one step of the period
SLOW_START = 1.5       # the first tenth of the steps this much slower than the rest is a slow start
CHANCE = 0.01          # the chance that random slow steps fill some lattice tried as well as the best


def periodic_spikes(durations: list):
    """{every, count, extra_s, share, typical_s, median_s} for slow steps at a steady interval, or None.
    `durations`: the measured steps' durations, in order. The period is the step interval whose
    lattice (every p-th step from some step on) holds the most slow steps, with at least ON_PERIOD of
    its places slow: slow steps off the lattice (a busy machine's stalls) neither hide it nor count.
    A loaded machine's stalls fall at random, and among the many lattices tried one with few places
    is often full by chance: the best one must also be fuller than chance would make any of them."""
    if len(durations) < MIN_STEPS:
        return None
    median = statistics.median(durations)
    slow = [i for i, d in enumerate(durations) if d >= SPIKE * median and d - median >= SPIKE_MIN_S]
    if len(slow) < MIN_SPIKES:
        return None
    slow_set, n = set(slow), len(durations)
    candidates = {b - a for k, a in enumerate(slow[:PERIOD_FROM]) for b in slow[k + 1:k + PERIOD_TO]}
    best, tried = None, 0
    for every in sorted(p for p in candidates if 2 <= p <= n // MIN_SPIKES):
        for first in {i % every for i in slow}:
            tried += 1
            places = range(first, n, every)
            hits = [i for i in places if i in slow_set]
            if len(hits) >= MIN_SPIKES and len(hits) >= ON_PERIOD * len(places) and \
                    (best is None or len(hits) > len(best[1])):
                best = (every, hits, len(places))
    if best is None or tried * _binomial_tail(best[2], len(best[1]), len(slow) / n) > CHANCE:
        return None
    every, hits, _ = best
    extra = sum(durations[i] - median for i in hits)
    total = sum(durations)
    return {"every": every, "count": len(hits), "extra_s": round(extra, REPORT_DIGITS),
            "share": round(extra / total, REPORT_DIGITS) if total else None,
            "typical_s": round(statistics.median(durations[i] for i in hits), REPORT_DIGITS),
            "median_s": round(median, REPORT_DIGITS)}


TAIL_PRECISION = 1e-12   # the tail's sum stops where a term adds less than this share of it


def _binomial_tail(places: int, need: int, p: float) -> float:
    """P(at least `need` of `places` steps are slow) when each is slow with probability p on its
    own. The best of `tried` lattices must be this unlikely `tried` times over (CHANCE in all):
    random stalls at that rate would rarely fill any of them as well."""
    if p >= 1.0:
        return 1.0
    log_term = (math.lgamma(places + 1) - math.lgamma(need + 1) - math.lgamma(places - need + 1)
                + need * math.log(p) + (places - need) * math.log1p(-p))
    term, total = math.exp(log_term), 0.0
    for k in range(need, places + 1):
        total += term
        if term < total * TAIL_PRECISION:
            break
        term *= (places - k) / (k + 1) * p / (1 - p)
    return total


MAX_SLOW_KEPT = 200


def slow_steps_at(timed: list) -> list:
    """[[start, end]] (monotonic seconds) of the slow steps among (end time, duration) pairs, at most
    MAX_SLOW_KEPT: what other samplers' series are read against."""
    if len(timed) < MIN_STEPS:
        return []
    median = statistics.median(d for _, d in timed)
    return [[round(t - d, REPORT_DIGITS), round(t, REPORT_DIGITS)] for t, d in timed
            if d >= SPIKE * median and d - median >= SPIKE_MIN_S][:MAX_SLOW_KEPT]


MEMORY_STALLED = 0.1     # share of time tasks stalled on memory (PSI) during slow steps worth naming


def memory_stalls_in_slow_steps(columns: dict, slow_at: list):
    """{during, overall, steps} when tasks stalled on memory (PSI memory some; paging, swap) at least
    MEMORY_STALLED of the slow steps' time and twice as much as over the run, else None."""
    times, dts, stalls = columns.get("t") or [], columns.get("dt") or [], columns.get("psi_memory_some") or []
    if not slow_at or not stalls:
        return None
    inside = weight = total = total_weight = 0.0
    for t, dt, stall in zip(times, dts, stalls):
        if t is None or not dt or stall is None:
            continue
        total += stall * dt
        total_weight += dt
        overlap = sum(max(min(t, end) - max(t - dt, begin), 0.0) for begin, end in slow_at)
        inside += stall * overlap
        weight += overlap
    if not weight or not total_weight:
        return None
    during, overall = inside / weight, total / total_weight
    if during < MEMORY_STALLED or during < 2 * overall:
        return None
    return {"during": round(during, 3), "overall": round(overall, 3), "steps": len(slow_at)}


SLOW_START_MIN_STEPS = 20    # measured steps needed to compare the first ones with the rest
FIRST_PART = 10              # the first 1/FIRST_PART of the steps are the early ones (at least two)


def slow_start(durations: list):
    """{steps, times} when the first tenth of the measured steps ran SLOW_START times slower than the
    rest, or None."""
    if len(durations) < SLOW_START_MIN_STEPS:
        return None
    first = max(len(durations) // FIRST_PART, 2)
    early, rest = statistics.median(durations[:first]), statistics.median(durations[first:])
    if rest <= 0 or early < SLOW_START * rest:
        return None
    return {"steps": first, "times": round(early / rest, 2)}


def describe(spikes: dict, phases: dict = None) -> str:
    """`phases`: the environment's measured collection phases, when the slow steps are the rollouts."""
    what = (f"{spikes['where']} runs in them" if spikes.get("where") else
            "work inside the loop every N steps (evaluation, checkpoint saving, logging)")
    if _rollouts(spikes, phases or {}):
        what = ("each is a rollout (the experience collected between two updates: env steps, policy inference; "
                "its parts in the note on collection and learning)")
    return (f"every {spikes['every']} steps a step takes {spikes['typical_s'] * 1e3:.0f} ms instead of "
            f"{spikes['median_s'] * 1e3:.0f} ms ({spikes['count']} such steps, {spikes['share']:.0%} of the measured "
            f"time): {what}, which the median hides")


#: Slow steps are the rollouts where their count is within a quarter of the rollouts' (at least one)
#: and their time between half and twice the collection's.
ROLLOUT_COUNT_SLACK = 4
ROLLOUT_TIME_LOW = 0.5
ROLLOUT_TIME_HIGH = 2.0


def _rollouts(spikes: dict, phases: dict) -> bool:
    """Whether the slow steps are the measured rollouts: about as many, and together about as long."""
    count = phases.get("count") or 0
    collection = (phases.get("collection") or {}).get("seconds") or 0.0
    slow_s = spikes["count"] * spikes["typical_s"]
    return bool(phases.get("parts")) and abs(spikes["count"] - count) <= max(1, count // ROLLOUT_COUNT_SLACK) and \
        ROLLOUT_TIME_LOW * collection <= slow_s <= ROLLOUT_TIME_HIGH * collection


IN_SLOW = 0.5          # a function on the stack in at least half the slow steps' sampled time ...
MORE_THAN_ELSEWHERE = 0.2   # ... and in this much more of it than of the ordinary steps' time


def slow_step_function(events: list):
    """The user function that runs in the slow steps and not (as much) in the others, from the stack
    sampler's `slow_steps` tallies: 'name (file:line)', or None. The one whose share of the slow
    steps' time most exceeds the share of ordinary steps it ran in (an evaluation step that stayed
    under the threshold counts as one ordinary step, not as its long time); a module's top level,
    under every step, names nothing."""
    slow: dict = {}
    normal: dict = {}
    presence: dict = {}
    slow_weight = normal_weight = normal_steps = 0
    counted = all("normal_steps" in (e.get("slow_steps") or {}) for e in events if e.get("slow_steps"))
    for event in events:
        tally = event.get("slow_steps") or {}
        slow_weight += tally.get("weight") or 0
        normal_weight += tally.get("normal_weight") or 0
        normal_steps += tally.get("normal_steps") or 0
        for key, weight in (tally.get("frames") or {}).items():
            slow[key] = slow.get(key, 0) + weight
        for key, weight in (tally.get("normal_frames") or {}).items():
            normal[key] = normal.get(key, 0) + weight
        for key, steps in (tally.get("normal_presence") or {}).items():
            presence[key] = presence.get(key, 0) + steps
    if not slow_weight:
        return None
    scored = []
    for key, weight in slow.items():
        if key.startswith("<module> "):
            continue
        inside = weight / slow_weight
        if counted:
            # The share of ordinary steps it ran in: on a loaded machine an evaluation step that
            # stayed under the threshold would otherwise outweigh the short ordinary steps' samples.
            elsewhere = presence.get(key, 0) / normal_steps if normal_steps else 0.0
        else:       # a record from before steps were counted
            elsewhere = normal.get(key, 0) / normal_weight if normal_weight else 0.0
        if inside >= IN_SLOW and inside - elsewhere >= MORE_THAN_ELSEWHERE:
            scored.append((inside - elsewhere, -elsewhere, key))
    return max(scored)[2] if scored else None

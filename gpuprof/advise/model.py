"""A two-stage model of a training step, for estimating what a fix can buy.

A step (normalised to 1) is compute C = 1 - w plus a data wait w. When batches are made inline
(num_workers=0, or a hand-written loop), the producer's time P = w is spent in series with compute:
step = C + P. When workers make them in parallel, they are the limit whenever the loop waits:
their time per step is R = C + w = 1, and step = max(C, R). A fix either adds producer capacity
(parallel workers: step' = max(C, P/k)) or cuts the producer's cost by k (a cache, a faster reader,
echoing: step' = C + P/k inline, max(C, R/k) in parallel). Speed-up = 1 / step'. Removing a wait
share w entirely bounds every estimate by 1 / (1 - w)."""

import math

from gpuprof.priors.step_model import (CPU_ONLY_COMPUTE_RELIEF, GPU_COMPUTE_RELIEF, ONE_NUMBER_SAVING_ENDS,
                                              SHIPPING_PER_BATCH, SHIPPING_RATE, STEP_SPREAD_BOUNDS)

#: Shipping a batch from a worker process: pickling into shared memory, the queue, waking the
#: training process, unpickling (priors shipping.*). A step of a few milliseconds cannot hide it;
#: both sides pay it, the workers and the training process.
SHIP_FIXED_S = SHIPPING_PER_BATCH.value
#: The cheapest and the dearest fixed cost measured (the dearest beside steps of a few milliseconds,
#: workers and training sharing the cores): a range's optimistic and pessimistic ends take them.
SHIP_FIXED_CHEAPEST_S, SHIP_FIXED_DEAREST_S = SHIPPING_PER_BATCH.ends()
SHIP_BYTES_PER_S = SHIPPING_RATE.value
#: A guard against dividing by an empty step (or by a saving of all of it): nothing is taken below it.
TINY = 1e-9
#: Counting the producers a wait asks for, the compute part of a step is taken as at least this share
#: (a loop that only waits asks for at most 20 times the producers it has).
LEAST_COMPUTE_SHARE = 0.05


def shipping_share(ev, per_batch: float = SHIP_FIXED_S) -> float:
    """What shipping each batch from workers would cost, as a share of today's step (0 when the
    step time is unknown); `per_batch` is the fixed part of one batch's cost."""
    if not ev.window_s or not ev.measured_steps:
        return 0.0
    step = ev.window_s / ev.measured_steps
    nbytes = (((ev.loader or {}).get("batch") or {}).get("bytes")) or 0
    return (per_batch + nbytes / SHIP_BYTES_PER_S) / step


def more_capacity(ev, k: float, extra: float = 0.0) -> float:
    """Speed-up from k times the producer throughput running alongside compute; `extra` is work
    the change adds to each step of the training process (shipping batches from workers)."""
    w = ev.wait_share or 0.0
    compute = 1.0 - w + extra
    producer = w if ev.inline_producer else 1.0
    return 1.0 / max(compute, producer / max(k, TINY), TINY)


def cheaper_producer(ev, k: float) -> float:
    """Speed-up from making each batch k times cheaper to produce, where it is produced now."""
    w = ev.wait_share or 0.0
    compute = 1.0 - w
    if ev.inline_producer:
        return 1.0 / max(compute + w / max(k, TINY), TINY)
    return 1.0 / max(compute, 1.0 / max(k, TINY), TINY)


def cpu_budget(ev, extra_work: float = 0.0) -> float:
    """The bound the machine's cores put on overlapping producers with compute. Per step (of 1), the
    producers' own CPU work (their threads' CPU, measured) plus the compute phase's (1 - w) on the
    cores it uses (every core on a CPU-only machine, where intra-op threads fill them; one on a GPU
    machine, where the host only launches work) must fit on the machine's cores: a step cannot get
    shorter than that work over the core count, however many workers there are. `extra_work`: CPU
    (in steps of one core) the change adds, such as shipping batches between processes."""
    w = ev.wait_share or 0.0
    producer = ev.producer_cores
    if producer is None:
        return float("inf")
    compute_cores = 1.0 if ev.gpu else float(ev.cpu_count)
    work = producer + (1.0 - w) * compute_cores + extra_work
    if work <= 0:
        return float("inf")
    return max(ev.cpu_count / work, 1.0)


def cheaper_share(share: float, saved_fraction: float) -> float:
    """Speed-up from saving `saved_fraction` of a part that takes `share` of the step."""
    return 1.0 / max(1.0 - share * saved_fraction, TINY)


def next_prime(n: int) -> int:
    n = max(int(n), 2)
    while True:
        if all(n % d for d in range(2, math.isqrt(n) + 1)):
            return n
        n += 1


# The estimate's uncertainty. Every estimate is the model above at the run's measured figures; a
# range takes those figures at their pessimistic and optimistic ends (their sources: priors range.*):
# - the measured steps' own spread (p90 over median): the shares a step splits into are known no
#   better than the step time itself, taken within STEP_SPREAD_MIN..STEP_SPREAD_MAX;
# - the compute part of a step: while producers share the cores it runs slower than it will once
#   they leave, so the optimistic end takes it at COMPUTE_RELIEF_CPU_ONLY of itself; with a GPU,
#   where the host only launches work, COMPUTE_RELIEF_GPU;
# - a fix's assumptions (how much a cheaper producer saves, how far more workers scale): a fix that
#   states no ends of its own has its saving, or its speed-up where that is nearer, taken at
#   ASSUMED_SAVING_LOW of itself at the pessimistic end, and what is left of the step beside its
#   compute part at 1 / ASSUMED_SAVING_HIGH at the optimistic end.
STEP_SPREAD_MIN, STEP_SPREAD_MAX = STEP_SPREAD_BOUNDS.ends()
STEP_SPREAD_UNKNOWN = STEP_SPREAD_BOUNDS.value
COMPUTE_RELIEF_CPU_ONLY, COMPUTE_RELIEF_GPU = CPU_ONLY_COMPUTE_RELIEF.value, GPU_COMPUTE_RELIEF.value
ASSUMED_SAVING_LOW, ASSUMED_SAVING_HIGH = ONE_NUMBER_SAVING_ENDS.ends()


def measured_spread(ev) -> float:
    """The relative spread of the measured step time that every share inherits."""
    spread = getattr(ev, "step_spread", None)
    if spread is None:
        return STEP_SPREAD_UNKNOWN
    return min(max(spread, STEP_SPREAD_MIN), STEP_SPREAD_MAX)


def saving_scaled(speedup: float, factor: float) -> float:
    """The speed-up when the share of the step a fix saves is `factor` times what it was."""
    saved = 1.0 - 1.0 / max(speedup, TINY)
    return 1.0 / max(1.0 - saved * factor, TINY)


def estimate_range(ev, central: float, low: float = None, high: float = None, relieves_compute: bool = False):
    """(low, high) around `central`, the speed-up at the measured figures. `low`/`high`: the fix's
    own ends of its assumptions, where it states them. The pessimistic end saves less by the step's
    spread. The optimistic end splits the step left after the fix into the compute part and the rest:
    the rest shrinks by the assumed saving's end (a fix without ends of its own) and the spread; the
    compute part, for a fix that takes producers' work off the cores (`relieves_compute`), sheds its
    slowdown from sharing them, never more than the time the fix saves."""
    spread = measured_spread(ev)
    if low is None:
        low = max(saving_scaled(central, ASSUMED_SAVING_LOW), central * ASSUMED_SAVING_LOW)
    low = min(low, central)
    low = saving_scaled(low, 1.0 - spread) if low >= 1.0 else low / (1.0 + spread)
    remaining = 1.0 / max(high if high is not None else central, central, TINY)
    compute = min(max(1.0 - (ev.wait_share or 0.0), 0.0), remaining) if relieves_compute else 0.0
    rest = (remaining - compute) / (ASSUMED_SAVING_HIGH if high is None else 1.0)
    if relieves_compute:
        relief = COMPUTE_RELIEF_GPU if ev.gpu else COMPUTE_RELIEF_CPU_ONLY
        compute -= min(compute * (1.0 - relief), 1.0 - 1.0 / max(central, 1.0))
    return low, (1.0 + spread) / max(rest + compute, TINY)

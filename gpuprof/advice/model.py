"""A two-stage model of a training step, for estimating what a fix can buy.

A step (normalised to 1) is compute C = 1 - w plus a data wait w. When batches are made inline
(num_workers=0, or a hand-written loop), the producer's time P = w is spent in series with compute:
step = C + P. When workers make them in parallel, they are the limit whenever the loop waits:
their time per step is R = C + w = 1, and step = max(C, R). A fix either adds producer capacity
(parallel workers: step' = max(C, P/k)) or cuts the producer's cost by k (a cache, a faster reader,
echoing: step' = C + P/k inline, max(C, R/k) in parallel). Speed-up = 1 / step'. Removing a wait
share w entirely bounds every estimate by 1 / (1 - w)."""


#: Shipping a batch from a worker process: pickling into shared memory, the queue, waking the
#: training process, unpickling. Measured on a 2-core machine: about 1 ms a batch for batches of a
#: few KB, and 6.3 MB batches 4.4 ms more (about 1.4 GB/s). A step of a few milliseconds cannot hide
#: it; both sides pay it, the workers and the training process.
SHIP_FIXED_S = 1.0e-3
SHIP_BYTES_PER_S = 1.4e9


def shipping_share(ev) -> float:
    """What shipping each batch from workers would cost, as a share of today's step (0 when the
    step time is unknown)."""
    if not ev.window_s or not ev.measured_steps:
        return 0.0
    step = ev.window_s / ev.measured_steps
    nbytes = (((ev.loader or {}).get("batch") or {}).get("bytes")) or 0
    return (SHIP_FIXED_S + nbytes / SHIP_BYTES_PER_S) / step


def more_capacity(ev, k: float, extra: float = 0.0) -> float:
    """Speed-up from k times the producer throughput running alongside compute; `extra` is work
    the change adds to each step of the training process (shipping batches from workers)."""
    w = ev.wait_share or 0.0
    compute = 1.0 - w + extra
    producer = w if ev.inline_producer else 1.0
    return 1.0 / max(compute, producer / max(k, 1e-9), 1e-9)


def cheaper_producer(ev, k: float) -> float:
    """Speed-up from making each batch k times cheaper to produce, where it is produced now."""
    w = ev.wait_share or 0.0
    compute = 1.0 - w
    if ev.inline_producer:
        return 1.0 / max(compute + w / max(k, 1e-9), 1e-9)
    return 1.0 / max(compute, 1.0 / max(k, 1e-9), 1e-9)


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
    return 1.0 / max(1.0 - share * saved_fraction, 1e-9)


def next_prime(n: int) -> int:
    n = max(int(n), 2)
    while True:
        if all(n % d for d in range(2, int(n ** 0.5) + 1)):
            return n
        n += 1

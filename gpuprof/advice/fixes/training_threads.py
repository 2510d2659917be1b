"""training-threads: fewer intra-op threads in the training process while DataLoader workers run.

On a CPU-only machine torch's intra-op pool starts one thread per core. When workers also make
batches there, the pool's threads queue for cores the workers hold, and a parallel op waits for its
slowest thread: the training's threads are measured waiting for a CPU (schedstat) while the loop
hardly waits for data. Bounding the pool to the cores the workers leave stops that queueing.

The estimate: the compute phase (1 - w) today lasts as long as its threads' run time plus their
waits; with N threads on N free cores it lasts the training threads' CPU time (their run time,
measured over the window) spread over N cores, never longer than today, and never shorter than
today's with every wait for a CPU gone: the optimistic end, where the work stays spread over the
threads as today and only their waits go. Spinning idle threads count as run time, so the central
figure errs low."""

import math

from gpuprof.advice.fix import MIN_GAIN, Fix, pct
from gpuprof.advice.situation import INPUT

#: The training threads' wait for a CPU, of what they wanted, from which fewer threads are worth it
#: (the contended input rule's own threshold).
TRAINING_QUEUED = 0.15


def threads_for(ev):
    """(today's intra-op threads, the count that leaves the workers their cores), or None when the
    pool already fits beside the workers. torch's default is one thread per core."""
    today = ev.intra_op_threads
    producers = ev.producer_cores or 0.0
    target = max(1, math.floor(ev.cpu_count - producers + 1e-9))
    if today <= target:
        return None
    return today, target


def compute_after(ev, threads: int) -> float:
    """The compute phase's share of today's step once its threads stop queueing: the training
    threads' measured CPU per second of window over `threads` cores, never more than today's, and
    never less than today's with every wait for a CPU gone (other programs that took the cores
    make the CPU the training received small without making its work smaller)."""
    w = ev.wait_share or 0.0
    return max(min(1.0 - w, ev.training_cores / threads), no_waits(ev))


def no_waits(ev) -> float:
    """The compute phase with its threads' waits for a CPU gone and its work spread as today."""
    w = ev.wait_share or 0.0
    return (1.0 - w) * (1.0 - ev.training_cpu_wait)


def build(ev, s):
    loader = ev.loader or {}
    if ev.gpu or not loader.get("num_workers") or ev.wait_source != "dataloader" or s.input_kind is None:
        return None
    wait = ev.training_cpu_wait
    if wait is None or wait < TRAINING_QUEUED or ev.training_cores is None or ev.wait_share is None:
        return None
    fitted = threads_for(ev)
    if fitted is None:
        return None
    today, target = fitted
    w = ev.wait_share
    gain = 1.0 / max(w + compute_after(ev, target), 1e-9)
    if gain < MIN_GAIN:
        return None
    workers = loader.get("num_workers")
    where = loader.get("where")
    snippet = (f"torch.set_num_threads({target})   # at the top of the script, before building the DataLoader"
               + (f" at {where}" if where else "") + "\n"
               "# and, for numpy/OpenCV work in the workers (torch already runs each worker on one intra-op thread):\n"
               "# DataLoader(..., worker_init_fn=lambda _: torch.set_num_threads(1))")
    # The optimistic end: the threads' waits go and their work stays spread as today.
    high = 1.0 / max(w + no_waits(ev), 1e-9)
    return {
        "estimated_speedup": gain, "estimate_low": gain, "estimate_high": max(high, gain),
        "where": where, "change": {"torch_threads": target},
        "detail": f"torch.set_num_threads({target}) in the training process (today {today} intra-op threads beside "
                  f"{workers} worker{'s' if workers != 1 else ''} on {ev.cpu_count} cores)",
        "snippet": snippet,
        "why": f"the training's threads waited for a CPU {pct(wait)} of the time they wanted one while the workers "
               f"used {ev.producer_cores or 0:.1f} of {ev.cpu_count} cores; {how(ev, target)}, so a step is up to "
               f"{math.floor(gain * 100) / 100:.2f}x faster",
    }


def how(ev, target: int) -> str:
    """What the compute phase becomes, in the terms of the figure that decides it."""
    if compute_after(ev, target) == no_waits(ev):
        return (f"the training received only {ev.training_cores:.2f} cores per second (the workers and other "
                f"programs took the rest), so at most its waits for a CPU go")
    return (f"on the {target} core{'s' if target != 1 else ''} left, compute takes its CPU time of "
            f"{ev.training_cores:.2f} cores per second without queueing")


def keep(settings: dict, loader, framework=None) -> str:
    threads = (settings or {}).get("torch_threads")
    return f"torch.set_num_threads({threads}) at the top of the training script (before the DataLoader at " \
           f"{loader or 'its line'} starts its workers)"


FIX = Fix(id="training-threads", title="Give the training fewer intra-op threads while workers run", effort=1,
          addresses=INPUT, build=build, try_keys=("torch_threads",), keep=keep)

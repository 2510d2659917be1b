"""training-threads: fewer intra-op threads in the training process than the cores it can get.

On a CPU-only machine torch's intra-op pool starts one thread per core. When those cores are taken
(by the job's own DataLoader workers, by other programs, or because a cgroup quota or affinity mask
gives the job fewer cores than it sees), the pool's threads queue for a core, and a parallel op
waits for its slowest thread: the training's threads are measured waiting for a CPU (schedstat).
Bounding the pool to the cores left stops that queueing. Offered with or without workers, whatever
the verdict: a single-process loop on a shared machine loses the most this way.

The cores left: the cores the job may use (quota, affinity: system.cpu_count) less the cores its
own producers (DataLoader workers) took and the cores other programs held over the measured steps,
at least one.

The estimate: the step's part in the training process (1 - w, w the wait for workers' batches;
the whole step where batches are made in the loop) today lasts as long as its threads' run time
plus their waits. With N threads on N free cores it lasts the threads' CPU time (their run time
over the window) spread over N cores, never shorter than today's with every wait for a CPU gone:
the pessimistic end, since threads spinning at a barrier count as run time and make the work look
larger than it is. Where the threads ran more than N cores today, that end is a slowdown (fewer
threads take parallel work away). The optimistic end: every moment at least one of
the T threads was held up waiting for a core gone, 1 - (1 - q)^T of that part (analysis.input_cost's
held_up), since each op waits for its slowest thread while the others spin at its barrier. The
central figure is the geometric middle of the two ends: neither end is more likely, and the spin
that separates them is not measured. The fix is offered where that middle is a gain.

Checked against measured runs (the ends set from the model above, not fitted to these):
examples/contended_workers.py on an idle 2-core machine (T = 2, q = 0.44, workers 0.78 core):
1.22-2.57x, the user's torch.set_num_threads(1) measured 1.37-1.39x; tests/programs/per_sample_loop.py
with one busy loop beside it (T = 2, q = 0.51, others 1.0 core): 1.0-4.2x, measured 2.1-2.6x by hand;
a held-out single-process loop with others holding 1-1.5 cores (T = 2, q = 0.75) measured 13x,
inside the optimistic end's 16x and above every-wait-gone's 4x; examples/photo_decode.py on an idle
2-core machine (T = 2, q = 0.18, the threads running 1.55 cores beside workers taking 0.32):
0.62-1.47x, middle 0.95, not offered, and one thread ran the program 1.09-1.20x slower."""

import math

from gpuprof.advise.fix import MIN_GAIN, Fix, pct
from gpuprof.advise.model import TINY
from gpuprof.advise.situation import INPUT
from gpuprof.judge.verdict import bottlenecks
from gpuprof.judge.verdict.evidence import TRAINING_QUEUED, gather

#: What a sum of core counts may fall short of a whole one by (1.9999999999 cores left are 2).
WHOLE_CORES_SLACK = 1e-9



def workers_of(ev) -> int:
    """The dominant DataLoader's workers, where the loop waits on them (0 for batches made inline)."""
    if ev.inline_producer:
        return 0
    return int((ev.loader or {}).get("num_workers") or 0)


def cores_left(ev) -> float:
    """The cores the training can have: the job's cores less its workers' and other programs'."""
    producers = (ev.producer_cores or 0.0) if workers_of(ev) else 0.0
    return ev.cpu_count - producers - (ev.other_cores or 0.0)


def threads_for(ev):
    """(today's intra-op threads, the count that fits the cores left), or None when the pool already
    fits."""
    today = ev.intra_op_threads
    target = max(1, math.floor(cores_left(ev) + WHOLE_CORES_SLACK))
    if today <= target:
        return None
    return today, target


def outside_training(ev) -> float:
    """The share of a step the training process's threads do not run: the wait for workers' batches."""
    return (ev.wait_share or 0.0) if workers_of(ev) else 0.0


def compute_after(ev, threads: int) -> float:
    """The training process's share of today's step with `threads` threads that do not queue: its
    threads' measured CPU per second of window over `threads` cores (more than today's where they
    ran more cores than that), never less than today's with every wait for a CPU gone (other
    programs that took the cores make the CPU the training received small without making its work
    smaller)."""
    return max(ev.training_cores / threads, no_waits(ev))


def no_waits(ev) -> float:
    """The training process's part with its threads' waits for a CPU gone and its work spread as today."""
    return (1.0 - outside_training(ev)) * (1.0 - ev.training_cpu_wait)


def none_held_up(ev, today: int) -> float:
    """The training process's part with every moment one of its `today` threads waited gone."""
    return (1.0 - outside_training(ev)) * (1.0 - min(ev.training_cpu_wait, 1.0)) ** today


def build(ev, s):
    if ev.gpu:
        return None
    wait = ev.training_cpu_wait
    if wait is None or wait < TRAINING_QUEUED or ev.training_cores is None:
        return None
    workers = workers_of(ev)
    if workers and ev.wait_share is None:
        return None
    fitted = threads_for(ev)
    if fitted is None:
        return None
    today, target = fitted
    w = outside_training(ev)
    low = 1.0 / max(w + compute_after(ev, target), TINY)
    high = max(1.0 / max(w + none_held_up(ev, today), TINY), low)
    gain = math.sqrt(low * high)
    if gain < MIN_GAIN:
        return None
    where = (ev.loader or {}).get("where") if workers else None
    return {
        "estimated_speedup": gain, "estimate_low": low, "estimate_high": high,
        "where": where, "change": {"torch_threads": target},
        "detail": f"torch.set_num_threads({target}) in the training process (today {today} intra-op threads "
                  f"{_beside(ev, workers)}), or OMP_NUM_THREADS={target} on its command line",
        "snippet": _snippet(target, workers, where),
        "why": f"the training's threads waited for a CPU {pct(wait)} of the time they wanted one {_taken(ev, workers)}; "
               f"{how(ev, target)}, so a step is about {math.floor(gain * 100) / 100:.2f}x faster",
    }


def _sharers(ev, workers: int, workers_words: str, others_words: str) -> list:
    """The job's workers and other programs, each worded as the sentence needs, where they ran."""
    return ([workers_words] if workers else []) + ([others_words] if ev.other_cores else [])


def _beside(ev, workers: int) -> str:
    """What today's threads share the cores with, in the run's terms."""
    parts = _sharers(ev, workers, f"{workers} worker{'s' if workers != 1 else ''}",
                     f"other programs holding {ev.other_cores or 0:.1f} cores")
    shared = f"beside {' and '.join(parts)} " if parts else ""
    return f"{shared}on the {ev.cpu_count} core{'s' if ev.cpu_count != 1 else ''} the job may use"


def _taken(ev, workers: int) -> str:
    """Who took the cores: the workers, other programs, or neither (the threads outnumber the cores)."""
    parts = _sharers(ev, workers, f"the workers used {ev.producer_cores or 0:.1f}",
                     f"other programs held {ev.other_cores or 0:.1f}")
    if not parts:
        return f"with {ev.intra_op_threads} threads for {ev.cpu_count} core{'s' if ev.cpu_count != 1 else ''}"
    return f"while {' and '.join(parts)} of {ev.cpu_count} cores"


def _snippet(target: int, workers: int, where) -> str:
    placed = "before building the DataLoader" + (f" at {where}" if where else "") if workers else \
        "before the training loop"
    lines = [f"torch.set_num_threads({target})   # at the top of the script, {placed}",
             f"# or, without editing the script: OMP_NUM_THREADS={target} python train.py ..."]
    if workers:
        lines += ["# and, for numpy/OpenCV work in the workers (torch already runs each worker on one intra-op thread):",
                  "# DataLoader(..., worker_init_fn=lambda _: torch.set_num_threads(1))"]
    return "\n".join(lines)


def how(ev, target: int) -> str:
    """What the compute phase becomes, in the terms of the figure that decides it."""
    if compute_after(ev, target) == no_waits(ev):
        return (f"the training received only {ev.training_cores:.2f} cores per second (the rest went elsewhere), "
                f"so its waits for a CPU go at least, and the time its threads' ops waited for the slowest at most")
    return (f"on the {target} core{'s' if target != 1 else ''} left, compute takes its CPU time of "
            f"{ev.training_cores:.2f} cores per second without queueing")


def unadvised(report: dict):
    """The thread count `try --fix training-threads` measures where the baseline did not advise it:
    the one that fits the cores left, else one fewer than today; None for a single thread."""
    ev = gather(report)
    fitted = threads_for(ev)
    if fitted is not None:
        return {"torch_threads": fitted[1]}
    return {"torch_threads": ev.intra_op_threads - 1} if ev.intra_op_threads > 1 else None


def keep(settings: dict, loader, framework=None) -> str:
    threads = (settings or {}).get("torch_threads")
    where = f" (before the DataLoader at {loader} starts its workers)" if loader else ""
    return f"torch.set_num_threads({threads}) at the top of the training script{where}, or OMP_NUM_THREADS={threads}"


FIX = Fix(id="training-threads", title="Give the training as many intra-op threads as the cores it can get",
          effort=1, addresses=tuple(INPUT) + (bottlenecks.COMPUTE.id,), build=build, try_keys=("torch_threads",),
          keep=keep, unadvised=unadvised)

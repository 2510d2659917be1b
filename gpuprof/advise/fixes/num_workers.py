"""num-workers: more DataLoader worker processes, so batches are made alongside compute.

The estimate adds producer capacity (advice.model.more_capacity), bounded by the cores the
producers can have, the disk's parallelism, the memory and open files each worker costs, and the
CPU the measured steps use. On a CPU-only machine workers share the cores with the training's
intra-op threads and every batch is pickled: `gpuprof try` measured them at about 0.6 of the
rate their count promises, and the change then comes with fewer intra-op threads."""

import math

from gpuprof.advise.fix import MIN_GAIN, Fix, pct
from gpuprof.advise.flag_terms import WORKERS, command_first
from gpuprof.advise.loader_terms import keep_loader_line, loader_detail, loader_snippet, where
from gpuprof.advise.model import (LEAST_COMPUTE_SHARE, SHIP_FIXED_CHEAPEST_S, SHIP_FIXED_DEAREST_S, cpu_budget,
                                  more_capacity, shipping_share)
from gpuprof.priors.input_fixes import CPU_ONLY_WORKER_RATE, PARALLEL_READS, WAITING_WORKERS_PER_CORE
from gpuprof.advise.situation import INPUT
from gpuprof.judge.verdict import bottlenecks
from gpuprof.stats.sizes import GIB, MIB

CPU_ONLY_WORKER_EFFICIENCY = CPU_ONLY_WORKER_RATE.value
DISK_PARALLELISM = PARALLEL_READS.value      # reads in parallel go at most this much faster (queue depth unknown)
# The ends of those two assumptions the estimate's range takes.
WORKER_EFFICIENCY_ENDS = CPU_ONLY_WORKER_RATE.ends()
DISK_PARALLELISM_ENDS = PARALLEL_READS.ends()
# Waiting workers need no CPU, but each one's batches are unpickled by the main process.
LATENCY_WORKERS_PER_CORE = WAITING_WORKERS_PER_CORE.value
FDS_PER_WORKER = 8                # queue pipes, a semaphore, shared-memory handles, the dataset's own files
FDS_KEPT = 64                     # open files left to the training process itself
WORKER_MEMORY_SHARE = 0.5         # workers may take at most half the memory the machine had available
LEAST_PROPOSED = 4                # the fewest workers proposed for reads or waits
DISK_MOST = 16                    # the most proposed for a disk
#: Producers below this many cores are too small a measure to scale the free cores by.
MEASURABLE_PRODUCER_CORES = 0.05
#: Shipping batches between processes is named in the words from this share of a step on.
SHIPPING_NAMED_FROM = 0.02
#: Workers for a user who names the fix where the run advised none: the job's cores, at most this.
UNADVISED_MOST = 4


def worker_limit(ev):
    """(the most workers this machine holds, why), or (None, None) without the figures."""
    limits = []
    if ev.process_rss and ev.memory_available:
        limits.append((int(WORKER_MEMORY_SHARE * ev.memory_available // ev.process_rss),
                       f"memory: {ev.memory_available / GIB:.1f} GiB available and up to "
                       f"{ev.process_rss / MIB:.0f} MiB per process of the job"))
    if ev.open_files_limit:
        limits.append((max((ev.open_files_limit - FDS_KEPT) // FDS_PER_WORKER, 1),
                       f"open files: the limit is {ev.open_files_limit} and each worker holds about {FDS_PER_WORKER}"))
    return min(limits) if limits else (None, None)


def threads_beside_workers(ev, workers: int):
    """On a CPU-only machine the training process's intra-op threads and the workers share the
    cores; when together they outnumber them, the training keeps fewer threads (None: no change).
    torch's default is one thread per core, so an unknown count is taken as that."""
    if ev.gpu:
        return None
    threads = ev.intra_op_threads
    target = max(1, ev.cpu_count - workers)
    if threads + workers <= ev.cpu_count or threads <= target:
        return None         # they fit, or the process already keeps that few (torchrun sets 1)
    return target


def build(ev, s):
    kind = s.input_kind
    if kind is None or not ev.loader or ev.wait_source != "dataloader" or s.contended:
        return None         # contended: more workers take more of the cores training needs
    n = ev.loader.get("num_workers") or 0
    w = ev.wait_share
    proposal = proposed_workers(ev, kind, n, w)
    if proposal is None:
        return None
    suggested, limit, headroom = proposal
    if suggested <= n:
        return None         # never propose a change from X to X
    k = batch_rate_gain(ev, kind, n, suggested, headroom)
    ship = shipping_share(ev) if n == 0 else 0.0      # batches made inline today cross no process boundary
    gain, bounded = step_gain(ev, k, ship, w)
    if gain < MIN_GAIN:
        return None
    ship_ends = (shipping_share(ev, SHIP_FIXED_DEAREST_S), shipping_share(ev, SHIP_FIXED_CHEAPEST_S)) if n == 0 \
        else (0.0, 0.0)
    ends = zip(WORKER_EFFICIENCY_ENDS, DISK_PARALLELISM_ENDS, ship_ends)
    low, high = (step_gain(ev, batch_rate_gain(ev, kind, n, suggested, headroom, efficiency, disk), cost, w)[0]
                 for efficiency, disk, cost in ends)
    change = {"num_workers": suggested, "persistent_workers": True}
    snippet = loader_snippet(ev, change)
    detail = f"num_workers {n} -> {suggested}" + (" (batches then overlap with compute)" if n == 0 else "")
    # Waiting workers need no core.
    threads = threads_beside_workers(ev, suggested) if kind != bottlenecks.INPUT_LATENCY.id else None
    oversubscribed = ""
    if threads is not None:
        change["torch_threads"] = threads
        snippet = f"torch.set_num_threads({threads})   # in the training process: leave the workers their cores\n" + snippet
        detail += f", and torch.set_num_threads({threads}) in the training process"
        oversubscribed = (f"; the training's {ev.intra_op_threads} intra-op threads and "
                          f"{suggested} workers would share {ev.cpu_count} cores, and idle intra-op threads spin on "
                          f"theirs")
    return {
        "estimated_speedup": gain, "estimate_low": low, "estimate_high": high,
        "where": where(ev),
        "detail": loader_detail(ev, detail),
        "snippet": command_first(ev, WORKERS, suggested, snippet,
                                 env={"OMP_NUM_THREADS": threads} if threads is not None else None),
        "why": f"{pct(w)} of each step waits for data; producers run at {pct(ev.producer_cpu_ratio or 0)} CPU; "
               f"{limit}; {suggested} worker{'s' if suggested != 1 else ''} make{'s' if suggested == 1 else ''} batches about {k:.1f}x as fast as now, so a step is about "
               f"{math.floor(gain * 100) / 100:.2f}x faster at these figures{shipped_words(ev, ship)}{bounded}{oversubscribed}",
        "change": change,
    }


def proposed_workers(ev, kind: str, n: int, w: float):
    """(how many workers to propose, what limits that number, how much faster the cores free for
    producers let batches come (input.cpu only)), or None where workers could not overlap with the
    training at all."""
    need = (w / max(1 - w, LEAST_COMPUTE_SHARE)) if ev.inline_producer else \
        max(n, 1) / max(1 - w, LEAST_COMPUTE_SHARE)
    headroom = None
    if kind == bottlenecks.INPUT_CPU.id:
        proposal = cpu_bound_workers(ev, n, w, need)
        if proposal is None:
            return None
        suggested, limit, headroom = proposal
    elif kind == bottlenecks.INPUT_DISK.id:
        suggested = min(max(LEAST_PROPOSED, 2 * n), DISK_MOST)
        limit = "parallel reads keep the disk's queue full"
    else:
        cap = LATENCY_WORKERS_PER_CORE * ev.cpu_count
        suggested = min(cap, max(LEAST_PROPOSED, 2 * n, math.ceil(need) + 1))
        limit = (f"waiting workers need little CPU, but at most {LATENCY_WORKERS_PER_CORE} per core "
                 f"({cap} here): beyond that, starting them and unpickling their batches eat the gain")
    most, why_most = worker_limit(ev)
    if most is not None and suggested > most:
        suggested, limit = max(most, 1), f"{limit}; the machine holds at most {most} ({why_most})"
    return suggested, limit, headroom


def cpu_bound_workers(ev, n: int, w: float, need: float):
    """For producers the CPU limits: (workers, the cores they may use in words, how much faster
    those cores make batches), or None on a CPU-only machine where they would only take turns
    with the training."""
    producer_cores = ev.producer_cores or (ev.producer_cpu_ratio or 1.0) * max(n, 1)
    # At most one worker per core the job may use (one, under a one-core affinity or quota).
    suggested = max(n + 1, min(ev.cpu_count, max(2, math.ceil(need) + 1)))
    if ev.inline_producer:
        available = cores_beside_training(ev, w)
        if not ev.gpu and available < producer_cores:
            return None     # workers would only take turns with the training on the cores left: no overlap
    else:
        available = producer_cores + ev.cores_free
    headroom = available / producer_cores if producer_cores > MEASURABLE_PRODUCER_CORES else suggested
    return suggested, f"{available:.1f} of {ev.cpu_count} cores free for producers", headroom


def cores_beside_training(ev, w: float) -> float:
    """Cores workers may use when batches are made in the training thread today.

    Workers free the training thread: they may use every core the compute phase leaves (at most
    all cores for 1 - w of the time) and other programs do not take. With a GPU the compute phase
    leaves the host a core at least; on a CPU-only machine the cores other programs (another rank
    among them) and the compute keep busy are not there. The training process's own CPU where its
    threads were read: in a job of several ranks the other ranks' CPU is no more this rank's than
    another program's."""
    own = ev.training_cores if ev.training_cores is not None else (ev.cores_busy or 0.0)
    other = max((1 - (ev.machine_idle if ev.machine_idle is not None else 0.0)) * ev.cpu_count - own, 0.0)
    return max(ev.cpu_count - other - (1 - w) * ev.cpu_count, 1.0 if ev.gpu else 0.0)


def batch_rate_gain(ev, kind: str, n: int, suggested: int, headroom,
                    efficiency: float = CPU_ONLY_WORKER_EFFICIENCY, disk: float = DISK_PARALLELISM) -> float:
    """How much faster batches come with `suggested` workers instead of `n`: bounded by the free
    cores (CPU-bound producers) or the disk's parallelism, and on a CPU-only machine by the rate
    workers were measured at (`efficiency` and `disk`: those assumptions, at an end of their range)."""
    k = suggested / max(n, 1)
    if kind == bottlenecks.INPUT_CPU.id:
        k = min(k, headroom)
    elif kind == bottlenecks.INPUT_DISK.id:
        k = min(k, disk)
    if not ev.gpu and kind != bottlenecks.INPUT_LATENCY.id:
        k = max(1.0, k * efficiency) if n == 0 else k * efficiency
    return k


def step_gain(ev, k: float, ship: float, w: float):
    """(the step's speed-up from batches `k` times as fast, the words that say the CPU bounded it
    or ""). Readers spend CPU too (kernel time, copies): every kind is bounded by the CPU budget."""
    gain = more_capacity(ev, k, extra=ship)
    budget = cpu_budget(ev, extra_work=2 * ship)
    if budget < gain:
        return budget, (f"; bounded by the CPU: producers need {ev.producer_cores or 0:.1f} cores per step and "
                        f"compute {1 - w:.0%} of a step on {'one core' if ev.gpu else 'every core'}, which "
                        f"{ev.cpu_count} cores fit about {budget:.2f}x faster at these figures")
    return gain, ""


def shipped_words(ev, ship: float) -> str:
    """What sending each batch between processes costs, where it is worth saying."""
    if ship < SHIPPING_NAMED_FROM:
        return ""
    return (f"; each batch then crosses between processes (about {ship * ev.window_s / ev.measured_steps * 1e3:.1f} "
            f"ms, {ship:.0%} of a step today, in the training process and as much in the workers)")


FIX = Fix(id="num-workers", title="Make batches in more DataLoader worker processes", effort=1, addresses=INPUT,
          build=build, try_keys=("num_workers", "persistent_workers", "torch_threads"), keep=keep_loader_line,
          unadvised=lambda report: {"num_workers": unadvised_workers(report), "persistent_workers": True})


def unadvised_workers(report: dict) -> int:
    """Workers for a user who names the fix where the run advised none: the job's cores, at most
    UNADVISED_MOST (a count the run's figures did not choose; try measures it)."""
    cores = (report.get("system") or {}).get("cpu_count") or 2
    return max(1, min(int(cores), UNADVISED_MOST))

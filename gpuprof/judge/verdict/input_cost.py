"""What the input costs when no step waits for it: the cores its producers take from the training.

A compute-bound run whose DataLoader workers keep up can still pay for its input: on a machine
where the workers and the training share the cores, every core a worker decodes on is a core the
training's threads (on a CPU-only machine, its intra-op threads; on a GPU machine, the thread that
launches the kernels) do not run on. The wait says nothing of it; the CPU does.

The cost is stated when the producers take at least MIN_PRODUCER_CORES cores and the cores are
fought over: no core idle (or CPU pressure), or the training's threads waiting for a core at least
TRAINING_QUEUED of the time they want one. Where a core stays idle and the training does not wait,
the producers take nothing the training would have used. (An earlier rule asked for 20% of the
job's busy CPU, the share of the one program it was set on; held-out image pipelines whose workers
took 16% of the job's CPU ran 1.15-1.58x faster with their input free, and that rule said nothing.)

The gain with the input free, on a CPU-only machine: the training would run on the cores the
producers take too. Intra-op threads do not scale in proportion to the cores they get (a core a
worker leaves is shared with the rest of the machine, and parallel operators pay their own
synchronisation), so the share of the step saved is the producers' share of the job's CPU times
a scaling efficiency between EFFICIENCY_LOW and EFFICIENCY_HIGH (central EFFICIENCY); the high end
is at least the time the step's intra-op threads were held up waiting for a core (held_up). On a GPU
machine the producers only slow the launching thread, and only where no core is idle: the
training threads' measured wait for a core is the share at stake, bounded by the time the GPU
idles (the device cannot run faster than always busy)."""

from gpuprof.priors.verdicts import INPUT_FREE_CPU_ONLY, INPUT_FREE_GPU
from gpuprof.judge.verdict.evidence import TRAINING_QUEUED
from gpuprof.judge.verdict.rules import TINY

MIN_PRODUCER_CORES = 0.25   # the cores the producers take, at the least, for their cost to be stated

#: How much of the producers' share the training turns into speed once it has their cores (prior
#: input-cost.efficiency-cpu-only, with the image trainers it holds).
EFFICIENCY_LOW, EFFICIENCY, EFFICIENCY_HIGH = (INPUT_FREE_CPU_ONLY.low, INPUT_FREE_CPU_ONLY.value,
                                               INPUT_FREE_CPU_ONLY.high)
#: On a GPU machine, the share of the launching thread's wait for a core that stalls the device
#: (prior input-cost.efficiency-gpu).
GPU_EFFICIENCY_LOW, GPU_EFFICIENCY, GPU_EFFICIENCY_HIGH = INPUT_FREE_GPU.low, INPUT_FREE_GPU.value, INPUT_FREE_GPU.high


def input_cpu_cost(ev):
    """`{share, producer_cores, cores_busy, saved, saved_low, saved_high}` where the input's
    producers take a notable share of the cores the step uses, else None. `share`: the producers'
    share of the job's busy CPU; `saved*`: the share of each step that making the input free would
    save (central, pessimistic and optimistic ends)."""
    loader = ev.loader or {}
    if ev.inline_producer or not loader.get("num_workers"):
        return None
    producers, busy = ev.producer_cores, ev.cores_busy
    if not producers or not busy or producers < MIN_PRODUCER_CORES:
        return None
    share = min(producers / busy, 1.0)
    if not (ev.contended or (ev.training_cpu_wait or 0.0) >= TRAINING_QUEUED):
        return None
    cost = {"share": share, "producer_cores": producers, "cores_busy": busy}
    if ev.gpu:
        return _on_gpu(ev, cost)
    high = max(share * EFFICIENCY_HIGH, held_up(ev))
    return dict(cost, saved=share * EFFICIENCY, saved_low=share * EFFICIENCY_LOW, saved_high=high)


def held_up(ev) -> float:
    """The share of the time a step of T intra-op threads, each waiting for a core a share q of the
    time it wants one, has at least one of them waiting: 1 - (1 - q)^T. Each op waits for its slowest
    thread (the others spin at its barrier, which counts as CPU), so the producers can cost the
    training more than the cores they use; with the input free that time comes back, at most.
    examples/photo_decode.py on an idle machine: q = 21% with 2 threads gives 38%; the input made
    free measured 1.58x (a saving of 37%) where the producers' share of the CPU was 21%."""
    wait = ev.training_cpu_wait
    if not wait:
        return 0.0
    return 1.0 - (1.0 - min(wait, 1.0)) ** ev.intra_op_threads


def _on_gpu(ev, cost: dict):
    """The launching thread's wait for a core, where no core is idle, bounded by the GPU's idle time."""
    wait = ev.training_cpu_wait
    if not ev.contended or not wait:
        return None
    idle = 1.0 - (ev.gpu_util if ev.gpu_util is not None else 0.0)
    at_stake = min(wait, max(idle, 0.0))
    if at_stake <= 0:
        return None
    return dict(cost, saved=at_stake * GPU_EFFICIENCY, saved_low=at_stake * GPU_EFFICIENCY_LOW,
                saved_high=at_stake * GPU_EFFICIENCY_HIGH)


def speedup(saved: float) -> float:
    """The speed-up of a step that saves `saved` of itself."""
    return 1.0 / max(1.0 - saved, TINY)     # a step that saves all of itself: no division by zero

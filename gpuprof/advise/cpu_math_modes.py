"""What bf16 autocast buys a step on a CPU with bf16 instructions, from what the run measured.

On a CPU an op returns when it is done, so a settled iteration after the FLOP count times each op
with a formula (matmuls, convolutions, attention: `counted_step.seconds_by_op`): their wall time
over the step is the share `m` that autocast moves to bf16. The rest (element-wise ops, norms, the loss, the
optimizer, Python) stays float32, and autocast adds its casts. The step after the change is
`1 - m + m / r`, where `r` is how much faster those ops run in bf16 with the casts paid, a rate
measured on whole programs on this kind of CPU (prior `cpu-bf16.speed-ratio`): its ends give the
range's ends, and a low end below 1 says the casts can cost more than bf16 saves where the ops are
small (a text model's 0.95x)."""

from gpuprof.priors.model_fixes import CPU_BF16_SPEED_RATIO

#: The counted step's heavy ops may take at most this share of the step: the count's own step runs
#: slower than the others (a Python call per op), so a share read above it is the count's, not the step's.
MOST_OF_STEP = 0.95


def heavy_share(ev):
    """(share of the step the timed matmuls, convolutions and attention took, step seconds), or
    None where the step's ops were not timed. The step is the shorter of the timed iteration's own
    wall time and the measured steps' (throughput) step: the timed iteration also pays its mode's
    call per op, and the mean step on a busy machine holds moments the timed ops did not see."""
    counted = ev.counted_step or {}
    seconds = counted.get("seconds_by_op") or {}
    steps = [s for s in (counted.get("step_s"), counted.get("timed_s")) if s]
    if not seconds or not steps or str(counted.get("device") or "cpu").startswith("cuda"):
        return None
    step = min(steps)
    return min(sum(seconds.values()) / step, MOST_OF_STEP), step


def estimate(ev):
    """((central, low, high) speed-up, the estimate's inputs in words), or (None, why not)."""
    found = heavy_share(ev)
    if found is None:
        return None, "the counted step's ops were not timed"
    share, step = found
    ratio = CPU_BF16_SPEED_RATIO

    def gain(r):
        return 1.0 / (1.0 - share + share / r)

    central, low, high = gain(ratio.value), gain(ratio.low), gain(ratio.high)
    words = (f"the counted step's matmuls, convolutions and attention took {share:.0%} of the "
             f"{step * 1e3:.0f} ms step; in bf16 with autocast's casts such ops ran {ratio.low:g}-{ratio.high:g}x "
             "as fast on measured programs on this kind of CPU, and the rest of the step stays float32")
    return (central, low, high), words

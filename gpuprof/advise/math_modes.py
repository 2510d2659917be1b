"""What changing a GPU step's math mode buys (mixed precision, TF32), from what the run counted:
the step's FLOPs by op family (matmuls, convolutions, attention), the ops it dispatched, its step
time, and the rates each family reached in each mode on a real GPU.

The step now: each family's counted FLOPs take FLOPs / (share of the data sheet's peak reached x
that peak) of the step, between the family's lowest and highest measured share (at most the step
itself). After the change each family's time shrinks by the ratio of its rates in the two modes,
measured shape by shape on the same GPU (a matmul that ran at 76% of FP32's peak runs at about 70% of
BF16's). The rest of the step (element-wise ops, norms, the loss, the optimizer, the host's own work
between launches) is left as it is: autocast keeps softmax, norms and losses in float32. The step
cannot get shorter than the host takes to launch its ops (the counted ops times a host cost per op).

The low end takes the least time in these families now (their highest share of the peak), the
smaller ratio and the dearer host; the high end the most time (capped at the step), the larger ratio
and the cheaper host. Where the GPU idled part of the steps with the data ready, the host sets their
pace and the low end is no gain (HOST_PACED_UTIL). Every figure below was measured on one NVIDIA H200
(priors gpu-rates.*): the same GH100 chip as an H100 SXM; for other GPUs the ratios stand in with
their own data-sheet peaks.
Checked on whole programs it was not fitted to: a GPT in float32 (mixed precision measured 5.68x and
4.08x by `gpuprof try`, TF32 3.10x) and a ResNet-18 (bf16 autocast 1.16x in a bare loop, 0.87x in its
program with DataLoader workers), docs/validation.md."""

from gpuprof.advise.model import TINY
from gpuprof.priors.gpu_rates import H200_SHARE_OF_PEAK, H200_SPEED_RATIO, HOST_COST_PER_OP, HOST_PACED_BELOW
from gpuprof.judge.sections.efficiency import CONV_OPS, math_modes
from gpuprof.judge.sections.peaks import known_peak

#: Share of the data sheet's dense peak each family reached, (lowest, highest) over the measured
#: shapes, and how many times faster a family runs in the new mode than in the old, (low, high), shape
#: by shape; TF32 does not change attention's kernels as torch picks them (memory-efficient in fp32).
SHARE_OF_PEAK = H200_SHARE_OF_PEAK.value
SPEED_RATIO = H200_SPEED_RATIO.value
#: Host seconds per dispatched aten op in a training step: (a bare eager launch, the least an op
#: costs the host; an op of a small MLP's Adam step, autograd included).
HOST_S_PER_OP = HOST_COST_PER_OP.ends()
#: Under this NVML utilisation over the steps (with the data ready) the GPU waits for the host's
#: launches: a step queued without waiting takes the longer of the host's and the device's time, so a
#: device idle 10% of it is already not the limit, and a faster mode may buy nothing at all. The low
#: end is then 1.0x, and the high end keeps at least the idle share of the step as the host's.
HOST_PACED_UTIL = HOST_PACED_BELOW.value
#: A GPU whose SM clock while busy was below this share of its top clock (a power cap, heat, a
#: simulated device in slow motion) computes at its peaks times that share: rates scale with the clock.
CLOCK_NOTED = 0.95
#: "With the data ready": the loop waits for data less than this share of its steps.
DATA_READY_WAIT = 0.1
#: Counted FLOPs in a TFLOP, the data sheets' unit.
FLOPS_PER_TFLOP = 1e12
#: The power that takes a square root: the central estimate is the geometric middle of its ends
#: (kept a power: math.sqrt can round the last bit differently).
SQUARE_ROOT = 0.5
#: A family below this share of the counted FLOPs goes unnamed in the estimate's words.
LEAST_SHARE_NAMED = 0.01
#: Times under this many seconds are written to a tenth of a millisecond.
TENTHS_BELOW_S = 0.01
MS = " ms"          # the unit times are written in


def family(op: str) -> str:
    if op in CONV_OPS:
        return "conv"
    return "attention" if "attention" in op else "matmul"


def estimate(ev, target: str, model: dict):
    """((central, low, high) speed-up, the estimate's inputs in words) of running the counted step's
    families in `target` ("BF16", "FP16" under autocast; "TF32" for float32 matmuls), or (None, the
    reason) where the run lacks a figure it needs."""
    found, reason = _model(ev, target, model)
    if found is None:
        return None, reason
    low, high = found["ends"]
    return ((low * high) ** SQUARE_ROOT, low, high), _words(found, target)


def _words(found: dict, target: str) -> str:
    """The families' share of the counted FLOPs and of the step now and after, and the host's floor."""
    step = found["step"]
    total = sum(found["flops"].values()) or 1
    parts = ", ".join(f"{flops / total:.0%} {WORDS[kind]}" for kind, flops in
                      sorted(found["flops"].items(), key=lambda item: -item[1])
                      if flops / total >= LEAST_SHARE_NAMED)
    now, after = found["now"], found["after"]
    clocked = f" (at the {found['clock']:.0%} of its top SM clock the GPU ran at while busy)" \
        if found.get("clock", 1.0) < CLOCK_NOTED else ""
    text = (f"the counted step's FLOPs are {parts}: at the rates each reached on an H200{clocked} they take "
            f"{_span(now)} of the {_ms(step)} step, and would take {_span(after)} in {target}")
    if found["paced"] is not None:
        text += (f"; but the GPU idled {1 - found['paced']:.0%} of the steps with the data ready: the host's "
                 "launches may set their pace, and a faster mode then buys nothing")
    elif found["host"]:
        text += f"; the host's {found['ops']} ops a step take it at least {_ms(found['host'][0])} to launch"
    return text


WORDS = {"matmul": "matmuls", "conv": "convolutions", "attention": "attention"}


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.1f}{MS}" if seconds < TENTHS_BELOW_S else f"{seconds * 1e3:.0f}{MS}"


def _span(pair) -> str:
    low, high = _ms(pair[0]), _ms(pair[1])
    return low if low == high else f"{low.removesuffix(MS)}-{high}"


def _model(ev, target: str, model: dict):
    counted = ev.counted_step or {}
    step = counted.get("step_s")
    by_op = counted.get("by_op") or {}
    if not (ev.gpu and step and by_op and ev.gpu_name):
        return None, "the step's FLOPs or the GPU were not counted"
    now: dict[tuple[str, str], float] = {}
    for op, flops in by_op.items():
        modes = math_modes({op: flops}, counted.get("dtype") or "float32", model, counted.get("device") or "cuda")
        for mode, count in modes.items():
            key = (family(op), mode)
            now[key] = now.get(key, 0) + count
    sheet = {mode: (known_peak(ev.gpu_name, mode) or {}).get("tflops") for _, mode in now}
    if not now or not all(sheet.values()):
        return None, f"no data-sheet peak for the {ev.gpu_name} in every mode the step ran"
    clock = ev.gpu_clock_share if ev.gpu_clock_share and ev.gpu_clock_share < CLOCK_NOTED else 1.0
    # a data sheet's peak is at the top clock (every mode has one: checked above)
    peaks = {mode: tflops * clock for mode, tflops in sheet.items() if tflops}
    spans = []
    for (kind, mode), flops in now.items():
        new_mode = _new_mode(kind, mode, target)
        ratio = (1.0, 1.0) if new_mode == mode else SPEED_RATIO.get((kind, mode, new_mode))
        if ratio is None:
            return None, f"no measured ratio for {kind}s from {mode} to {new_mode}"
        lowest, highest = SHARE_OF_PEAK[kind][mode]
        rate_high, rate_low = highest * peaks[mode] * FLOPS_PER_TFLOP, lowest * peaks[mode] * FLOPS_PER_TFLOP
        spans.append(((flops / rate_high, flops / rate_low), ratio))
    ops = counted.get("ops") or 0
    util = ev.gpu_util
    paced = util is not None and util < HOST_PACED_UTIL and (ev.wait_share or 0.0) < DATA_READY_WAIT
    ends, in_now, in_after, host = [], [], [], []
    for end, per_op in ((0, HOST_S_PER_OP[1]), (1, HOST_S_PER_OP[0])):
        busy = sum(seconds[end] for seconds, _ in spans)
        scale = min(1.0, step / busy) if busy else 1.0      # the families take at most the step
        families = busy * scale
        after = sum(seconds[end] * scale / ratio[end] for seconds, ratio in spans)
        floor = ops * per_op
        if paced:
            floor = max(floor, step if end == 0 else (1.0 - util) * step)
        ends.append(step / max(step - families + after, floor, TINY))
        in_now.append(families)
        in_after.append(after)
        host.append(floor)
    flops_by_kind: dict[str, float] = {}
    for (kind, _), flops in now.items():
        flops_by_kind[kind] = flops_by_kind.get(kind, 0) + flops
    return {"ends": (min(ends), max(ends)), "step": step, "clock": clock, "flops": flops_by_kind, "now": tuple(sorted(in_now)),
            "after": tuple(sorted(in_after)), "ops": ops, "host": tuple(sorted(host)) if ops else None,
            "paced": util if paced else None}, None


def _new_mode(kind: str, mode: str, target: str) -> str:
    """The mode a family runs in after the change: autocast moves every family to its dtype; TF32
    moves float32 matmuls (convolutions follow cuDNN's own flag, attention its kernels)."""
    if target == "TF32":
        return "TF32" if kind == "matmul" and mode == "FP32" else mode
    return target

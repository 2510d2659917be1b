"""How far a run is from its device's limit and what its time costs: FLOPs per step, the peak and
where it comes from, model FLOPs utilisation (MFU), energy per step and per sample, GPU-hours and
their idle part, and with a price the cost of the run, of its idle part and what each ranked fix
would save. Pure: the counted step (a `flops` event), the steps, the GPU figures and the inputs the
run settled (the user's peak and price, a measured peak, host energy) in, one section out."""

from gpuprof.stats.digits import FINE_DIGITS, REPORT_DIGITS
from gpuprof.judge.sections.peaks import dtype_key, known_peak

UNKNOWN_PEAK = {"tflops": None, "source": "unknown"}
#: A transformer's training FLOPs per token: 6 per parameter (2 forward, 4 backward), and 12 per
#: layer, head, head dimension and context position for attention's scores and values.
PARAM_FLOPS = 6
ATTENTION_FLOPS = 12
TERA = 1e12
SIGNIFICANT_FIGURES = 6     # of TFLOPS and MFU (a CPU's MFU can be a few parts in a hundred thousand)
SECONDS_PER_HOUR = 3600.0


def efficiency_section(flops_events: list, steps: dict, job_gpus: list, inputs: dict, advice: list,
                       duration_s, model: dict = None):
    """The `efficiency` section, or None where nothing in it is known (no count, no energy, no price)."""
    inputs = inputs if isinstance(inputs, dict) else {}
    price = inputs.get("price_per_hour")
    inputs = dict(inputs, price_per_hour=price if isinstance(price, (int, float)) and price >= 0 else None)
    event = _stepping(flops_events, steps)
    # Throughput: the training window over its steps. A median step understates it wherever steps
    # are uneven: a loop that queues kernels without waiting has fast steps and a slow one that
    # syncs (on an H200, a compute loop read MFU 2270% over its median step; docs/validation.md).
    step_s = throughput_step(steps, event)
    section = {"step_s": step_s, **counted(event)}
    if section.get("flops_per_step"):
        section["dtype"] = _main_dtype(event)
        section["peak"] = resolve_peak(inputs.get("peak"), job_gpus, section["dtype"], model, event.get("device"),
                                       by_op=(section.get("counted") or {}).get("by_op"))
        section.update(utilisation(section["flops_per_step"], step_s, section["peak"].get("tflops")))
    section["energy"] = energy(job_gpus, steps, inputs.get("host_energy"), duration_s)
    section.update(hours_and_money(job_gpus, steps, duration_s, inputs.get("price_per_hour"), advice))
    if not event and section["energy"].get("j_per_step") is None and inputs.get("price_per_hour") is None:
        return None
    return section


def throughput_step(steps: dict, event: dict):
    """The mean step, less what counting FLOPs added to the one step it counted (a Python call per
    op): the step time MFU divides by. The median where the mean is unknown."""
    mean, median, measured = steps.get("mean_step_s"), steps.get("median_step_s"), steps.get("measured")
    if not mean:
        return median
    counted_s = (event or {}).get("seconds")
    if counted_s and median and measured and counted_s > median:
        return max(mean - (counted_s - median) / measured, median if mean >= median else mean)
    return mean


def counted_step(flops_events: list, steps: dict):
    """What the model-side advice weighs a math mode's change by: the counted step's FLOPs by op,
    their dtype, the ops it dispatched, its device, the wall time the ops with a FLOP formula took in a
    later, settled iteration (`seconds_by_op`, on a CPU), and the step time they share; None uncounted."""
    event = _stepping(flops_events, steps)
    timed: dict = next((e for e in _of_steps(flops_events, steps) if e.get("op_times")), {})
    if not event.get("flops") and not timed.get("seconds_by_op"):
        return None
    return {"by_op": event.get("by_op") or {}, "dtype": _main_dtype(event), "ops": event.get("ops"),
            "device": event.get("device") or timed.get("device"), "step_s": throughput_step(steps, event),
            "seconds_by_op": timed.get("seconds_by_op") or {}, "timed_s": timed.get("seconds")}


def _of_steps(events: list, steps: dict) -> list:
    """The events of the process whose steps were measured, else all."""
    return [e for e in events or [] if e.get("pid") == steps.get("pid")] or list(events or [])


def _stepping(events: list, steps: dict) -> dict:
    """The count's event (not the later iteration's op times)."""
    mine = [e for e in _of_steps(events, steps) if not e.get("op_times")]
    counted_ones = [e for e in mine if e.get("flops")]
    return (counted_ones or mine or [{}])[0]


def counted(event: dict) -> dict:
    """The count's figures, its coverage, and the per-token convention beside it."""
    if not event:
        return {"flops_per_step": None, "counted": {"skipped": "no step was counted (fewer than three optimizer "
                                                               "steps of one model, or probes off)"}}
    if event.get("skipped"):
        return {"flops_per_step": None, "counted": {"skipped": event["skipped"]}}
    uncounted = event.get("uncounted") or {}
    out = {"flops_per_step": event.get("flops") or None,
           "counted": {"step": event.get("step"), "seconds": event.get("seconds"), "by_op": event.get("by_op") or {},
                       "uncounted": uncounted, "coverage": "partial" if uncounted else "complete",
                       "formula_errors": event.get("formula_errors") or 0,
                       **({"ops": event["ops"]} if event.get("ops") else {})}}
    convention = per_token_convention(event.get("transformer"))
    if convention is not None:
        out["transformer"] = convention
    return out


def per_token_convention(shape):
    """6N + 12·L·H·Q·T FLOPs per token (forward and backward), and per step for the step's tokens."""
    if not shape or not shape.get("seq_len"):
        return None
    n, layers, heads, head_dim, length = (shape["params"], shape["layers"], shape["heads"], shape["head_dim"],
                                          shape["seq_len"])
    per_token = PARAM_FLOPS * n + ATTENTION_FLOPS * layers * heads * head_dim * length
    return {"params": n, "layers": layers, "heads": heads, "head_dim": head_dim, "seq_len": length,
            "tokens_per_step": shape.get("tokens"), "flops_per_token": per_token,
            "flops_per_step": per_token * shape["tokens"] if shape.get("tokens") else None}


def _main_dtype(event: dict) -> str:
    by_dtype: dict = event.get("by_dtype") or {}
    return max(by_dtype, key=lambda d: by_dtype[d]) if by_dtype else "float32"


#: Convolutions' ops in the FLOP count (`counted.by_op`): cuDNN's math mode is their own.
CONV_OPS = {"convolution", "convolution_backward", "_convolution", "cudnn_convolution", "conv2d", "conv1d", "conv3d"}


def math_modes(by_op: dict | None, dtype: str, model: dict | None, device) -> dict:
    """{peak key: counted FLOPs} by the math mode each op ran in. A float32 model on a GPU runs its
    convolutions in TF32 when cuDNN allows it (`torch.backends.cudnn.allow_tf32`, on by default) and
    its matmuls in TF32 only when torch allows that (off by default): a float32 conv net's peak is
    TF32's, not FP32's (on an H200 its MFU read 123% of the FP32 peak)."""
    flags = (model or {}).get("flags") or {}
    cuda = str(device or "").startswith("cuda")
    modes: dict = {}
    for op, flops in (by_op or {}).items():
        conv = op in CONV_OPS
        tf32 = cuda and bool(flags.get("cudnn_allow_tf32", True) if conv else flags.get("allow_tf32"))
        key = dtype_key(dtype, tf32)
        modes[key] = modes.get(key, 0) + (flops or 0)
    return {key: flops for key, flops in modes.items() if flops}


def resolve_peak(settled, job_gpus: list, dtype: str, model: dict | None, device, by_op: dict = None) -> dict:
    """The peak the run settled (the user's, or one measured in the same math mode), else the
    data-sheet table's for the job's GPU, else unknown; always with its source and the dtype it is
    for. Where the counted ops ran in several math modes (a float32 model's TF32 convolutions beside
    its FP32 matmuls), the data sheet's figures are weighted by each mode's FLOPs (the peak that would
    run the counted work in the time each mode's peak gives it)."""
    cuda = str(device or "").startswith("cuda")
    modes = math_modes(by_op, dtype, model, device)
    tf32 = bool(((model or {}).get("flags") or {}).get("allow_tf32")) and cuda
    key = max(modes, key=lambda m: modes[m]) if modes else dtype_key(dtype, tf32)
    if isinstance(settled, dict) and settled.get("tflops"):
        given = str(settled.get("source") or "").startswith("given")
        if given or (len(modes) <= 1 and (settled.get("dtype") or key) == key):
            return dict(settled, dtype=settled.get("dtype") or key)
    if cuda:
        names = [g.get("name") for g in job_gpus or [] if g.get("name")]
        if names and len(modes) > 1:
            found = {mode: known_peak(names[0], mode) for mode in modes}
            if all(found.values()):
                seconds = sum(flops / found[mode]["tflops"] for mode, flops in modes.items())
                label = found[key]["source"].rsplit(" dense ", 1)[0]
                parts = ", ".join(f"{mode} {flops / sum(modes.values()):.0%}" for mode, flops in
                                  sorted(modes.items(), key=lambda item: -item[1]))
                return {"tflops": round(sum(modes.values()) / seconds, 1), "dtype": key,
                        "source": f"{label} dense, by math mode over the counted FLOPs ({parts})"}
        listed = known_peak(names[0], key) if names else None
        if listed is not None:
            return dict(listed, dtype=key)
    return dict(UNKNOWN_PEAK, dtype=key)


def utilisation(flops: int, step_s, peak_tflops) -> dict:
    """Achieved TFLOPS over the mean step (the training window over its steps) and its share of the
    peak (MFU)."""
    if not flops or not step_s:
        return {"achieved_tflops": None, "mfu": None}
    achieved = flops / step_s / TERA
    return {"achieved_tflops": _figures(achieved),
            "mfu": _figures(achieved / peak_tflops) if peak_tflops else None}


def _figures(value: float, digits: int = SIGNIFICANT_FIGURES) -> float:
    """`value` to `digits` significant figures (a CPU's MFU can be a few parts in a hundred thousand)."""
    return float(f"{value:.{digits}g}")


def energy(job_gpus: list, steps: dict, host: dict | None, duration_s) -> dict:
    """Joules per step and per sample: NVML's total-energy counter over the measured steps on a
    GPU; on a CPU-only run, RAPL over the run at its mean power; else not measured."""
    step_s, measured, batch = steps.get("median_step_s"), steps.get("measured"), steps.get("batch_size")
    drawn = [g for g in job_gpus or [] if g.get("energy_j") is not None]
    per_step, source = None, None
    if drawn and step_s:
        total = sum(g["energy_j"] for g in drawn)
        if all(g.get("figures_over") == "steps" for g in drawn) and measured:
            per_step, source = total / measured, "NVML total energy over the measured steps"
        elif duration_s:
            per_step, source = total / duration_s * step_s, "NVML total energy over the run, at its mean power"
    elif not job_gpus and isinstance(host, dict) and host.get("joules") and host.get("seconds") and step_s:
        per_step = host["joules"] / host["seconds"] * step_s
        source = f"RAPL ({host.get('zones') or 'package'}) over the run, at its mean power"
    if per_step is None:
        return {"j_per_step": None, "j_per_sample": None, "source": "not measured"}
    return {"j_per_step": round(per_step, REPORT_DIGITS),
            "j_per_sample": round(per_step / batch, FINE_DIGITS) if batch else None, "source": source}


def hours_and_money(job_gpus: list, steps: dict, duration_s, price, advice: list) -> dict:
    """GPU-hours (machine-hours on a CPU-only run), the idle share of the GPUs' wall time, and with
    a price per GPU-hour the cost of the run, of its idle part, and each fix's saving at its estimate."""
    if not duration_s:
        return {}
    count = len(job_gpus or []) or 1
    hours = count * duration_s / SECONDS_PER_HOUR
    busy = [g.get("util_gpu_run") for g in job_gpus or [] if g.get("util_gpu_run") is not None]
    idle = (1.0 - sum(busy) / len(busy)) if busy else None
    out = {"hours": round(hours, FINE_DIGITS), "hours_of": "GPU" if job_gpus else "machine", "devices": count,
           "idle_share": round(min(max(idle, 0.0), 1.0), REPORT_DIGITS) if idle is not None else None,
           "idle_hours": round(hours * min(max(idle, 0.0), 1.0), FINE_DIGITS) if idle is not None else None,
           "price_per_hour": price}
    if price is None:
        return out
    cost = hours * price
    window = steps.get("window_s")
    stepping = cost * min(window / duration_s, 1.0) if window else cost
    out.update(cost=round(cost, FINE_DIGITS),
               idle_cost=round(out["idle_hours"] * price, FINE_DIGITS) if idle is not None else None,
               savings=[{"fix": item.get("id"), "speedup": item["estimated_speedup"],
                         "saving": round(stepping * (1.0 - 1.0 / item["estimated_speedup"]), FINE_DIGITS)}
                        for item in advice or [] if (item.get("estimated_speedup") or 0) > 1.0])
    return out

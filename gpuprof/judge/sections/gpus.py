"""Per-device summaries of the NVML sampler's series, and the notes they justify.

What each figure is (NVML API reference): `util_gpu` is nvmlUtilization_t.gpu, the share of NVML's
sample period (1/6 s to 1 s) in which at least one kernel ran, however few SMs it used; `sm_active`
is GPM's SM_UTIL, the share of SMs that were busy; `sm_occupancy` GPM's warps resident over the most
the SMs hold. Figures are taken over the samples inside the measured steps (start-up, imports and
the tail left out), and over the whole run as a second figure. The SM clock and the clock-event
reasons are read over the samples in which the device was busy: an idle GPU drops its clock, and a
reason flagged while idle slows nothing down."""

from gpuprof.stats.sizes import BYTES_TO_MB

MIN_WINDOW_SAMPLES = 2      # samples inside the measured steps for a figure over them
#: How far back one utilisation reading looks: NVML's sample period, 200 ms on an H200 (its
#: nvmlDeviceGetSamples, docs/validation.md; NVML's reference gives 1/6 s to 1 s by product). A reading
#: taken sooner than this after the steps begin still averages time before them (start-up, idle).
NVML_PERIOD_S = 0.2
#: Clock-event reasons that slow a busy GPU down (idle, application clocks and sync boost do not).
SLOWDOWNS = {"sw_power_cap": "the software power cap", "hw_slowdown": "a hardware slowdown",
             "sw_thermal_slowdown": "software thermal slowdown", "hw_thermal_slowdown": "hardware thermal slowdown",
             "hw_power_brake_slowdown": "the hardware power brake"}
SLOWDOWN_BITS = {"sw_power_cap": 0x4, "hw_slowdown": 0x8, "sw_thermal_slowdown": 0x20,
                 "hw_thermal_slowdown": 0x40, "hw_power_brake_slowdown": 0x80}
THERMAL = ("sw_thermal_slowdown", "hw_thermal_slowdown")
SLOWDOWN_HELD = 0.1         # share of the busy samples a reason must hold to be named
SLOWER_CLOCK = 0.9          # a busy mean SM clock below this share of the top clock is a slowdown
#: Utilisation from which a low SM activity is worth a note, and "low": under this share of it.
KERNELS_RUN = 0.6
FEW_SMS = 0.5


def gpu_label(gpu: dict) -> str:
    """"GPU 2", or "GPU 2 MIG 3" for GPU instance 3 on GPU 2."""
    mig = gpu.get("mig") or {}
    base = f"GPU {gpu.get('index')}"
    return f"{base} MIG {mig['gpu_instance_id']}" if mig.get("gpu_instance_id") is not None else base


def summarize_gpus(gpu: dict, window: tuple = None) -> tuple:
    """(per-device summaries, status) from the NVML sampler's record; `window` is the measured
    steps' (start, end) on the sampler's clock (CLOCK_MONOTONIC), or None."""
    summaries = [_summary(device, window) for device in gpu.get("gpus", [])]
    status = {"available": bool(gpu.get("available")) and bool(summaries),
              "reason": gpu.get("reason"), "driver": gpu.get("driver")}
    return summaries, status


def _summary(device: dict, window) -> dict:
    columns = (device.get("series") or {}).get("columns") or {}
    times = columns.get("t") or []
    every = range(len(times))

    def column(name):
        values = list(columns.get(name) or [])
        return values + [None] * (len(times) - len(values))

    inside = []
    if window and window[0] is not None and window[1] is not None:
        inside = [i for i in every if times[i] is not None and window[0] + NVML_PERIOD_S <= times[i] <= window[1]]
    rows = inside if len(inside) >= MIN_WINDOW_SAMPLES else list(every)
    util, busy_gpm, sm = column("util_gpu"), column("gpm_busy"), column("sm_active")
    source = "nvml"
    if _mean(util, every) is None and _mean(busy_gpm, every) is not None:
        util, source = busy_gpm, "gpm"     # a MIG instance: NVML gives no utilisation, GPM does
    busy = [i for i in rows if (util[i] or 0) > 0 or (sm[i] or 0) > 0 or (busy_gpm[i] or 0) > 0]
    used = [v for v in column("mem_used") if v is not None]
    summary = {
        "index": device.get("index"),
        "name": device.get("name"),
        "uuid": device.get("uuid"),
        "pci_bus_id": device.get("pci_bus_id"),
        "util_gpu": _mean(util, rows),
        "util_gpu_run": _mean(util, every),
        "util_source": source,
        "figures_over": "steps" if rows is inside else "run",
        "util_memory": _mean(column("util_memory"), rows),
        "sm_active": _mean(sm, rows),
        "sm_occupancy": _mean(column("sm_occupancy"), rows),
        "mem_used_max_bytes": max(used) if used else None,
        "mem_total_bytes": device.get("mem_total"),
        "pcie_rx_mb_s": _scale(_mean(column("pcie_rx_bps"), rows), BYTES_TO_MB),
        "pcie_tx_mb_s": _scale(_mean(column("pcie_tx_bps"), rows), BYTES_TO_MB),
        "sm_clock_mhz": _mean(column("sm_clock_mhz"), busy),
        "sm_clock_max_mhz": device.get("sm_clock_max_mhz"),
        "busy_samples": len(busy),
        "clock_events": device.get("clock_events", {}),
        "slowdowns": _slowdowns(column("clock_reasons"), busy, device.get("clock_events") or {}, len(times)),
        "energy_j": _energy(column("energy_mj"), rows),
        "job_memory_bytes": sum(device.get("job_memory", {}).values()) or None,
        "processes": device.get("processes") or {},
        "samples": len(times),
    }
    if device.get("mig"):
        summary["mig"] = device["mig"]
    if device.get("lost"):
        summary["lost"] = device["lost"]
        lost_at = device.get("lost_at")
        first = next((t for t in times if t is not None), None)
        summary["lost_after_s"] = (round(max(lost_at - first, 0.0), 3) if lost_at is not None and first is not None
                                   else None)
    summary["label"] = gpu_label(summary)
    return summary


def _mean(values, rows):
    picked = [values[i] for i in rows if values[i] is not None]
    return sum(picked) / len(picked) if picked else None


def _scale(value, factor):
    return value * factor if value is not None else None


def _energy(values, rows):
    """Joules the device drew over `rows` (the counter's growth), None without two readings."""
    readings = [values[i] for i in rows if values[i] is not None]
    return round((readings[-1] - readings[0]) / 1000.0, 3) if len(readings) >= 2 else None


def _slowdowns(reasons: list, busy: list, events: dict, samples: int) -> dict:
    """{reason: share of the busy samples it was set in} for the reasons that slow a GPU down. A
    record without per-sample reasons (an older gpuprof) gives shares of all its samples."""
    if not any(r is not None for r in reasons):
        if not samples:
            return {}
        return {name: round(min(events[name] / samples, 1.0), 3) for name in SLOWDOWNS if events.get(name)}
    seen = [reasons[i] for i in busy if reasons[i] is not None]
    if not seen:
        return {}
    shares = {name: sum(1 for r in seen if r & bit) / len(seen) for name, bit in SLOWDOWN_BITS.items()}
    return {name: round(share, 3) for name, share in shares.items() if share > 0}


def _noted(gpus: list) -> list:
    """The job's devices where the job's are known, else all."""
    gpus = gpus or []
    marked = [g for g in gpus if g.get("job")]
    return marked or [g for g in gpus if g.get("job") is None]


def slowdown(gpu: dict):
    """{label, clock_mhz, top_mhz, reasons: {reason: share of busy samples}} for a device that ran
    measurably below its top SM clock while busy with a slowdown reason held in a tenth of its busy
    samples; None otherwise (idle samples say nothing about it)."""
    top, mean = gpu.get("sm_clock_max_mhz"), gpu.get("sm_clock_mhz")
    held = {k: v for k, v in (gpu.get("slowdowns") or {}).items() if v >= SLOWDOWN_HELD and k in SLOWDOWNS}
    if not held or not top or mean is None or mean >= SLOWER_CLOCK * top:
        return None
    return {"label": gpu.get("label") or gpu_label(gpu), "clock_mhz": round(mean), "top_mhz": round(top),
            "reasons": dict(sorted(held.items(), key=lambda i: -i[1]))}


def slowdown_words(slow: dict) -> str:
    """'GPU 1 ran at 560 of its 792 MHz SM clock on average while busy (the software power cap 100%
    of its busy samples)'."""
    reasons = ", ".join(f"{SLOWDOWNS[k]} {v:.0%}" for k, v in slow["reasons"].items())
    return (f"{slow['label']} ran at {slow['clock_mhz']:.0f} of its {slow['top_mhz']:.0f} MHz SM clock on average "
            f"while busy ({reasons} of its busy samples)")


def slowdown_notes(gpus: list) -> list:
    """A device that ran measurably below its top SM clock while busy (`slowdown`)."""
    notes = []
    for gpu in _noted(gpus):
        slow = slowdown(gpu)
        if slow is None:
            continue
        held = slow["reasons"]
        check = " and ".join(part for part, wanted in (
            ("cooling (nvidia-smi -q -d TEMPERATURE)", any(k in THERMAL for k in held)),
            ("the power limit (nvidia-smi -q -d POWER)", any(k not in THERMAL for k in held))) if wanted)
        notes.append(f"{slowdown_words(slow)}: every step is slower for it; check {check}")
    return notes


def sm_activity_notes(gpus: list) -> list:
    """Kernels ran most of the time but kept few SMs busy: utilisation overstates the GPU's use."""
    notes = []
    for gpu in _noted(gpus):
        util, sm = gpu.get("util_gpu"), gpu.get("sm_active")
        if util is None or sm is None or util < KERNELS_RUN or sm >= FEW_SMS * util:
            continue
        occupancy = gpu.get("sm_occupancy")
        warps = f", {occupancy:.0%} warp occupancy" if occupancy is not None else ""
        notes.append(f"{gpu.get('label') or gpu_label(gpu)}: a kernel was running {util:.0%} of the time, but only "
                     f"{sm:.0%} of its SMs were active (SM activity, GPM{warps}): kernels run but occupy few SMs "
                     "(small kernels or batches, launch-bound work), so utilisation overstates how busy it is")
    return notes


def lost_notes(gpus: list) -> list:
    """Devices NVML stopped answering for: their figures end there, the others' go on."""
    notes = []
    for gpu in gpus or []:
        if not gpu.get("lost"):
            continue
        after = gpu.get("lost_after_s")
        when = f" after {after:.1f} s of sampling" if after is not None else " from the start"
        uuid = f" ({gpu['uuid']})" if gpu.get("uuid") else ""
        others = "; the other GPUs were sampled on" if any(not g.get("lost") for g in gpus) else ""
        notes.append(f"{gpu.get('label') or gpu_label(gpu)}{uuid} stopped answering NVML{when} ({gpu['lost']}): "
                     f"its figures end there{others}")
    return notes

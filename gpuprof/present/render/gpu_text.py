"""The GPU figures in words, shared by every renderer: what each number measures and over which span."""

from typing import Mapping, Optional, Sequence

from gpuprof.present.render.units import pct, rate, size


def gpu_name(gpu: dict) -> str:
    """"GPU 0 NVIDIA H100 80GB HBM3", marked when it is one of the job's GPUs among others."""
    label = gpu.get("label") or f"GPU {gpu.get('index')}"
    mark = " (job)" if gpu.get("job") else ""
    return f"{label} {gpu.get('name') or ''}".rstrip() + mark


def utilisation(gpu: dict) -> str:
    """NVML's utilisation (a kernel running), over the measured steps and the whole run."""
    source = " (GPM: NVML gives none on a MIG instance)" if gpu.get("util_source") == "gpm" else ""
    if gpu.get("figures_over") == "steps":
        return (f"utilisation {pct(gpu.get('util_gpu'))} over the measured steps, {pct(gpu.get('util_gpu_run'))} "
                f"over the run{source}")
    return f"utilisation {pct(gpu.get('util_gpu'))} over the run{source}"


def utilisation_short(gpu: dict) -> str:
    """"95% over the measured steps (60% over the run)", for a table cell."""
    gpm = " (GPM)" if gpu.get("util_source") == "gpm" else ""
    if gpu.get("figures_over") == "steps":
        return f"{pct(gpu.get('util_gpu'))} over the measured steps ({pct(gpu.get('util_gpu_run'))} over the run){gpm}"
    return f"{pct(gpu.get('util_gpu'))} over the run{gpm}"


def sm_activity(gpu: dict):
    """GPM's SM activity and warp occupancy, or None where the GPU has no GPM."""
    if gpu.get("sm_active") is None:
        return None
    occupancy = gpu.get("sm_occupancy")
    return f"SM activity (GPM) {pct(gpu['sm_active'])}" + (
        f", warp occupancy {pct(occupancy)}" if occupancy is not None else "")


def gpu_phrases(gpu: dict) -> list:
    """One device's figures, in the order a reader checks them."""
    events = ", ".join(k for k in gpu.get("clock_events", {}) if k != "gpu_idle") or "none"
    clock = "n/a" if gpu.get("sm_clock_mhz") is None else f"{gpu['sm_clock_mhz']:.0f} MHz while busy"
    parts = [utilisation(gpu)]
    activity = sm_activity(gpu)
    if activity:
        parts.append(activity)
    parts += [f"memory busy {pct(gpu.get('util_memory'))}",
              f"memory {size(gpu.get('mem_used_max_bytes'))} of {size(gpu.get('mem_total_bytes'))}",
              f"PCIe in {rate(gpu.get('pcie_rx_mb_s'))}, out {rate(gpu.get('pcie_tx_mb_s'))}",
              f"SM clock {clock}", f"clock events: {events}"]
    if gpu.get("energy_j") is not None:
        parts.append(f"{gpu['energy_j']:.0f} J drawn")
    if gpu.get("uuid"):
        parts.append(gpu["uuid"])
    if gpu.get("lost"):
        parts.append(f"lost: {gpu['lost']}")
    return parts


def job_gpus_line(status: Mapping, gpus: Optional[Sequence] = ()):
    """Which GPUs are the job's, by index and UUID, and how gpuprof knows; None without GPUs."""
    chosen = status.get("job_gpus") or {}
    if not chosen:
        return None
    uuids = {g.get("label"): g.get("uuid") for g in gpus or () if g.get("uuid")}
    named = [f"{label} ({uuids[label]})" if label in uuids else label for label in chosen.get("labels") or [] if label]
    return f"{', '.join(named) or 'none'}: {chosen.get('words')}"


def rank_gpus_text(row: dict) -> str:
    """The GPUs a rank opened, with their utilisation: "GPU 1 (93%)"; "?" when unknown."""
    gpus = row.get("gpus") or []
    if not gpus:
        return "?"
    return ", ".join(f"{g.get('label')} ({pct(g.get('util_gpu'))})" for g in gpus)

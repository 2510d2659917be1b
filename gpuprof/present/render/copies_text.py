"""The host-to-device copies in words, shared by every renderer.

Copy time is the copies' device time (CUDA events), apart from the host's wait for the kernels
queued before a blocking copy, which is time the device was busy, not copying. Only the training
process's copies inside the measured steps count; model moves and start-up copies, and other
processes' copies, are named apart (docs/how-it-works.md, "Copy time is device time")."""

from typing import Mapping, Optional

from gpuprof.present.render.units import pct, plural, seconds, size

WAIT_LABEL = "waiting for the device"


def copy_time(copies: Mapping) -> str:
    """"61.2 ms of device time, 7.6% of step time", with how the time was obtained."""
    share = f", {pct(copies['share'], 1)} of step time" if copies.get("share") is not None else ""
    if copies.get("basis") == "host":
        return f"{seconds(copies.get('seconds'))} of host time (no copy was timed on the device){share}"
    if copies.get("basis") == "device":
        return f"{seconds(copies.get('seconds'))} of device time{share}{_estimated(copies)}"
    return f"{seconds(copies.get('seconds'))}{share}"          # a report from before copies had a basis


def _estimated(copies: Mapping) -> str:
    estimated = copies.get("estimated") or 0
    if not estimated:
        return ""
    rate = f" ({size(copies['bytes_per_s'])}/s)" if copies.get("bytes_per_s") else ""
    return f"; {estimated} of {copies.get('count')} estimated from the timed copies' throughput{rate}"


def copies_line(copies: Mapping) -> str:
    """The copies in the measured steps: how many, how much, from which memory, how long."""
    return (f"{plural(copies['count'], 'copy', 'copies')} in the measured steps, {size(copies.get('bytes'))} "
            f"({size(copies.get('pageable_bytes'))} from pageable memory): {copy_time(copies)}")


def device_wait_line(copies: Mapping):
    """The host's wait for the device inside blocking copies, or None when there was none."""
    wait = copies.get("device_wait_s")
    if not wait:
        return None
    wait_share = copies.get("device_wait_share")
    share = f", {pct(wait_share, 1)} of step time" if wait_share is not None else ""
    return (f"{seconds(wait)}{share}: blocking copies held the host until the kernels queued before them were "
            "done (the device was busy: not copy time)")


def outside_line(copies: Mapping):
    """Copies before the first measured step (model moves, start-up) or after the last, or None."""
    outside = copies.get("outside_steps") or {}
    if not outside.get("count"):
        return None
    return (f"{plural(outside['count'], 'copy', 'copies')}, {size(outside.get('bytes'))} before the measured steps "
            "(model moves, start-up) or after them: left out of the step's figures")


def others_line(copies: Mapping):
    """Copies made by processes other than the training one, or None."""
    others = copies.get("other_processes") or {}
    if not others.get("count"):
        return None
    return (f"{plural(others['count'], 'copy', 'copies')}, {size(others.get('bytes'))} by "
            f"{plural(others.get('processes') or 0, 'other process', 'other processes')}: not counted")


def ranks_line(copies: Mapping):
    """Each rank's copy share and device wait against its own steps, or None without ranks."""
    ranks = copies.get("ranks") or []
    if not ranks:
        return None
    return "; ".join(f"rank {r.get('rank')}: copies {pct(r.get('share'), 1)}, waiting for the device "
                     f"{pct(r.get('device_wait_share'), 1)}" for r in ranks) + " (each of its own step time)"


def copies_cell(copies: Mapping) -> str:
    """"7.6% of step time (device time)", short enough for a table cell."""
    basis = f" ({copies['basis']} time)" if copies.get("basis") else ""
    if copies.get("share") is not None:
        return f"{pct(copies['share'], 1)} of step time{basis}"
    return f"{seconds(copies.get('seconds'))}{basis}"


def copies_rows(copies: Optional[Mapping]) -> list:
    """[(label, text)] for a table; empty without copies in the measured steps."""
    copies = copies or {}
    rows = []
    if copies.get("count"):
        rows.append(("copies to GPU", copies_line(copies)))
    for label, text in ((WAIT_LABEL, device_wait_line(copies) if copies.get("count") else None),
                        ("per rank", ranks_line(copies)),
                        ("outside the steps", outside_line(copies)),
                        ("other processes", others_line(copies))):
        if text:
            rows.append((label, text))
    return rows

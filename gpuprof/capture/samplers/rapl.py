"""The host's energy counters (Intel RAPL through powercap): read at a run's start and end by the
supervisor, so that a CPU-only run can state its energy. Unreadable counters (most containers,
non-root since the 2020 RAPL access change) give None: "not measured"."""

import glob
import os

ZONES = "/sys/class/powercap/intel-rapl:*"


def read(pattern: str = ZONES):
    """{zone name: (microjoules, wrap range)} for the top-level package zones, or None."""
    found = {}
    for zone in sorted(glob.glob(pattern)):
        if zone.count(":") > 1:           # sub-zones (core, uncore, dram) are inside their package
            continue
        try:
            with open(os.path.join(zone, "energy_uj")) as handle:
                energy = int(handle.read().strip())
            try:
                with open(os.path.join(zone, "max_energy_range_uj")) as handle:
                    wrap = int(handle.read().strip())
            except (OSError, ValueError):
                wrap = None
        except (OSError, ValueError):
            continue
        found[os.path.basename(zone)] = (energy, wrap)
    return found or None


def joules_between(first, last):
    """Joules drawn between two readings (a counter that wrapped once is unwrapped), or None."""
    if not first or not last:
        return None
    total = 0
    for zone, (start, wrap) in first.items():
        if zone not in last:
            return None
        end = last[zone][0]
        if end < start:
            if not wrap:
                return None
            end += wrap
        total += end - start
    return total / 1e6

"""NVML's utilisation in words that say what it measures.

nvmlDeviceGetUtilizationRates gives the share of its sample period in which at least one kernel
ran, however few SMs it used (NVML API reference,
"nvmlUtilization_t Struct Reference"): a GPU
running one small kernel at a time reads near 100%. So the words are "a kernel was running N% of
the time", never "busy", and GPM's SM activity (the share of SMs busy) goes beside it where the
GPU has GPM."""


def sm_activity(sm_active) -> str:
    """" (40% of its SMs active, GPM)", or "" without GPM."""
    return "" if sm_active is None else f" ({sm_active:.0%} of its SMs active, GPM)"


def kernel_time(util: float, sm_active=None, only: bool = False, where: str = "on the GPU") -> str:
    """"a kernel was running on the GPU 95% of the time (40% of its SMs active, GPM)"."""
    return f"a kernel was running {where} {'only ' if only else ''}{util:.0%} of the time{sm_activity(sm_active)}"

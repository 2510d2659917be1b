"""compute: the device is the limit; the input pipeline keeps up.

On a GPU the figure is NVML's utilisation over the measured steps: the share of time at least one
kernel ran, not how many SMs it kept busy (GPM's SM activity says that, where the GPU has it)."""

from gpuprof.analysis.bottleneck import FALLBACK, Bottleneck
from gpuprof.analysis.evidence import INPUT_BOUND
from gpuprof.analysis.rules import Finding, clamp, rounded, step_confidence

ID = "compute"


def evaluate(ev):
    wait = ev.wait_share or 0.0
    copy = ev.copy_share or 0.0
    share = clamp(1.0 - wait - copy)
    if ev.gpu:
        if ev.gpu_util is None or ev.gpu_util < 0.4:
            return None
        busy = clamp((ev.gpu_util - 0.4) / 0.5)
        device = f"a kernel was running on the GPU {ev.gpu_util:.0%} of the time{_sm_activity(ev)}"
    else:
        busy = clamp((ev.cores_busy or 0.0) / 1.0)
        device = f"{_who_keeps(ev)} (no GPU: the CPU is the device)"
    calm_input = clamp((INPUT_BOUND - wait) / INPUT_BOUND)
    confidence = step_confidence(ev) * (0.4 + 0.3 * busy + 0.3 * calm_input) if ev.wait_share is not None else 0.3
    evidence = {"data_wait_share": rounded(ev.wait_share), "gpu_util": rounded(ev.gpu_util),
                "cores_busy": rounded(ev.cores_busy), "cpu_count": ev.cpu_count, "copy_share": rounded(ev.copy_share)}
    if ev.gpu_sm_active is not None:
        evidence["gpu_sm_active"] = rounded(ev.gpu_sm_active)
    return Finding(ID, share, confidence, evidence, f"data is ready in time and {device}")


def _sm_activity(ev) -> str:
    """GPM's SM activity beside NVML's utilisation, where the GPU has GPM."""
    if ev.gpu_sm_active is None:
        return ""
    return f" ({ev.gpu_sm_active:.0%} of its SMs active, GPM)"


def _who_keeps(ev) -> str:
    """Whose CPU the figure is: the training process's own where its threads were read, else the
    job's, naming the workers that share it (the job's figure counts them too)."""
    if ev.training_cores is not None:
        return f"the training process keeps {ev.training_cores:.1f} of {ev.cpu_count} cores busy"
    workers = (ev.loader or {}).get("num_workers") or 0
    if workers:
        return (f"the job (the training process and {workers} DataLoader worker{'s' if workers != 1 else ''}) keeps "
                f"{ev.cores_busy or 0:.1f} of {ev.cpu_count} cores busy")
    return f"the training process keeps {ev.cores_busy or 0:.1f} of {ev.cpu_count} cores busy"


def words(label: str, finding) -> str:
    """The compute verdict names how rarely the steps waited for data: the reason it is compute."""
    wait = finding.evidence.get("data_wait_share")
    if wait is None:
        tail = ""
    elif wait < 0.005:
        tail = "; steps almost never wait for data (under 1% of step time)"
    else:
        tail = f"; only {wait:.0%} of each step waits for data"
    return f"{label}: {finding.reason}{tail}."


BOTTLENECK = Bottleneck(id=ID, label="Compute-bound", tier=FALLBACK, rules=(evaluate,), words=words)

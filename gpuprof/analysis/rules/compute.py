"""compute: the device is the limit; the input pipeline keeps up."""

from gpuprof.analysis.evidence import INPUT_BOUND
from gpuprof.analysis.rules import Finding, clamp, rounded, step_confidence


def evaluate(ev):
    wait = ev.wait_share or 0.0
    copy = ev.copy_share or 0.0
    share = clamp(1.0 - wait - copy)
    if ev.gpu:
        if ev.gpu_util is None or ev.gpu_util < 0.4:
            return None
        busy = clamp((ev.gpu_util - 0.4) / 0.5)
        device = f"the GPU is busy {ev.gpu_util:.0%} of the time"
    else:
        busy = clamp((ev.cores_busy or 0.0) / 1.0)
        device = f"the training process keeps {ev.cores_busy or 0:.1f} of {ev.cpu_count} cores busy (no GPU: the CPU is the device)"
    calm_input = clamp((INPUT_BOUND - wait) / INPUT_BOUND)
    confidence = step_confidence(ev) * (0.4 + 0.3 * busy + 0.3 * calm_input) if ev.wait_share is not None else 0.3
    return Finding("compute", share, confidence, {
        "data_wait_share": rounded(ev.wait_share), "gpu_util": rounded(ev.gpu_util),
        "cores_busy": rounded(ev.cores_busy), "cpu_count": ev.cpu_count, "copy_share": rounded(ev.copy_share),
    }, f"data is ready in time and {device}")

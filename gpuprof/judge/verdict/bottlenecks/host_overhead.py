"""host.overhead: the GPU idles although data is ready: Python, kernel launches, synchronisation.

The GPU figure is NVML's utilisation of the job's GPUs over the measured steps: the share of time no
kernel ran at all is time the host did not keep the device fed."""

from gpuprof.judge.verdict.bottleneck import FALLBACK, Bottleneck
from gpuprof.judge.verdict.evidence import INPUT_BOUND, TRANSFER_NOTABLE, Evidence
from gpuprof.judge.verdict.rules import Finding, clamp, rounded, step_confidence

ID = "host.overhead"

GPU_UTIL_HOST_BOUND = 0.5   # NVML utilisation under which the host, not the device, sets the pace
#: Confidence: the base just under the bound, rising by the span as utilisation falls by UTIL_SPAN
#: below it (full at 10%).
CONFIDENCE_BASE = 0.5
CONFIDENCE_SPAN = 0.4
UTIL_SPAN = 0.4


def evaluate(ev: Evidence):
    if not ev.gpu or ev.gpu_util is None or ev.gpu_util >= GPU_UTIL_HOST_BOUND:
        return None
    if (ev.wait_share or 0.0) >= INPUT_BOUND or (ev.copy_share or 0.0) >= TRANSFER_NOTABLE:
        return None
    share = clamp(1.0 - ev.gpu_util - (ev.wait_share or 0.0))
    below = clamp((GPU_UTIL_HOST_BOUND - ev.gpu_util) / UTIL_SPAN)
    confidence = step_confidence(ev) * (CONFIDENCE_BASE + CONFIDENCE_SPAN * below)
    return Finding(ID, share, confidence, {
        "gpu_util": rounded(ev.gpu_util), "data_wait_share": rounded(ev.wait_share),
        "copy_share": rounded(ev.copy_share), "cores_busy": rounded(ev.cores_busy),
    }, f"a kernel was running on the GPU only {ev.gpu_util:.0%} of the time while data is ready: the host "
       "(Python, kernel launches, synchronisation) sets the pace")


BOTTLENECK = Bottleneck(id=ID, label="Host-bound", tier=FALLBACK, rules=(evaluate,))

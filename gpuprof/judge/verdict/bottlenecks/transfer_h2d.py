"""transfer.h2d: host-to-device copies take a large share of the step.

The share is the copies' device time (CUDA events); the host's wait for earlier kernels inside a
blocking copy is the device's time, not the copy's, and never counts here."""

from gpuprof.judge.verdict.bottleneck import BY_SHARE, Bottleneck
from gpuprof.judge.verdict.evidence import TRANSFER_NOTABLE, Evidence
from gpuprof.judge.verdict.rules import Finding, clamp, rounded, step_confidence

ID = "transfer.h2d"

#: Confidence: how the copies were timed (the base with none timed on the device, plus the span with
#: all of them) times how large their share is (the base, plus the span from COPY_SHARE_FULL on).
TIMED_CONFIDENCE_BASE = 0.6
TIMED_CONFIDENCE_SPAN = 0.3
SHARE_CONFIDENCE_BASE = 0.7
SHARE_CONFIDENCE_SPAN = 0.3
COPY_SHARE_FULL = 0.5


def evaluate(ev: Evidence):
    if ev.copy_share is None or ev.copy_share < TRANSFER_NOTABLE:
        return None
    copies = ev.copies
    count = copies.get("count") or 0
    pageable = copies.get("pageable_bytes", 0) / copies["bytes"] if copies.get("bytes") else None
    on_device = copies["basis"] == "device" if copies.get("basis") else copies.get("timed") == count
    estimated = copies.get("estimated") or 0
    measured = (1.0 - estimated / count) if on_device and count else 0.0
    confidence = (step_confidence(ev) * (TIMED_CONFIDENCE_BASE + TIMED_CONFIDENCE_SPAN * measured)
                  * (SHARE_CONFIDENCE_BASE + SHARE_CONFIDENCE_SPAN * clamp(ev.copy_share / COPY_SHARE_FULL)))
    detail = f"{pageable:.0%} from pageable memory" if pageable is not None else "source memory unknown"
    if estimated and on_device:
        detail += f"; {estimated} of {count} copies estimated from the timed ones' throughput"
    elif not on_device:
        detail += "; host time of the calls, no copy was timed on the device"
    evidence = {
        "copy_share": rounded(ev.copy_share), "copies": copies.get("count"), "bytes": copies.get("bytes"),
        "pageable_share": rounded(pageable), "small_copies": copies.get("small"),
        "timed_by_cuda_events": on_device, "dtypes": copies.get("dtypes"),
    }
    if "estimated" in copies:
        evidence.update(estimated_copies=estimated, device_wait_share=copies.get("device_wait_share"))
    return Finding(ID, ev.copy_share, confidence, evidence,
                   f"host-to-device copies take {ev.copy_share:.0%} of the time ({detail})")


BOTTLENECK = Bottleneck(id=ID, label="Transfer-bound", tier=BY_SHARE, rules=(evaluate,), wins=lambda finding: finding.share >= TRANSFER_NOTABLE)

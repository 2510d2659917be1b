"""transfer.h2d: host-to-device copies take a large share of the step."""

from gpuprof.analysis.evidence import TRANSFER_NOTABLE
from gpuprof.analysis.rules import Finding, clamp, rounded, step_confidence


def evaluate(ev):
    if ev.copy_share is None or ev.copy_share < TRANSFER_NOTABLE:
        return None
    copies = ev.copies
    pageable = copies.get("pageable_bytes", 0) / copies["bytes"] if copies.get("bytes") else None
    timed = copies.get("timed") == copies.get("count")
    confidence = step_confidence(ev) * (0.9 if timed else 0.6) * (0.7 + 0.3 * clamp(ev.copy_share / 0.5))
    detail = f"{pageable:.0%} from pageable memory" if pageable is not None else "source memory unknown"
    return Finding("transfer.h2d", ev.copy_share, confidence, {
        "copy_share": rounded(ev.copy_share), "copies": copies.get("count"), "bytes": copies.get("bytes"),
        "pageable_share": rounded(pageable), "small_copies": copies.get("small"),
        "timed_by_cuda_events": timed, "dtypes": copies.get("dtypes"),
    }, f"host-to-device copies take {ev.copy_share:.0%} of the time ({detail})")

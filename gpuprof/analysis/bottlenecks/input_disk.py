"""input.disk: waiting for data that is being read from storage."""

from gpuprof.analysis.bottleneck import BY_SHARE, Bottleneck
from gpuprof.analysis.evidence import INPUT_BOUND, INPUT_NOTABLE
from gpuprof.analysis.rules import Finding, clamp, step_confidence
from gpuprof.analysis.rules.inputs import input_evidence, kind_margin, producer_kind, waits_on, who

ID = "input.disk"


def evaluate(ev):
    if ev.wait_share is None or ev.wait_share < INPUT_NOTABLE or producer_kind(ev) != "disk":
        return None
    corroborated = (ev.iowait or 0) > 0.05 or (ev.io_pressure or 0) > 0.1 or (ev.disk_busy or 0) > 0.3
    user = ev.producer_user_ratio if ev.producer_user_ratio is not None else ev.producer_cpu_ratio
    confidence = step_confidence(ev) * (0.9 if corroborated else 0.75) * (0.7 + 0.3 * clamp(1 - user / 0.4))
    confidence *= 0.6 + 0.4 * clamp(kind_margin(ev) / 0.3)   # near the boundary of two kinds: less sure
    rate = (ev.producer_disk_rate or 0) / 1e6
    return Finding(ID, ev.wait_share, confidence, input_evidence(ev),
                   who(ev, f"waiting on disk reads ({rate:.0f} MB/s while producing)"))


BOTTLENECK = Bottleneck(id=ID, label="Input-bound (disk)", tier=BY_SHARE, rules=(evaluate,),
                        wins=lambda finding: finding.share >= INPUT_BOUND, words=waits_on)

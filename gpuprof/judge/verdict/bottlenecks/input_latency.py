"""input.latency: waiting for data while neither the CPU nor the disk is busy producing it
(a remote store, sleeps, locks)."""

from gpuprof.judge.verdict.bottleneck import BY_SHARE, Bottleneck
from gpuprof.judge.verdict.evidence import INPUT_BOUND, Evidence
from gpuprof.judge.verdict.rules import Finding, clamp, step_confidence
from gpuprof.judge.verdict.rules.inputs import (input_evidence, kind_margin, margin_confidence,
                                          waits_on, waits_on_producers, who)

ID = "input.latency"

#: Confidence: the base, rising by the span as the producers' CPU over wall falls by IDLE_CPU_SPAN
#: under IDLE_CPU (full at 5%).
CONFIDENCE_BASE = 0.55
CONFIDENCE_SPAN = 0.4
IDLE_CPU = 0.35
IDLE_CPU_SPAN = 0.3


def evaluate(ev: Evidence):
    found = waits_on_producers(ev, "latency")
    if found is None:
        return None
    wait, ratio = found
    idle = clamp((IDLE_CPU - ratio) / IDLE_CPU_SPAN)
    confidence = step_confidence(ev) * (CONFIDENCE_BASE + CONFIDENCE_SPAN * idle)
    confidence *= margin_confidence(kind_margin(ev))   # near the boundary of two kinds: less sure
    return Finding(ID, wait, confidence, input_evidence(ev),
                   who(ev, f"idle while producing ({ratio:.0%} CPU, little disk): "
                          "waiting on something slow (a remote store, a lock, a sleep)"))


BOTTLENECK = Bottleneck(id=ID, label="Input-bound (latency)", tier=BY_SHARE, rules=(evaluate,),
                        wins=lambda finding: finding.share >= INPUT_BOUND, words=waits_on)

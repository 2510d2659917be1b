"""input.cpu: waiting for data that the CPU is still preparing."""

from gpuprof.analysis.evidence import INPUT_NOTABLE
from gpuprof.analysis.rules import Finding, clamp, step_confidence
from gpuprof.analysis.rules.inputs import input_evidence, kind_margin, producer_kind, who


def evaluate(ev):
    if ev.wait_share is None or ev.wait_share < INPUT_NOTABLE or producer_kind(ev) != "cpu":
        return None
    ratio = ev.producer_cpu_ratio
    clarity = clamp((ratio - 0.35) / 0.5)
    confidence = step_confidence(ev) * (0.55 + 0.45 * clarity)
    confidence *= 0.6 + 0.4 * clamp(kind_margin(ev) / 0.3)   # near the boundary of two kinds: less sure
    state = "CPU-bound" if not ev.contended else "CPU-bound with every core in use"
    return Finding("input.cpu", ev.wait_share, confidence, input_evidence(ev), who(ev, state))

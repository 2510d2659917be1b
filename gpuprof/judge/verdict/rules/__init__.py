"""What the bottleneck rules (gpuprof.judge.verdict.bottlenecks) share: a Finding, and how sure a share is."""

from dataclasses import dataclass, field

from gpuprof.stats.digits import REPORT_DIGITS
from gpuprof.judge.verdict.evidence import MIN_STEPS, Evidence


@dataclass
class Finding:
    bottleneck: str
    share: float                # share of step time this bottleneck accounts for, 0..1
    confidence: float           # 0..1
    evidence: dict = field(default_factory=dict)
    reason: str = ""            # a clause for the one-sentence verdict

    def to_dict(self) -> dict:
        return {"bottleneck": self.bottleneck, "share": round(self.share, REPORT_DIGITS),
                "confidence": round(self.confidence, 2), "evidence": self.evidence, "reason": self.reason}


#: A guard for a divisor that may reach zero (kept here, not in the estimating modules, which write
#: no float of their own beside the priors: tests/unit/test_priors.py).
TINY = 1e-9


def clamp(value: float, low: float = 0.0, high: float = 1.0) -> float:
    return max(low, min(high, value))


#: An attach samples stacks from outside: shares without step counts, batch facts or copy sizes.
ATTACHED_CONFIDENCE = 0.7
NO_STEPS_CONFIDENCE = 0.3       # no measured step for a share to rest on
#: Measured steps' confidence: the floor at none, rising by the span to the ceiling at MIN_STEPS steps
#: (a share measured over enough steps is still a measurement, never certain).
STEPS_CONFIDENCE_FLOOR = 0.5
STEPS_CONFIDENCE_SPAN = 0.45
STEPS_CONFIDENCE_CEILING = 0.95


def step_confidence(ev: Evidence) -> float:
    """Fewer than MIN_STEPS measured steps: less trust in any share."""
    if ev.attached:
        return ATTACHED_CONFIDENCE
    if not ev.measured_steps:
        return NO_STEPS_CONFIDENCE
    return clamp(STEPS_CONFIDENCE_FLOOR + STEPS_CONFIDENCE_SPAN * ev.measured_steps / MIN_STEPS,
                 STEPS_CONFIDENCE_FLOOR, STEPS_CONFIDENCE_CEILING)


def rounded(value, digits: int = 3):
    return None if value is None else round(value, digits)

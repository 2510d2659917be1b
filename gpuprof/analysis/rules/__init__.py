"""What the bottleneck rules (gpuprof.analysis.bottlenecks) share: a Finding, and how sure a share is."""

from dataclasses import dataclass, field


@dataclass
class Finding:
    bottleneck: str
    share: float                # share of step time this bottleneck accounts for, 0..1
    confidence: float           # 0..1
    evidence: dict = field(default_factory=dict)
    reason: str = ""            # a clause for the one-sentence verdict

    def to_dict(self) -> dict:
        return {"bottleneck": self.bottleneck, "share": round(self.share, 4),
                "confidence": round(self.confidence, 2), "evidence": self.evidence, "reason": self.reason}


def clamp(value: float, low: float = 0.0, high: float = 1.0) -> float:
    return max(low, min(high, value))


#: An attach samples stacks from outside: shares without step counts, batch facts or copy sizes.
ATTACHED_CONFIDENCE = 0.7


def step_confidence(ev) -> float:
    """Fewer than MIN_STEPS measured steps: less trust in any share."""
    from gpuprof.analysis.evidence import MIN_STEPS
    if ev.attached:
        return ATTACHED_CONFIDENCE
    if not ev.measured_steps:
        return 0.3
    return clamp(0.5 + 0.45 * ev.measured_steps / MIN_STEPS, 0.5, 0.95)


def rounded(value, digits: int = 3):
    return None if value is None else round(value, digits)

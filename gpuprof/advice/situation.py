"""What the advice reads besides the evidence: the verdict and the run's other findings, as data.

A Situation hands the fixes the verdict and the findings as declared data, and answers the questions several fixes ask (which input bottleneck this
run has, whether the input's cost is a share of a contended CPU rather than a wait)."""

from dataclasses import dataclass, field

from gpuprof.advice.model import cheaper_producer, cheaper_share
from gpuprof.advice.fix import pct
from gpuprof.analysis import bottlenecks

INPUT = bottlenecks.INPUT_IDS


@dataclass(frozen=True)
class Situation:
    verdict: dict
    findings: tuple = field(default_factory=tuple)

    @property
    def bottleneck(self):
        return self.verdict.get("bottleneck")

    @property
    def share(self):
        return self.verdict.get("share")

    @property
    def input_kind(self):
        """The input bottleneck this run has (verdict or notable finding), else None."""
        if self.bottleneck in INPUT:
            return self.bottleneck
        for finding in self.findings:
            if finding["bottleneck"] in INPUT:
                return finding["bottleneck"]
        return None

    @property
    def contended(self):
        """The input finding when it is the contended kind (workers and training share the CPU), else None."""
        for finding in (self.verdict,) + tuple(self.findings):
            if (finding.get("evidence") or {}).get("contended"):
                return finding
        return None

    def cheaper_input(self, ev, k: float) -> float:
        """Speed-up from making each batch k times cheaper. When workers and training share the CPU,
        the input's cost is its share of the CPU, not a wait: saving (1 - 1/k) of that share."""
        contended = self.contended
        if contended is not None:
            return cheaper_share(contended.get("share") or 0.0, 1.0 - 1.0 / k)
        return cheaper_producer(ev, k)

    def input_cost(self, ev) -> str:
        """What the input costs, in the terms the verdict measured it: a wait, or a share of the CPU."""
        contended = self.contended
        if contended is not None:
            return f"making batches takes {pct(contended.get('share') or 0)} of the job's CPU, which training needs"
        return f"{pct(ev.wait_share)} of each step waits for data"

"""What the advice reads besides the evidence: the verdict and the run's other findings, as data.

A Situation hands the fixes the verdict and the findings as declared data, and answers the questions several fixes ask (which input bottleneck this
run has, whether the input's cost is a share of a contended CPU rather than a wait)."""

from dataclasses import dataclass, field

from gpuprof.advise.model import cheaper_producer, cheaper_share
from gpuprof.advise.fix import pct
from gpuprof.judge.verdict import bottlenecks
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
        if self.input_costs_cores is not None:
            return bottlenecks.INPUT_CPU.id
        return None

    @property
    def input_costs_cores(self):
        """On a compute verdict whose input takes a notable share of the cores the step uses
        (gpuprof.judge.verdict.input_cost), the input's cost as a contended input finding: its share is
        the part of each step the input made free would save. Else None."""
        evidence = self.verdict.get("evidence") or {}
        if self.bottleneck != bottlenecks.COMPUTE.id or evidence.get("input_cost_share") is None:
            return None
        return {"bottleneck": bottlenecks.INPUT_CPU.id, "share": evidence["input_cost_share"],
                "evidence": dict(evidence, contended=True)}

    @property
    def contended(self):
        """The input finding when it is the contended kind (workers and training share the CPU), else None."""
        for finding in (self.verdict,) + tuple(self.findings):
            if (finding.get("evidence") or {}).get("contended"):
                return finding
        return self.input_costs_cores

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
        evidence = (contended or {}).get("evidence") or {}
        if evidence.get("input_cost_share") is not None:
            needs = ("the thread that launches the GPU's kernels waits for a core while they run" if ev.gpu
                     else "cores the training needs")
            return (f"steps hardly wait for data, but the workers use {pct(evidence.get('input_cpu_share') or 0)} of "
                    f"the job's CPU: {needs}")
        if contended is not None:
            return f"making batches takes {pct(contended.get('share') or 0)} of the job's CPU, which training needs"
        return f"{pct(ev.wait_share)} of each step waits for data"

"""What a bottleneck is: everything gpuprof knows about one kind of verdict, declared in one place.

A bottleneck module (gpuprof.judge.verdict.bottlenecks.<kind>) builds one `Bottleneck`: its id and the
label its headline starts with; the rules that find it; how it wins over the others (its tier); and
its words. `classify` reads these declarations and names no bottleneck of its own.

Tiers, in the order they win:
- LEADS: a rule over the whole run (its sections and the step verdict) that replaces the step
  verdict when it fires: the run died of a memory failure, a rank waits on the others. Leading
  bottlenecks are tried in registry order.
- BY_SHARE: a removable bottleneck (the input, the copies): among the findings that clear their
  own bound, the largest share wins.
- FALLBACK: says only that nothing else is the limit; the first in registry order that has a
  finding wins when no removable one does.
- BESIDE: time spent outside the training steps (evaluation passes): its findings are reported
  beside the verdict and never become it, so the step verdict speaks for training alone."""

from dataclasses import dataclass
from typing import Callable, Optional

LEADS, BY_SHARE, FALLBACK = "leads", "by share", "fallback"
BESIDE = "beside"


@dataclass(frozen=True)
class Bottleneck:
    id: str
    label: str                                  # the headline's first words: "Input-bound (disk)"
    tier: str                                   # LEADS, BY_SHARE, FALLBACK or BESIDE
    rules: tuple = ()                           # evaluate(evidence) -> Finding | None, for the step verdict
    wins: Optional[Callable] = None             # BY_SHARE: (finding) -> whether its share makes it the verdict
    leads: Optional[Callable] = None            # LEADS: (sections, step verdict) -> verdict dict | None
    words: Optional[Callable] = None            # (label, finding) -> the summary; default "Label: reason."

    def summary(self, finding) -> str:
        """The one-sentence verdict for a finding of this bottleneck."""
        if self.words is not None:
            return self.words(self.label, finding)
        return f"{self.label}: {finding.reason}."

"""What a fix is: everything gpuprof knows about one change a user can make, declared in one place.

A fix module (gpuprof.advise.fixes.<id>) builds one `Fix`: its id, title and effort; the
bottlenecks it addresses; the traits ranking reads (keeps training the same or changes what the
model trains on, a setting `try` can apply or a code change, needs a GPU, leads when it applies);
`build`, which decides from the evidence whether it applies and returns its estimate, the reason
that gives the same number, and the change at the user's line; and where `try` can apply it, the
change keys it sets (gpuprof.record.changes) and the line that keeps a measured change."""

from dataclasses import dataclass
from typing import Callable, Optional

MIN_GAIN = 1.05      # an estimate below this is no fix worth showing


@dataclass(frozen=True)
class Fix:
    id: str
    title: str
    effort: int                       # 1 a setting, 2 a few lines, 3 a redesign
    addresses: tuple                  # bottleneck ids
    build: Callable                   # (evidence, situation) -> dict | None
    changes_training: bool = False    # changes what the model trains on (fewer fresh samples, another batch)
    needs_gpu: bool = False           # offered only when the run had a GPU
    leads: bool = False               # goes first when its build says why ("first"): others are measured through it
    yields_to_larger: bool = False    # a lead over unestimated fixes, which a clearly larger estimate passes
    try_keys: tuple = ()              # change keys `try` applies for it; () when it needs a code change
    keep: Optional[Callable] = None   # (settings, loader, framework) -> how to keep what `try` measured
    variant_label: Optional[Callable] = None     # (change) -> try's label for it, when not "ID: k=v"
    variant_caution: Optional[Callable] = None   # (change) -> what try's variant changes beside speed
    # (report) -> the change `try --fix ID` makes when the user names the fix and the baseline did not
    # advise it; None where the change needs the advice's own figures
    unadvised: Optional[Callable] = None

    @property
    def is_setting(self) -> bool:
        """A change `gpuprof try --fix` makes as it is, with no edit to the program."""
        return bool(self.try_keys)


@dataclass(frozen=True)
class MemoryFix:
    """A fix for a run that ran out of memory: measured in bytes freed, not in speed."""
    id: str
    title: str
    effort: int
    build: Callable                   # (memory section, batch size) -> dict(frees, detail, snippet) | None


def pct(x) -> str:
    return f"{x:.0%}"


@dataclass(frozen=True)
class SharedMemoryFix:
    """A fix for DataLoader workers that ran out of shared memory: about where batches travel
    between processes, so neither a speed-up nor bytes of the model are its measure."""
    id: str
    title: str
    effort: int
    build: Callable                   # (shm facts, loader section) -> dict(detail, snippet)

"""What one prior is: a number an estimate rests on that the run does not measure (an assumed
saving, an efficiency, a bound, a threshold calibrated on a program, a rate measured once on one
machine), kept with where it came from, what the estimate does with it and what the estimate loses
without it, so that a figure no run can check is never a bare literal in the code."""

from dataclasses import dataclass
from typing import Any, Optional

#: What kind of number a prior is, as the table names it.
KINDS = ("assumed saving", "efficiency", "bound", "threshold", "measured cost", "measured rate", "ranking prior")


@dataclass(frozen=True)
class Prior:
    id: str
    kind: str                          # one of KINDS
    source: str                        # the program, machine and date it came from, or the published figure and where
    used_for: str                      # what the estimate does with it
    without_it: str                    # how the estimate degrades without it
    value: Any = None                  # the central figure (a number, or a table of them); None: only its ends
    low: Optional[float] = None        # the pessimistic end, where it has one
    high: Optional[float] = None       # the optimistic end, where it has one
    unit: str = ""                     # "x" (times faster or cheaper), "s", "B/s", "of ..." (a share of what)
    programs: tuple = ()               # the programs it was fitted on or checked against
    needs_second_program: bool = False     # only one program backs it: check it on another before trusting it further

    def ends(self) -> tuple[float, float]:
        """(low, high), for a prior that states both ends."""
        if self.low is None or self.high is None:
            raise ValueError(f"prior {self.id} states no ends")
        return self.low, self.high

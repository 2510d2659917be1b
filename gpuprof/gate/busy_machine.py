"""Which gate checks a busy machine leaves decided.

Other processes that keep a notable share of the cores busy (the report's `system.others`) slow the
job down: its steps take longer and its throughput falls. A check that such slowing could only have
made harder to pass, and that passed all the same, passes: on a quiet machine it would have passed
too. Every other judged check measured on a busy machine is `disturbed`, not decided: its failure
may be the load's, or the load may have helped it pass (a data-wait share or a GPU utilisation moves
either way; a slowed baseline makes a regression look smaller)."""

from typing import Mapping, Optional

from gpuprof.judge.sections.machine_load import busy_words
from gpuprof.gate.statuses import DISTURBED, FAIL, PASS

RUN, BASELINE = "the run", "the baseline"

#: The checks a busy machine can only make harder to pass, with the side whose load does so: an upper
#: bound on the run's step time, a lower bound on its speed. For the regression check only the run's
#: load makes it harder; the baseline's load makes it easier.
HARDER_WHEN_BUSY = {
    "max_p90_step": {RUN},
    "min_samples_per_second": {RUN},
    "min_mfu": {RUN},
    "max_regression": {RUN},
}

#: The checks that read the baseline as well as the run: a busy baseline touches only these.
READS_BASELINE = {"max_regression"}


def judge_on_busy_machine(result, report: Mapping, baseline: Optional[Mapping] = None) -> None:
    """Marks `disturbed` each passed or failed check that a busy run or baseline could have moved
    towards its result, notes the load on the checks it leaves passed, and says what was busy in
    `result.disturbed`."""
    busy = {which: others for which, others in ((RUN, _others(report)), (BASELINE, _others(baseline)))
            if others.get("notable")}
    touched = False
    for check in result.checks:
        sides = {which for which in busy if which == RUN or check.name in READS_BASELINE}
        if not sides or check.status not in (PASS, FAIL):
            continue
        touched = True
        if check.status == PASS and sides <= HARDER_WHEN_BUSY.get(check.name, set()):
            check.detail = _join("passed on a busy machine, which could only have made it harder", check.detail)
        else:
            check.detail = _join(f"{check.status} as measured, on a busy machine", check.detail)
            check.status = DISTURBED
    if touched:
        words = ", ".join(f"{busy_words(others)} while {which} was measured" for which, others in busy.items())
        undecided = any(check.status == DISTURBED for check in result.checks)
        result.disturbed = words + (": rerun on a quiet machine" if undecided else
                                    "; what passed could only have passed more easily on a quiet machine")


def _others(report) -> dict:
    return (((report or {}).get("system") or {}).get("others")) or {}


def _join(note: str, detail: str) -> str:
    return f"{note}; {detail}" if detail else note

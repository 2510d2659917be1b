"""Every speed fix answers with a range, or says in one line why it has none: run on a representative
run, a build that estimates gives its figure inside its own ends (where it states them) and inside the
range ranking computes from it; one that does not estimate says "not estimated (why)" in its why."""

import pytest

from gpuprof.advise import fixes
from gpuprof.advise.model import estimate_range
from gpuprof.advise.situation import INPUT
from tests.unit.fixes.representative import CASES

#: The words a reason for no estimate starts from.
NOT_ESTIMATED = ("not estimated", "cannot be measured")
#: Fixes whose reason is not yet in their why: wording it changes a golden report (tests/golden/expected),
#: which this change leaves as it is. Each must fail the check until its why says it (strict).
#: Fixes known to have no worded reason yet (an xfail that turns into a failure once fixed): none.
REASON_NOT_WORDED = {}


def test_every_speed_fix_has_a_representative_case():
    assert sorted(CASES) == sorted(fix.id for fix in fixes.SPEED)


def cases():
    for fix_id, runs in CASES.items():
        for label, ev, s in runs:
            marks = [pytest.mark.xfail(strict=True, reason=REASON_NOT_WORDED[fix_id])] \
                if fix_id in REASON_NOT_WORDED else []
            yield pytest.param(fix_id, ev, s, id=f"{fix_id}: {label}", marks=marks)


@pytest.mark.parametrize("fix_id,ev,s", list(cases()))
def test_a_fix_gives_a_range_or_one_line_on_why_it_cannot(fix_id, ev, s):
    fix = fixes.get(fix_id)
    built = fix.build(ev, s)
    assert built, f"{fix_id}: the representative case does not apply"
    central = built.get("estimated_speedup")
    if central is None:
        why = built.get("why") or ""
        assert "\n" not in why and any(words in why.lower() for words in NOT_ESTIMATED), why
        return
    low, high = built.get("estimate_low"), built.get("estimate_high")
    assert (low is None or low <= central) and (high is None or central <= high), (low, central, high)
    ranked_low, ranked_high = estimate_range(ev, central, low, high,
                                             relieves_compute=any(b in INPUT for b in fix.addresses))
    assert ranked_low <= central <= ranked_high

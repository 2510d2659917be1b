"""Turn the registered fixes into ranked advice for one run.

Each estimate is computed once, here: a range (`estimate`: low and high) from the fix's figure at
the run's measured inputs and the step model's uncertainty (advice.model.estimate_range), the fix's
own ends where its build states them (`estimate_low`, `estimate_high`). `estimated_speedup` is the
range's midpoint, and it is the one number ranking reads; every renderer, `try` and the gate show
the same range.

The order, by the traits each fix declares: fixes addressing the verdict first; among them those
that keep training the same before those that change what the model trains on; then by the
estimate's midpoint, then by effort (midpoints within 5% of each other count as equal). A worthwhile setting
that `try` measures as it is goes ahead of code rewrites whose estimate rests on an assumed saving,
where its range reaches their midpoint (never past a rewrite whose range lies mostly above it);
a fix that leads (DataParallel -> DDP) goes first, saying why. An estimate clearly larger (beyond
the near tie) than a prior, or than a lead over unestimated fixes, goes ahead of it; and no fix
stays below one whose whole range lies above its own, but for a lead whose reason is about the
others' figures (measured through it, or a bound); a fix worth no gain at its figure (under 1.05x,
or a prior of 1.0) goes after every fix that gains; each fix that moved says why."""

import math

from gpuprof.advise import fixes
from gpuprof.advise.fix import MIN_GAIN
from gpuprof.advise.model import TINY, estimate_range
from gpuprof.advise.situation import INPUT, Situation
from gpuprof.advise.wording import range_words
from gpuprof.judge.verdict import bottlenecks
from gpuprof.judge.verdict.bottleneck import BESIDE


def advise(ev, verdict: dict, findings=()) -> list:
    """Fixes that apply to this run, ranked, each estimate a range (low rounded down, high up)."""
    situation = Situation(verdict=verdict, findings=tuple(findings))
    out = []
    for fix in fixes.SPEED:
        if fix.needs_gpu and not ev.gpu:
            continue
        try:
            built = fix.build(ev, situation)
        except (ArithmeticError, KeyError, TypeError, ValueError):
            built = None
        if not built:
            continue
        estimate = built.get("estimated_speedup")
        advice = {"id": fix.id, "title": fix.title, "estimated_speedup": None,
                  "where": built.get("where"), "detail": built.get("detail"), "snippet": built.get("snippet"),
                  "why": built.get("why"), "change": built.get("change"), "effort": fix.effort,
                  "addresses": list(fix.addresses)}
        if estimate is not None:
            low, high = estimate_range(ev, estimate, built.get("estimate_low"), built.get("estimate_high"),
                                       relieves_compute=any(b in INPUT for b in fix.addresses))
            advice = with_range(advice, low, high)
        if estimate is None and built.get("prior") is not None:
            advice["prior"] = round(built["prior"], 2)    # not estimated: ranks by a stated prior until measured
        if built.get("first"):
            advice["ranked_by"] = built["first"]
        out.append(advice)
    bottleneck = situation.bottleneck
    if bottleneck == bottlenecks.COMPUTE.id:
        # The pipeline keeps up: fixes for a wait that is not the limit would promise gains the
        # device cannot deliver. Where the input still costs the step something (its producers take
        # cores the step uses, or a notable wait beside the verdict), its fixes stay, after the
        # compute fixes and none above the input made free.
        free = _input_made_free(situation, verdict)
        out = [a for a in out if bottleneck in a["addresses"] or _beside(a)
               or (free is not None and any(b in INPUT for b in a["addresses"]))]
        if free is not None:
            out = [capped(a, free) if bottleneck not in a["addresses"] else a for a in out]
    out.sort(key=lambda a: (bottleneck not in a["addresses"], _trait(a, "changes_training"),
                            -(a["estimated_speedup"] or a.get("prior") or 1.0), a["effort"]))
    ranked = _settings_before_rewrites(_prefer_less_effort_among_near_ties(out, bottleneck), bottleneck)
    leading = [a for a in ranked if a.get("ranked_by") and _trait(a, "leads")]
    ranked = leading + [a for a in ranked if not (a.get("ranked_by") and _trait(a, "leads"))]
    ranked = _whole_range_above_first(_clearly_larger_before_traits(ranked, bottleneck))
    return _unestimated_ahead_say_why(_no_gain_last(ranked), bottleneck)


def _no_gain_last(ranked: list) -> list:
    """A fix worth less than MIN_GAIN at its figure (its midpoint, or the prior it ranks by: compile
    on a CPU) goes after every fix worth more, whatever the tier: tiers order fixes that gain. A fix
    with neither keeps its place."""
    def worth(item):
        return item.get("estimated_speedup") or item.get("prior")

    gaining = [a for a in ranked if worth(a) is None or worth(a) >= MIN_GAIN or _holds_lead(a)]
    return gaining + [a for a in ranked if a not in gaining]


def _span(item: dict):
    """(low, high) of an item's estimate, or None for a fix with no range (a prior ranks it)."""
    estimate = item.get("estimate") or {}
    if estimate.get("low") is not None and estimate.get("high") is not None:
        return estimate["low"], estimate["high"]
    return None


def _whole_range_above_first(ranked: list) -> list:
    """No fix stays below another whose whole range lies above its own: whatever placed it there
    (tiers, settings first), the higher range goes ahead of it, saying why. A fix that
    leads keeps its place, its `first` saying why (the others are measured through it, or their
    figure is a bound no rewrite reaches)."""
    ranked = list(ranked)
    moved = True
    while moved:
        moved = False
        for i, above in enumerate(ranked):
            span = _span(above)
            if span is None or _holds_lead(above):
                continue
            higher = next((b for b in ranked[i + 1:] if _span(b) and _span(b)[0] > span[1]), None)
            if higher is None:
                continue
            _move_ahead(ranked, higher, above)
            higher["ranked_by"] = f"ahead of {above['id']} ({_span_words(above)}): its whole range lies above that one's"
            moved = True
            break
    return ranked


def _holds_lead(item: dict) -> bool:
    return bool(item.get("ranked_by")) and item["ranked_by"].startswith("first") and _trait(item, "leads") \
        and not _trait(item, "yields_to_larger")


def _span_words(item: dict) -> str:
    if item.get("estimate"):
        return range_words(item)
    return f"a prior of {item['prior']:.2f}x" if item.get("prior") is not None else "not estimated"


def _clearly_larger_before_traits(ranked: list, bottleneck) -> list:
    """An estimated fix of the verdict whose midpoint is clearly (beyond the near tie) above that of
    a fix ranked before it by a trait alone (a lead over unestimated fixes, or a prior that ranks an
    unestimated fix) goes ahead of it: a trait orders fixes of like worth, not a smaller gain before a
    larger one. Other leads stay first, and a fix that changes what the model trains on stays after
    those that keep it (but for a whole range above theirs)."""
    ranked = list(ranked)
    for item in [a for a in ranked if a.get("estimate") and bottleneck in a["addresses"]]:
        index = ranked.index(item)
        passed = [a for a in ranked[:index] if bottleneck in a["addresses"] and _by_trait_below(a, item)]
        if not passed:
            continue
        _move_ahead(ranked, item, passed[0])
        item["ranked_by"] = (f"ahead of {passed[0]['id']} ({_span_words(passed[0])}): a clearly larger estimate, "
                             "where that fix stood first by a trait, not by a larger gain")
    return ranked


def _by_trait_below(above: dict, item: dict) -> bool:
    """`above` stands before `item` by a trait, with a midpoint (or prior) clearly below item's."""
    worth = above.get("estimated_speedup") or above.get("prior") or 1.0
    if worth * NEAR_TIE >= item["estimated_speedup"] or _holds_lead(above):
        return False
    if _trait(item, "changes_training") and not _trait(above, "changes_training"):
        return False        # keeping training the same is a tier, not a trait of like worth
    by_lead = bool(above.get("ranked_by")) and _trait(above, "leads")
    by_prior = above.get("estimate") is None and above.get("prior") is not None
    return by_lead or by_prior


#: A notable wait beside a compute verdict counts as at most this share of the step (the input made
#: free then buys at most 20x).
MOST_WAIT_SHARE = 0.95


def _input_made_free(situation, verdict: dict):
    """Under a compute verdict, the speed-up of the input made free where the input still costs the
    step something, else None: the compute verdict's own figure where the producers take cores the
    step uses; 1 / (1 - w) for a notable input wait w beside the verdict (a collator tokenizing in
    the training process: 18% of each step is time the step loses as surely)."""
    if situation.input_costs_cores is not None:
        return (verdict.get("evidence") or {}).get("input_free_high")
    waited = next((f for f in situation.findings if f.get("bottleneck") in INPUT and f.get("share")), None)
    if waited is None:
        return None
    return 1.0 / max(1.0 - min(waited["share"], MOST_WAIT_SHARE), TINY)


def with_range(item: dict, low: float, high: float) -> dict:
    """The item with its estimate as a range (two decimals, low down and high up, so that the
    printed range holds the computed one) and `estimated_speedup` its midpoint."""
    low, high = math.floor(low * 100) / 100, math.ceil(high * 100) / 100
    return dict(item, estimated_speedup=round((low + high) / 2, 2), estimate={"low": low, "high": high})


def capped(item: dict, bound: float) -> dict:
    """The item with its estimate no higher than `bound` (a speed-up something else limits)."""
    estimate = item.get("estimate") or {}
    if item.get("estimated_speedup") is None or estimate.get("high", item["estimated_speedup"]) <= bound:
        return item
    return with_range(item, min(estimate.get("low", bound), bound), bound)


def _beside(item: dict) -> bool:
    """A fix for time spent beside the training steps (evaluation): its gain does not depend on the
    steps' own limit."""
    return any((bottlenecks.get(b) is not None and bottlenecks.get(b).tier == BESIDE) for b in item["addresses"])


def _trait(item: dict, name: str) -> bool:
    fix = fixes.get(item["id"])
    return bool(fix is not None and getattr(fix, name))


#: A setting change (one `gpuprof try --fix` applies and measures as it is) with at least this
#: estimate goes ahead of code rewrites for the same bottleneck: the rewrites' estimates rest on an
#: assumed saving (e.g. producers made 2x cheaper), the setting's on this run's own figures. Measured on
#: this project's examples (docs/benchmarks.md), settings came within 1.4x of their estimates.
SETTING_LEADS = 1.2


def _settings_before_rewrites(advice: list, bottleneck) -> list:
    """Move each worthwhile setting change ahead of the code rewrites ranked before it."""
    ranked = list(advice)
    for item in list(ranked):
        if not _is_setting(item, bottleneck) or (item["estimated_speedup"] or 0.0) < SETTING_LEADS:
            continue
        index = ranked.index(item)
        passed = [a for a in ranked[:index] if _is_rewrite(a, bottleneck) and _reaches(item, a)]
        if not passed:
            continue
        _move_ahead(ranked, item, passed[0])
        item["ranked_by"] = (f"ahead of {passed[0]['id']} ({range_words(passed[0])}): a setting "
                             "that `gpuprof try --fix` measures as it is, where that code change's estimate rests "
                             "on an assumed saving")
    return ranked


def _move_ahead(ranked: list, item: dict, ahead_of: dict) -> None:
    """Put `item` just before `ahead_of` in the ranking."""
    ranked.remove(item)
    ranked.insert(ranked.index(ahead_of), item)


def _reaches(setting: dict, rewrite: dict) -> bool:
    """A setting may go ahead of a rewrite only where its range reaches the rewrite's midpoint: a
    rewrite whose range lies mostly above the setting's stays ahead of it. (examples/
    short_steps_tabular.py: num-workers 1.08-1.38x, mid 1.23, stays behind cache-preprocessed
    1.25-2.48x; a held-out audio pipeline's num-workers, moved ahead of a feature cache, measured
    1.0x where the cache measured 2.8-3.4x.)"""
    high = (setting.get("estimate") or {}).get("high", setting.get("estimated_speedup") or 0.0)
    return high >= (rewrite.get("estimated_speedup") or 0.0)


def _is_setting(item: dict, bottleneck) -> bool:
    return _trait(item, "is_setting") and bottleneck in item["addresses"] and not _trait(item, "changes_training")


def _is_rewrite(item: dict, bottleneck) -> bool:
    return not _trait(item, "is_setting") and bottleneck in item["addresses"] \
        and not _trait(item, "changes_training") and not _trait(item, "leads")


def _unestimated_ahead_say_why(ranked: list, bottleneck) -> list:
    """A fix without an estimate that stands above an estimated one of its group says why in
    `ranked_by`: its prior ranks above that estimate until `gpuprof try` measures it, or it keeps
    training the same and the estimated fix does not. Said here, where the order is made (a fix's
    own words cannot know where it lands)."""
    for index, item in enumerate(ranked):
        if item["estimated_speedup"] is not None or item.get("prior") is None or item.get("ranked_by"):
            continue
        below = next((b for b in ranked[index + 1:] if b["estimated_speedup"] is not None
                      and (bottleneck in b["addresses"]) == (bottleneck in item["addresses"])), None)
        if below is None:
            continue
        if _trait(below, "changes_training") and not _trait(item, "changes_training"):
            why = "it keeps training the same, which that fix does not"
        else:
            why = f"not estimated, it ranks by a prior of {item['prior']:.2f}x until it is measured"
        item["ranked_by"] = f"ahead of {below['id']} ({range_words(below)}): {why}"
    return ranked


NEAR_TIE = 1.05     # estimates this close are within their own uncertainty


def _prefer_less_effort_among_near_ties(advice: list, bottleneck) -> list:
    """Estimates within 5% of each other count as equal: the fix with less effort goes first."""
    ranked = list(advice)
    changed = True
    while changed:
        changed = False
        for i in range(len(ranked) - 1):
            a, b = ranked[i], ranked[i + 1]
            same_group = (bottleneck in a["addresses"]) == (bottleneck in b["addresses"]) and \
                _trait(a, "changes_training") == _trait(b, "changes_training")
            if a["estimated_speedup"] is None or b["estimated_speedup"] is None:
                continue
            if same_group and b["effort"] < a["effort"] and b["estimated_speedup"] * NEAR_TIE >= a["estimated_speedup"]:
                ranked[i], ranked[i + 1] = b, a
                b["ranked_by"] = (f"ahead of {a['id']} ({range_words(a)}): estimates within "
                                  f"{NEAR_TIE - 1:.0%} of each other go to the one with less effort")
                changed = True
    return ranked

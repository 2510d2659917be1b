"""Turn the catalogue into ranked advice for one run."""

import math

from gpuprof.advice.catalogue import CATALOGUE


def advise(ev, verdict: dict, findings=()) -> list:
    """Fixes that apply, ranked: those addressing the verdict first, then by estimated speed-up,
    then by effort (estimates within 5% of each other count as equal). Estimates are rounded down
    so that none exceeds its own bound."""
    context = dict(verdict, _findings=list(findings))
    out = []
    for entry in CATALOGUE:
        try:
            built = entry["build"](ev, context)
        except (ArithmeticError, KeyError, TypeError, ValueError):
            built = None
        if not built:
            continue
        estimate = built.get("estimated_speedup")
        advice = {"id": entry["id"], "title": entry["title"],
                  "estimated_speedup": math.floor(estimate * 100) / 100 if estimate is not None else None,
                  "where": built.get("where"), "detail": built.get("detail"), "snippet": built.get("snippet"),
                  "why": built.get("why"), "change": built.get("change"), "effort": entry["effort"], "addresses": list(entry["targets"])}
        if built.get("first"):
            advice["ranked_by"] = built["first"]
        out.append(advice)
    bottleneck = verdict.get("bottleneck")
    if bottleneck == "compute":
        # The pipeline keeps up: fixes for a wait that is not the limit would promise gains the
        # device cannot deliver. A notable wait still shows as a secondary finding.
        out = [a for a in out if bottleneck in a["addresses"]]
    out.sort(key=lambda a: (bottleneck not in a["addresses"], a["id"] in CHANGES_TRAINING,
                            -(a["estimated_speedup"] or 1.0), a["effort"]))
    ranked = _settings_before_rewrites(_prefer_less_effort_among_near_ties(out, bottleneck), bottleneck)
    # A structural fix (DataParallel -> DDP) leads whatever the estimates: the others are measured
    # through a design that is itself the limit. It says so in ranked_by.
    return [a for a in ranked if a.get("ranked_by") and a["id"] in STRUCTURAL] + \
        [a for a in ranked if not (a.get("ranked_by") and a["id"] in STRUCTURAL)]


#: Fixes that go first when they apply (their build says why, as "first").
STRUCTURAL = ("ddp",)

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
        passed = [a for a in ranked[:index] if _is_rewrite(a, bottleneck)]
        if not passed:
            continue
        target = ranked.index(passed[0])
        ranked.remove(item)
        ranked.insert(target, item)
        item["ranked_by"] = (f"ahead of {passed[0]['id']} (up to {passed[0]['estimated_speedup']:.2f}x): a setting "
                             "that `gpuprof try --fix` measures as it is, where that code change's estimate rests "
                             "on an assumed saving")
    return ranked


def _is_setting(item: dict, bottleneck) -> bool:
    return bool(item.get("change")) and bottleneck in item["addresses"] and item["id"] not in CHANGES_TRAINING


def _is_rewrite(item: dict, bottleneck) -> bool:
    return not item.get("change") and bottleneck in item["addresses"] and item["id"] not in CHANGES_TRAINING \
        and item["id"] not in STRUCTURAL


NEAR_TIE = 1.05     # estimates this close are within their own uncertainty
#: Fixes that change what the model trains on (fewer fresh samples per step, another batch size): they
#: follow the fixes that keep training the same, whatever their estimate.
CHANGES_TRAINING = ("batch-echoing", "larger-batch", "ddp-no-sync")


def _prefer_less_effort_among_near_ties(advice: list, bottleneck) -> list:
    """Estimates within 5% of each other count as equal: the fix with less effort goes first."""
    ranked = list(advice)
    changed = True
    while changed:
        changed = False
        for i in range(len(ranked) - 1):
            a, b = ranked[i], ranked[i + 1]
            same_group = (bottleneck in a["addresses"]) == (bottleneck in b["addresses"]) and \
                (a["id"] in CHANGES_TRAINING) == (b["id"] in CHANGES_TRAINING)
            if a["estimated_speedup"] is None or b["estimated_speedup"] is None:
                continue
            if same_group and b["effort"] < a["effort"] and b["estimated_speedup"] * NEAR_TIE >= a["estimated_speedup"]:
                ranked[i], ranked[i + 1] = b, a
                b["ranked_by"] = (f"ahead of {a['id']} (up to {a['estimated_speedup']:.2f}x): estimates within "
                                  f"{NEAR_TIE - 1:.0%} of each other go to the one with less effort")
                changed = True
    return ranked

"""Turn the catalogue into ranked advice for one run."""

import math

from gpuprof.advice.catalogue import CATALOGUE


def advise(ev, verdict: dict, findings=()) -> list:
    """Fixes that apply, ranked: those addressing the verdict first, then by estimated speed-up,
    then by effort. Estimates are rounded down so that none exceeds its own bound."""
    context = dict(verdict, _findings=list(findings))
    out = []
    for entry in CATALOGUE:
        try:
            built = entry["build"](ev, context)
        except (ArithmeticError, KeyError, TypeError, ValueError):
            built = None
        if not built:
            continue
        advice = {"id": entry["id"], "title": entry["title"],
                  "estimated_speedup": math.floor(built["estimated_speedup"] * 100) / 100,
                  "where": built.get("where"), "detail": built.get("detail"), "snippet": built.get("snippet"),
                  "why": built.get("why"), "effort": entry["effort"], "addresses": list(entry["targets"])}
        out.append(advice)
    bottleneck = verdict.get("bottleneck")
    if bottleneck == "compute":
        # The pipeline keeps up: fixes for a wait that is not the limit would promise gains the
        # device cannot deliver. A notable wait still shows as a secondary finding.
        out = [a for a in out if bottleneck in a["addresses"]]
    out.sort(key=lambda a: (bottleneck not in a["addresses"], -a["estimated_speedup"], a["effort"]))
    return out

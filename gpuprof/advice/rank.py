"""Turn the catalogue into ranked advice for one run."""

from gpuprof.advice.catalogue import CATALOGUE


def advise(ev, verdict: dict, findings=()) -> list:
    """Fixes that apply, ranked: those addressing the verdict first, then by estimated speed-up,
    then by effort."""
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
                  "estimated_speedup": round(built["estimated_speedup"], 2),
                  "where": built.get("where"), "detail": built.get("detail"), "snippet": built.get("snippet"),
                  "why": built.get("why"), "effort": entry["effort"], "addresses": list(entry["targets"])}
        out.append(advice)
    bottleneck = verdict.get("bottleneck")
    out.sort(key=lambda a: (bottleneck not in a["addresses"], -a["estimated_speedup"], a["effort"]))
    return out
